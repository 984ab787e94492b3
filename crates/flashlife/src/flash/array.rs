//! The flash array: the physical state of every block and the rules of the medium.
//!
//! It knows bit modes, page sizes, timing parameters, write pointers, erase counts, read
//! counters and wear-out; it knows nothing of logical addresses or of the FTL above it.

use super::failure::FailureModel;
use super::geometry::Geometry;
use super::mode::{BitMode, ModeParams};
use super::wear::WearModel;

/// Outcome of a page program (the status register after the operation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ProgramStatus {
    Ok,
    Failed,
}

/// Outcome of a block erase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum EraseStatus {
    /// Erased and usable at its current mode.
    Ok,
    /// The erase itself failed: the block is bad.
    Failed,
    /// Erased, but worn out at its current mode (the wear model says so).
    WornOut,
}

/// Operations the array performed, counted by the array itself (independently of the FTL's
/// attribution to causes, so the two can be checked against each other).
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct OpCounts {
    pub reads: u64,
    pub programs: u64,
    pub erases: u64,
}

/// Per-mode timing in nanoseconds, with optional per-page-type tables.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct ModeTiming {
    read_ns: Vec<u64>,
    program_ns: Vec<u64>,
    erase_ns: u64,
}

/// How long the array takes for each operation, by bit mode and page type: the flash
/// model's datasheet figures, which the timing layer reads.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ArrayTimes {
    modes: [ModeTiming; 4],
}

impl ArrayTimes {
    /// The times each mode's parameters give (`[flash.slc]` ... `[flash.qlc]`, in
    /// `BitMode::ALL` order; `ArrayTimes::new` takes them from a flash configuration).
    pub fn from_modes(params: [&ModeParams; 4]) -> Self {
        let modes = params.map(|p| {
            let per_type = |list: &Vec<f64>, base: f64| -> Vec<u64> {
                if list.is_empty() {
                    vec![us_to_ns(base)]
                } else {
                    list.iter().map(|&v| us_to_ns(v)).collect()
                }
            };
            ModeTiming {
                read_ns: per_type(&p.read_us_by_page_type, p.read_us),
                program_ns: per_type(&p.program_us_by_page_type, p.program_us),
                erase_ns: us_to_ns(p.erase_us),
            }
        });
        ArrayTimes { modes }
    }

    /// Sensing `page` of a block at `mode`.
    #[inline]
    pub fn read_ns(&self, mode: BitMode, page: u32) -> u64 {
        let t = &self.modes[mode.index()].read_ns;
        // One time for every page type is the common case: no divide for it.
        if t.len() == 1 {
            t[0]
        } else {
            t[page as usize % t.len()]
        }
    }

    /// Programming `page` of a block at `mode`.
    #[inline]
    pub fn program_ns(&self, mode: BitMode, page: u32) -> u64 {
        let t = &self.modes[mode.index()].program_ns;
        if t.len() == 1 {
            t[0]
        } else {
            t[page as usize % t.len()]
        }
    }

    /// Erasing a block at `mode`.
    #[inline]
    pub fn erase_ns(&self, mode: BitMode) -> u64 {
        self.modes[mode.index()].erase_ns
    }
}

fn us_to_ns(us: f64) -> u64 {
    (us * 1000.0).round() as u64
}

/// Physical state of all blocks.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct FlashArray {
    pub geo: Geometry,
    native: BitMode,
    page_bytes: [u64; 4],
    mode: Vec<BitMode>,
    erase_count: Vec<u32>,
    next_page: Vec<u32>,
    reads_since_erase: Vec<u32>,
    times: ArrayTimes,
    wear: Box<dyn WearModel>,
    failures: Option<Box<dyn FailureModel>>,
    /// Programs that were not at or after the block's write pointer (must stay 0).
    pub order_violations: u64,
    pub ops: OpCounts,
}

impl FlashArray {
    /// A pristine array: every block erased, at mode `native`, whose pages hold
    /// `page_bytes` at each mode (`BitMode::ALL` order). `FlashArray::new` makes one from a
    /// flash configuration.
    pub fn from_parts(
        geo: Geometry,
        native: BitMode,
        page_bytes: [u64; 4],
        times: ArrayTimes,
        wear: Box<dyn WearModel>,
        failures: Option<Box<dyn FailureModel>>,
    ) -> Self {
        let n = geo.blocks() as usize;
        FlashArray {
            geo,
            native,
            page_bytes,
            mode: vec![native; n],
            erase_count: vec![0; n],
            next_page: vec![0; n],
            reads_since_erase: vec![0; n],
            times,
            wear,
            failures,
            order_violations: 0,
            ops: OpCounts::default(),
        }
    }

    /// The mode blocks start in.
    pub fn native_mode(&self) -> BitMode {
        self.native
    }

