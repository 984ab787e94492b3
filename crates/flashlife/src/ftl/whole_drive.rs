//! Operations over the whole drive: preconditioning in fast-forward, the oracle's final
//! check, the size of the simulator's state and the share of life used.

use super::*;

impl Ftl {
    /// Check every logical unit against the oracle (end of a run). Returns the violation.
    pub fn verify_all(&mut self) -> Option<String> {
        let o = self.oracle.as_mut()?;
        // With a cached mapping table, its translation pages (hidden units after the host's) too.
        let units = self.logical_units + self.cmt.as_ref().map_or(0, |c| c.pages());
        for lpn in 0..units {
            let slot = self.map.slot(lpn);
            if slot == UNMAPPED {
                o.check("final check", lpn, 0, UNMAPPED);
            } else {
                o.check("final check", lpn, slot, self.map.owner(slot));
            }
        }
        o.violation.clone()
    }

    /// Precondition in fast-forward: fill every logical unit once, then overwrite
    /// `drive_writes` of the logical space uniformly at random.
    pub fn precondition(&mut self, fill: bool, drive_writes: f64, seed: u64) {
        self.precondition_until(fill, drive_writes, seed, &|| false);
    }

    /// [`Ftl::precondition`], checking `stop` every few thousand writes (a few milliseconds)
    /// so that Ctrl-C is honoured during a long fill; returns false if it stopped early.
    pub fn precondition_until(&mut self, fill: bool, drive_writes: f64, seed: u64, stop: &dyn Fn() -> bool) -> bool {
        let timing = self.sched.timing();
        self.sched.set_timing(false);
        let mut stopped = false;
        if fill {
            for lpn in 0..self.logical_units {
                if (lpn as u64).is_multiple_of(CHECK_EVERY) && stop() {
                    stopped = true;
                    break;
                }
                self.write(lpn, 1, 0);
                if self.death.is_some() {
                    break;
                }
            }
        }
        if !stopped {
            let n = (drive_writes * self.logical_units as f64) as u64;
            stopped = !random_overwrites(seed, self.logical_units, n, stop, |lpn, next| {
                if self.death.is_some() {
                    return false;
                }
                self.prefetch_map(next[1], 1);
                self.prefetch_slots(next[0], 1);
                self.write(lpn, 1, 0);
                true
            });
        }
        self.sched.set_timing(timing);
        !stopped
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
        let rated = self.flash.wear_model().rated_cycles(self.flash.native_mode()).max(1.0);
        let sum: u64 = self.flash.erase_counts().iter().map(|&c| c as u64).sum();
        sum as f64 / self.geo.blocks().max(1) as f64 / rated
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
