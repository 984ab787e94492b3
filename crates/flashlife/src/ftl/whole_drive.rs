//! Operations over the whole drive: preconditioning in fast-forward (shared with the
//! open-channel host FTL through [`LogicalSpace`]), the oracle's final check, the size of
//! the simulator's state and the share of life used.

use super::*;
use trim::TrimCounters;

/// What the operations over the whole logical space (preconditioning, trims: `trim.rs`) need
/// from an FTL; the block FTL and the open-channel host FTL implement it.
pub(crate) trait LogicalSpace {
    fn logical_units(&self) -> u32;
    /// Has the drive died?
    fn died(&self) -> bool;
    /// The map, the oracle (if on) and the trim counters.
    fn map_parts(&mut self) -> (&Mapping, Option<&mut Oracle>, &mut TrimCounters);
    /// Forget the mapping of `lpn`, its old copy now invalid (`trim`: the host deallocated it).
    fn unmap_unit(&mut self, lpn: u32, trim: bool);
    fn scheduler_mut(&mut self) -> &mut dyn Scheduler;
    /// Write `units` units from `first` with their data ready at once (fast-forward).
    fn write_now(&mut self, first: u32, units: u32);
    /// Units per write while filling the drive.
    fn fill_units(&self) -> u32 {
        1
    }
    /// The next two units preconditioning writes (for prefetching; changes nothing).
    fn coming(&self, _next: [u32; 2]) {}

    /// Precondition in fast-forward: fill every logical unit once (`fill`), then overwrite
    /// `drive_writes` of the logical space uniformly at random, checking `stop` every few
    /// thousand writes (a few milliseconds) so that Ctrl-C is honoured during a long fill.
    /// Returns false if it stopped early.
    fn fill_and_overwrite(&mut self, fill: bool, drive_writes: f64, seed: u64, stop: &dyn Fn() -> bool) -> bool {
        let timing = self.scheduler_mut().timing();
        self.scheduler_mut().set_timing(false);
        let mut stopped = false;
        let units = self.logical_units();
        if fill {
            let step = self.fill_units().max(1);
            let (mut lpn, mut writes) = (0, 0u64);
            while lpn < units && !self.died() {
                if writes.is_multiple_of(CHECK_EVERY) && stop() {
                    stopped = true;
                    break;
                }
                let n = step.min(units - lpn);
                self.write_now(lpn, n);
                lpn += n;
                writes += 1;
            }
        }
        if !stopped {
            let n = (drive_writes * units as f64) as u64;
            stopped = !random_overwrites(seed, units, n, stop, |lpn, next| {
                if self.died() {
                    return false;
                }
                self.coming(next);
                self.write_now(lpn, 1);
                true
            });
        }
        self.scheduler_mut().set_timing(timing);
        !stopped
    }
}

impl LogicalSpace for Ftl {
    fn logical_units(&self) -> u32 {
        self.logical_units
    }
    fn died(&self) -> bool {
        self.death.is_some()
    }
    fn map_parts(&mut self) -> (&Mapping, Option<&mut Oracle>, &mut TrimCounters) {
        (&self.map, self.oracle.as_mut(), &mut self.trims)
    }
    fn unmap_unit(&mut self, lpn: u32, trim: bool) {
        if trim {
            if let Some(c) = self.cmt.as_mut() {
                c.trimmed(lpn);
            }
        }
        self.invalidate(lpn);
    }
    fn scheduler_mut(&mut self) -> &mut dyn Scheduler {
        self.sched.as_mut()
    }
    fn write_now(&mut self, first: u32, units: u32) {
        self.write(first, units, Done::START);
    }
    #[inline]
    fn coming(&self, next: [u32; 2]) {
        self.prefetch_map(next[1], 1);
        self.prefetch_slots(next[0], 1);
    }
}

impl Ftl {
    /// Check every logical unit against the oracle (end of a run). Returns the violation.
    pub fn verify_all(&mut self) -> Option<String> {
        let o = self.oracle.as_mut()?;
        // With a cached mapping table, its translation pages (hidden units after the host's) too.
        let units = self.logical_units + self.cmt.as_ref().map_or(0, |c| c.pages());
        o.check_all(&self.map, units);
        o.violation.clone()
    }

    /// Precondition in fast-forward: fill every logical unit once, then overwrite
    /// `drive_writes` of the logical space uniformly at random.
    pub fn precondition(&mut self, fill: bool, drive_writes: f64, seed: u64) {
        self.fill_and_overwrite(fill, drive_writes, seed, &|| false);
    }

    /// [`Ftl::precondition`], checking `stop` every few thousand writes; returns false if it
    /// stopped early.
    pub fn precondition_until(&mut self, fill: bool, drive_writes: f64, seed: u64, stop: &dyn Fn() -> bool) -> bool {
        self.fill_and_overwrite(fill, drive_writes, seed, stop)
    }

    /// Bytes of simulator state held per block, page and unit (maps, block tables, flash
    /// array), for the memory target of about 16 bytes per physical page.
    pub fn state_bytes(&self) -> u64 {
        let v = |n: usize, each: usize| (n * each) as u64;
        let blocks = self.geo.blocks() as usize;
        let per_block = std::mem::size_of::<u32>() * 2 // valid, capacity
            + std::mem::size_of::<BlockState>()
            + std::mem::size_of::<u64>() // closed_seq
            + 4 * 4 + 1; // flash array: erase count, write pointer, read counter, mode
        self.map.bytes()
            + v(blocks, per_block)
            + self.oracle.as_ref().map_or(0, |_| self.map.bytes())
            + self.cmt.as_ref().map_or(0, |c| c.bytes())
    }

    /// Mean erase count of the native mode's rated cycles: how far through its life the drive is.
    pub fn life_used(&self) -> f64 {
        self.flash.life_used()
    }
}

/// Every how many writes preconditioning asks whether to stop (a few milliseconds of work).
pub(crate) const CHECK_EVERY: u64 = 4096;

/// `n` uniform random overwrites of units `0..logical_units` from the seeded stream `seed`,
/// the preconditioning both FTLs share: `write(lpn, next)` writes one unit (`next` are the
/// two that follow, for prefetching), or returns false to end the loop (the drive died).
/// `stop` is asked every [`CHECK_EVERY`] writes; returns false if it stopped the loop.
pub(crate) fn random_overwrites(
    seed: u64,
    logical_units: u32,
    n: u64,
    stop: &dyn Fn() -> bool,
    mut write: impl FnMut(u32, [u32; 2]) -> bool,
) -> bool {
    use rand::Rng;
    use rand::SeedableRng;
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    // One sequence, drawn two writes ahead (the draws past the end are never used).
    let mut next = [rng.gen_range(0..logical_units), rng.gen_range(0..logical_units)];
    for i in 0..n {
        if i.is_multiple_of(CHECK_EVERY) && stop() {
            return false;
        }
        let lpn = next[0];
        next = [next[1], rng.gen_range(0..logical_units)];
        if !write(lpn, next) {
            break;
        }
    }
    true
}