    /// Bytes a page holds at `mode` (`flash.page_size` and `flash.capacity_on_drop`).
    #[inline]
    pub fn page_bytes(&self, mode: BitMode) -> u64 {
        self.page_bytes[mode.index()]
    }

    #[inline]
    pub fn mode(&self, block: u32) -> BitMode {
        self.mode[block as usize]
    }

    /// Change a block's bit mode (ZombieNAND). Only an erased block may change mode.
    pub fn set_mode(&mut self, block: u32, mode: BitMode) {
        debug_assert_eq!(self.next_page[block as usize], 0, "mode change of a programmed block");
        self.mode[block as usize] = mode;
    }

    #[inline]
    pub fn erase_count(&self, block: u32) -> u32 {
        self.erase_count[block as usize]
    }

    /// Every block's erase count, indexed by block.
    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_count
    }

    /// Next page that may be programmed in `block`.
    #[inline]
    pub fn next_page(&self, block: u32) -> u32 {
        self.next_page[block as usize]
    }

    #[inline]
    pub fn reads_since_erase(&self, block: u32) -> u32 {
        self.reads_since_erase[block as usize]
    }

    /// Mean erase count over the native mode's rated cycles: how far through its life the
    /// array is.
    pub fn life_used(&self) -> f64 {
        let rated = self.wear_model().rated_cycles(self.native_mode()).max(1.0);
        let sum: u64 = self.erase_counts().iter().map(|&c| c as u64).sum();
        sum as f64 / self.geo.blocks().max(1) as f64 / rated
    }

    pub fn wear_model(&self) -> &dyn WearModel {
        self.wear.as_ref()
    }

    /// Cycles `block` can still take at its current mode.
    pub fn remaining_cycles(&self, block: u32) -> f64 {
        let b = block as usize;
        self.wear.remaining_cycles(block, self.erase_count[b], self.mode[b])
    }

    /// The array's operation times (the timing layer takes a copy).
    pub fn times(&self) -> &ArrayTimes {
        &self.times
    }

    #[inline]
    pub fn read_ns(&self, mode: BitMode, page: u32) -> u64 {
        self.times.read_ns(mode, page)
    }

    #[inline]
    pub fn program_ns(&self, mode: BitMode, page: u32) -> u64 {
        self.times.program_ns(mode, page)
    }

    #[inline]
    pub fn erase_ns(&self, mode: BitMode) -> u64 {
        self.times.erase_ns(mode)
    }

    /// Program `page` of `block`. Pages are programmed in forward order only; pages may be
    /// skipped (bad-page salvage) but never revisited.
    #[inline]
    pub fn program(&mut self, block: u32, page: u32) -> ProgramStatus {
        let b = block as usize;
        if page < self.next_page[b] || page >= self.geo.pages_per_block {
            self.order_violations += 1;
        }
        self.next_page[b] = page + 1;
        self.ops.programs += 1;
        let cycles = self.erase_count[b];
        match &mut self.failures {
            Some(f) => {
                if f.program_fails(block, page, cycles) {
                    ProgramStatus::Failed
                } else {
                    ProgramStatus::Ok
                }
            }
            None => ProgramStatus::Ok,
        }
    }

    /// Program an already-programmed page a second time (a WOM-coded second write, Reusable
    /// SSD): cells only rise, so the write pointer is neither checked nor moved.
    #[inline]
    pub fn second_program(&mut self, block: u32, page: u32) {
        if page >= self.next_page[block as usize] {
            self.order_violations += 1; // a second write on a page never first-written
        }
        self.ops.programs += 1;
    }

    /// The measured run starts (after preconditioning): operation counters restart and the
    /// failure model is told (failures by program number count from here).
    pub fn start_run(&mut self) {
        self.ops = OpCounts::default();
        if let Some(f) = &mut self.failures {
            f.start_run();
        }
    }

    /// Sense a page: counts toward the block's read-disturb counter.
    #[inline]
    pub fn read(&mut self, block: u32) {
        self.ops.reads += 1;
        let r = &mut self.reads_since_erase[block as usize];
        *r = r.saturating_add(1);
    }

    /// Erase `block`: one more P/E cycle, write pointer and read counter reset.
    pub fn erase(&mut self, block: u32) -> EraseStatus {
        let b = block as usize;
        self.erase_count[b] += 1;
        self.ops.erases += 1;
        self.next_page[b] = 0;
        self.reads_since_erase[b] = 0;
        if let Some(f) = &mut self.failures {
            if f.erase_fails(block, self.erase_count[b]) {
                return EraseStatus::Failed;
            }
        }
        if self.wear.is_worn_out(block, self.erase_count[b], self.mode[b]) {
            EraseStatus::WornOut
        } else {
            EraseStatus::Ok
        }
    }
}
