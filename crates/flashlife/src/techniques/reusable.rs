//! Reusable SSD (paper `001`, Yadgar, Yaakobi and Schuster, FAST '15): WOM-coded second
//! writes on recycled block pairs, as a [`SecondWriteTechnique`] the FTL consults.
//!
//! Blocks move clean -> used -> recycled -> reused -> (erase) clean. Each die has a *lane*:
//! its two planes' RecycledActive blocks, paired in the FTL's block map, and an offset counter
//! pointing at the next page offset whose data is invalid in both. A hot host unit (request
//! smaller than `reusable.hot_threshold`; see `techniques::hot_cold` for the classifiers) is
//! WOM-encoded against the invalid data of that pair (read ahead by the prefetch as soon as
//! the previous second write completes, or read on demand) and programmed on both pages in one
//! multi-plane operation. Cold units, GC moves
//! and failed encodings are first writes. GC (the FTL's `collect` hook) runs when clean +
//! recycled blocks in a plane fall below `reusable.gc_threshold` (or the FTL needs clean
//! blocks): a hot unit whose lane has no recycled block asks the FTL for space
//! (`Verdict::NeedSpace`) and is offered again after the FTL's write driver has run this GC,
//! so no GC runs inside the technique's host path. The min-valid victim is erased if it is reused, if its plane has too few clean
//! blocks, if recycled + reused blocks would exceed 2R (or, with `reusable.first_write_op`,
//! would leave first writes too little spare space for the data they hold), or if it is past
//! the fraction of its P/E budget second writes may use; otherwise it is recycled (no data
//! moves). A plane short of clean blocks whose used and reused blocks hold less than a block
//! of invalid data takes back a recycled block first (`give_back`).
//!
//! Ablations: `reusable.layout = "sequential"` (a lane per plane; the halves are two
//! consecutive invalid pages of one block, read and programmed one after the other),
//! `reusable.prefetch = false`, `reusable.retry = "extra_read" | "none"`.

use std::collections::VecDeque;

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use crate::config::{Config, HotColdKind, PairLayout, PrefetchIssue, SecondWriteRetry};
use crate::error::Result;
use crate::ftl::second_write::{BlockKind, SecondWriteCounters, SecondWriteTechnique, Verdict};
use crate::ftl::Ftl;
use crate::stats::Cause;
use crate::techniques::hot_cold::{HotColdClassifier, Recency, RequestSize};
use crate::techniques::wom::{EncodeOutcome, WomModel};
use crate::timing::{Done, Op, Transaction, Wait};

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum Retry {
    SameData,
    ExtraRead,
    Never,
}

/// A pair of RecycledActive blocks (parallel: one per plane of a die; sequential: one block).
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Lane {
    die: u32,
    planes: [u32; 2],
    blocks: [u32; 2],
    /// Lowest page offset not yet considered.
    offset: u32,
    /// The next pair, its invalid data read (or being read) into the controller's RAM; with
    /// `lazy`, the time the prefetch was wanted, its read still to be placed in idle time.
    prefetched: Option<(u32, Done)>,
    lazy: bool,
}

/// The Reusable SSD second-write policy.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ReusableSsd {
    wom: WomModel,
    retry: Retry,
    prefetch: bool,
    eager_prefetch: bool,
    sequential: bool,
    classifier: Box<dyn HotColdClassifier>,
    unit_bytes: u64,
    pages_per_block: u32,
    gc_threshold: usize,
    min_clean: usize,
    max_recycled: f64,
    /// R in units, and the share of it first writes must keep (`reusable.first_write_op`).
    spare_units: f64,
    first_write_op: f64,
    life_limit: u32,
    rng: Pcg64Mcg,
    lanes: Vec<Lane>,
    /// The lane serving each plane (parallel: its die's; sequential: its own).
    lane_of: Vec<usize>,
    /// Recycled blocks waiting to become RecycledActive, per plane.
    recycled: Vec<VecDeque<u32>>,
    /// The hot unit that asked for space, and where it stopped. Never kept between requests
    /// (the FTL's write driver runs the GC at once and offers the unit again), so never in a
    /// checkpoint.
    #[serde(skip)]
    waiting: Option<Waiting>,
}

/// Where a hot unit's search for a pair stopped to ask for space (see `take_pair`).
#[derive(Debug, Clone, Copy)]
struct Waiting {
    lpn: u32,
    lane: usize,
    /// Attempts to find a pair made (a lane found empty is closed and opened once more).
    tries: u32,
    /// The lane's planes (first, second) already cleaned for the lane being opened.
    cleaned: [bool; 2],
}

/// What a search for a pair found.
enum Pair {
    /// The pair at this offset, its invalid data in the controller at this time.
    Ready(u32, Done),
    /// No pair: the unit is written as a first write.
    None,
    /// This plane needs GC (recycling) before the lane can open.
    NeedSpace(u32),
}

/// What opening a lane found.
enum LaneOpen {
    Opened,
    /// A plane has no recycled block even after GC.
    Short,
    /// This plane has no recycled block and has not been cleaned for it yet.
    NeedSpace(u32),
}

impl ReusableSsd {
    /// Build the policy for a validated configuration and the FTL it will drive.
    pub fn new(cfg: &Config, ftl: &Ftl, seed: u64) -> Result<ReusableSsd> {
        let r = &cfg.reusable;
        let geo = ftl.geo;
        let retry = match r.retry {
            SecondWriteRetry::SameData => Retry::SameData,
            SecondWriteRetry::ExtraRead => Retry::ExtraRead,
            SecondWriteRetry::None => Retry::Never,
        };
        let sequential = r.layout == PairLayout::Sequential;
        // Lanes in the FTL's striping order (channel first), so consecutive hot units spread
        // over buses as first writes do.
        let mut lanes = Vec::new();
        for &plane in &geo.stripe_order() {
            let die = geo.die_of_plane(plane);
            if sequential {
                lanes.push(Lane {
                    die,
                    planes: [plane, plane],
                    blocks: [NONE; 2],
                    offset: 0,
                    prefetched: None,
                    lazy: false,
                });
            } else if plane % geo.planes_per_die == 0 {
                let planes = [plane, plane + 1];
                lanes.push(Lane { die, planes, blocks: [NONE; 2], offset: 0, prefetched: None, lazy: false });
            }
        }
        let mut lane_of = vec![0; geo.planes() as usize];
        for (i, lane) in lanes.iter().enumerate() {
            for p in 0..geo.planes() {
                if (sequential && p == lane.planes[0]) || (!sequential && geo.die_of_plane(p) == lane.die) {
                    lane_of[p as usize] = i;
                }
            }
        }
        // R = physical - logical blocks.
        let logical_blocks = ftl.logical_units() as f64 / geo.pages_per_block as f64;
        let spare_blocks = (geo.blocks() as f64 - logical_blocks).max(0.0);
        let min_clean = (r.min_clean_blocks as usize).max(Ftl::GC_RESERVE + 1);
        let bpp = geo.blocks_per_plane as f64;
        let spare_units = spare_blocks * geo.pages_per_block as f64;
        let classifier: Box<dyn HotColdClassifier> = match r.hot_cold {
            HotColdKind::Recency => {
                let window = if r.recency_window == 0 { spare_units as u64 } else { r.recency_window };
                Box::new(Recency::new(r.hot_threshold, window.min(u32::MAX as u64 / 2) as u32, ftl.logical_units()))
            }
            HotColdKind::Size => Box::new(RequestSize { threshold: r.hot_threshold }),
        };
        let rated = ftl.flash.wear_model().rated_cycles(ftl.flash.native_mode());
        Ok(ReusableSsd {
            wom: WomModel {
                success_probability: r.success_probability,
                retry: retry == Retry::SameData,
                capacity_ratio: 2.1,
            },
            retry,
            prefetch: r.prefetch,
            eager_prefetch: r.prefetch_issue == PrefetchIssue::Eager,
            sequential,
            classifier,
            unit_bytes: ftl.unit_bytes(),
            pages_per_block: geo.pages_per_block,
            gc_threshold: ((r.gc_threshold * bpp).ceil() as usize).max(min_clean + 1),
            min_clean,
            max_recycled: r.max_recycled_factor * spare_blocks,
            spare_units,
            first_write_op: r.first_write_op,
            life_limit: (rated * r.max_life_fraction).floor().min(u32::MAX as f64) as u32,
            rng: Pcg64Mcg::seed_from_u64(seed),
            lanes,
            lane_of,
            recycled: vec![VecDeque::new(); geo.planes() as usize],
            waiting: None,
        })
    }

    /// The first offset from `from` whose pages are free for a second write in the lane.
    fn next_offset(&self, ftl: &Ftl, lane: &Lane, from: u32) -> Option<u32> {
        let [b0, b1] = lane.blocks;
        if self.sequential {
            (from..self.pages_per_block.saturating_sub(1))
                .find(|&k| ftl.page_free_for_second(b0, k) && ftl.page_free_for_second(b0, k + 1))
        } else {
            (from..self.pages_per_block).find(|&k| ftl.page_free_for_second(b0, k) && ftl.page_free_for_second(b1, k))
        }
    }

    /// The two pages of the pair at offset `k`: (block, page) of the first and second half.
    fn halves(&self, lane: &Lane, k: u32) -> [(u32, u32); 2] {
        if self.sequential {
            [(lane.blocks[0], k), (lane.blocks[0], k + 1)]
        } else {
            [(lane.blocks[0], k), (lane.blocks[1], k)]
        }
    }

    /// Read the invalid data of the pair at offset `k`, issued at `at`. Returns when it is in
    /// the controller.
    fn read_pair(&self, ftl: &mut Ftl, lane: &Lane, k: u32, at: Done) -> Done {
        let [(a, _), (b, _)] = self.halves(lane, k);
        ftl.flash.read(a);
        ftl.flash.read(b);
        ftl.counters.page_reads.add(Cause::SecondWrite, 2);
        let (txs, n) = self.pair_ops(ftl, lane, k, Op::Read);
        // The encoder needs both halves: joined by the scheduler, not by their estimates
        // (`Scheduler::join`; the two reads may queue on different dies).
        let mut done = at;
        for (i, tx) in txs[..n].iter().enumerate() {
            let read = ftl.sched.submit(tx, at);
            done = if i == 0 { read } else { ftl.sched.join(done, read) };
        }
        done
    }

    /// The flash operations that read (or program) the pair at offset `k`: parallel layout,
    /// one multi-plane operation (both pages over the channel, one array time); sequential,
    /// one per page. Returns them and how many there are.
    fn pair_ops(&self, ftl: &Ftl, lane: &Lane, k: u32, op: Op) -> ([Transaction; 2], usize) {
        let [(a, pa), (b, pb)] = self.halves(lane, k);
        let mode = ftl.flash.mode(a);
        let unit = self.unit_bytes;
        let tx = |block, page, bytes| Transaction {
            op,
            die: lane.die,
            block,
            page,
            mode,
            bytes,
            class: Cause::SecondWrite,
            for_host: false,
        };
        if self.sequential {
            ([tx(a, pa, unit), tx(b, pb, unit)], 2)
        } else {
            // One multi-plane operation, addressed by its first page.
            let both = tx(a, pa, 2 * unit);
            ([both, both], 1)
        }
    }

    /// A prefetch wanted since `since`, placed in idle time: if the die and its channel have
    /// been free long enough before `ready` for the read, it ran there and the data is in RAM
    /// at `ready` (host work was never delayed); otherwise it is a demand read at `ready`.
    fn idle_read(&self, ftl: &mut Ftl, lane: &Lane, k: u32, since: Done, ready: Done) -> Done {
        let [(a, _), (b, _)] = self.halves(lane, k);
        let (txs, n) = self.pair_ops(ftl, lane, k, Op::Read);
        // Planning an idle window reads both ends as times.
        if ftl.sched.fits_before(&txs[..n], since.as_time(), ready.as_time(), Wait::DiesAndChannels) {
            ftl.flash.read(a);
            ftl.flash.read(b);
            ftl.counters.page_reads.add(Cause::SecondWrite, 2);
            counts(ftl).prefetch_reads += 1;
            ready
        } else {
            counts(ftl).demand_reads += 1;
            self.read_pair(ftl, lane, k, ready)
        }
    }

    /// Make a lane's recycled blocks RecycledActive. A plane with none asks for GC first
    /// (which recycles only when clean + recycled blocks are below the threshold), once per
    /// opening: `cleaned` says which planes have had it.
    fn open_lane(&mut self, ftl: &mut Ftl, l: usize, cleaned: &mut [bool; 2]) -> LaneOpen {
        let lane = self.lanes[l];
        let planes: &[u32] = if self.sequential { &lane.planes[..1] } else { &lane.planes[..] };
        for (i, &p) in planes.iter().enumerate() {
            if self.recycled[p as usize].is_empty() {
                if cleaned[i] {
                    return LaneOpen::Short;
                }
                cleaned[i] = true;
                return LaneOpen::NeedSpace(p);
            }
        }
        let b0 = self.recycled[lane.planes[0] as usize].pop_front().unwrap_or(NONE);
        let b1 = if self.sequential { b0 } else { self.recycled[lane.planes[1] as usize].pop_front().unwrap_or(NONE) };
        if !self.sequential {
            ftl.pair_blocks(b0, b1);
        }
        self.lanes[l] = Lane { blocks: [b0, b1], offset: 0, prefetched: None, lazy: false, ..lane };
        LaneOpen::Opened
    }

    /// Garbage collection of `plane` until it has `target` clean + recycled blocks (at least
    /// the GC threshold) and `min_clean` clean ones, at once: each victim recycled or cleaned
    /// as [`ReusableSsd::next_victim`] decides.
    fn gc(&mut self, ftl: &mut Ftl, plane: u32, ready: Done, target: usize) -> Done {
        let mut done = ready;
        while let Some(v) = self.next_victim(ftl, plane, target) {
            done = done.max(ftl.clean_victim(v, plane, ready));
        }
        done
    }

    /// `plane`'s next victim to erase, recycling on the way those the rules recycle (no
    /// flash work); `None` once the plane has `target` clean + recycled blocks (at least the
    /// GC threshold) and `min_clean` clean ones, or nothing can be gained. Each victim, the
    /// emptiest used or reused block, is erased if it is reused, if the plane is short of
    /// clean blocks, if recycled + reused blocks would exceed the cap (2R) or leave first
    /// writes short of spare space (`first_write_op`), or if it is past the P/E fraction
    /// second writes may use; otherwise it is recycled. A plane short of clean blocks may
    /// take its recycled blocks back first ([`ReusableSsd::give_back`]).
    fn next_victim(&mut self, ftl: &mut Ftl, plane: u32, target: usize) -> Option<u32> {
        let want = target.max(self.gc_threshold);
        while ftl.death().is_none() {
            let free = ftl.free_blocks_in(plane);
            if free >= self.min_clean && free + self.recycled[plane as usize].len() >= want {
                return None;
            }
            let chosen = ftl.select_victim(plane);
            if free < self.min_clean && self.give_back(ftl, plane, chosen) {
                continue; // choose again, among the blocks given back
            }
            let v = chosen?;
            // Nothing to gain when the emptiest candidate is full of first-write data. A reused
            // block full of second-write halves is worth cleaning: it frees its pair's halves too.
            if ftl.valid_units(v) >= ftl.block_capacity(v) && ftl.block_kind(v) != BlockKind::Reused {
                return None;
            }
            let (recycled, reused) = ftl.recycled_and_reused();
            let erase = ftl.block_kind(v) == BlockKind::Reused
                || free < self.min_clean
                || (recycled + reused + 1) as f64 > self.max_recycled
                || self.first_writes_short(ftl, recycled + reused + 1, v)
                || ftl.flash.erase_count(v) >= self.life_limit;
            if erase {
                return Some(v);
            }
            ftl.recycle_block(v);
            self.recycled[plane as usize].push_back(v);
        }
        None
    }

    /// `plane` is short of clean blocks and must erase; `chosen` is the victim policy's choice
    /// among its used and reused blocks. When those blocks together hold less than a block of
    /// invalid units, with the room left in the GC stream's open block, no cleaning of them
    /// can give the plane a clean block back: each erase frees what its victim held invalid,
    /// and the data it moves fills that room first, then a clean block. The
    /// plane's spare space is then in its recycled blocks (on a plane whose spare is a few
    /// blocks, 3 of them the clean floor, recycling the emptiest victims takes all of it), and
    /// without this the drive died "no pool has space for host data" with clean blocks to be
    /// had. So such a plane takes back the recycled block waiting for its lane that frees most
    /// (a used block again, no data moves), or, with none waiting and `chosen` freeing
    /// nothing, closes its lane (the lane's blocks become reused, which GC erases). Returns
    /// whether either happened.
    fn give_back(&mut self, ftl: &mut Ftl, plane: u32, chosen: Option<u32>) -> bool {
        if ftl.reclaimable_units(plane) >= self.pages_per_block as u64 {
            return false; // cleaning used and reused blocks can still win a block back
        }
        let frees = |ftl: &Ftl, b: u32| ftl.block_capacity(b).saturating_sub(ftl.valid_units(b));
        let queue = &mut self.recycled[plane as usize];
        // The first of the emptiest (the oldest recycled).
        let best = (0..queue.len()).rev().max_by_key(|&i| frees(ftl, queue[i]));
        if let Some(i) = best.filter(|&i| frees(ftl, queue[i]) > 0) {
            if let Some(b) = queue.remove(i) {
                ftl.give_back(b);
                return true;
            }
        }
        let l = self.lane_of[plane as usize];
        let lane = self.lanes[l];
        let here = lane.planes.iter().position(|&p| p == plane).map(|i| lane.blocks[i]);
        let gain = chosen.map_or(0, |v| frees(ftl, v));
        if gain == 0 && here.is_some_and(|b| b != NONE && frees(ftl, b) > 0) {
            self.close_lane(ftl, l);
            return true;
        }
        false
    }

    /// Would `partition` recycled and reused blocks leave first writes less spare space than
    /// `first_write_op` x R? Those blocks take `partition x block size` of the physical space
    /// and hold the data of their valid pages, each second-written unit counted once (it has
    /// a half in two of them); the rest is what they cost the first writes, whose spare space
    /// is R minus that cost (the drive is full). `victim` is the block about to join them.
    fn first_writes_short(&self, ftl: &Ftl, partition: u32, victim: u32) -> bool {
        if self.first_write_op <= 0.0 {
            return false;
        }
        let valid = ftl.partition_valid_pages() + ftl.valid_units(victim) as u64;
        let held = valid as f64 - ftl.second_write_units() as f64;
        let cost = partition as f64 * self.pages_per_block as f64 - held;
        self.spare_units - cost < self.first_write_op * self.spare_units
    }

    /// The lane's blocks have no more pairs: they are reused.
    fn close_lane(&mut self, ftl: &mut Ftl, l: usize) {
        let lane = &mut self.lanes[l];
        let [b0, b1] = lane.blocks;
        lane.blocks = [NONE; 2];
        lane.prefetched = None;
        lane.lazy = false;
        ftl.close_reused(b0);
        if b1 != b0 {
            ftl.close_reused(b1);
        }
    }

    /// The next pair of the unit's lane and when its invalid data is in the controller; or a
    /// plane to clean first, `at` keeping where the search stopped for the next call.
    fn take_pair(&mut self, ftl: &mut Ftl, at: &mut Waiting, ready: Done) -> Pair {
        let l = at.lane;
        while at.tries < 2 {
            if self.lanes[l].blocks[0] == NONE {
                match self.open_lane(ftl, l, &mut at.cleaned) {
                    LaneOpen::Opened => at.cleaned = [false; 2],
                    LaneOpen::Short => return Pair::None,
                    LaneOpen::NeedSpace(plane) => return Pair::NeedSpace(plane),
                }
            }
            if let Some((k, t)) = self.lanes[l].prefetched.take() {
                if std::mem::take(&mut self.lanes[l].lazy) {
                    let lane = self.lanes[l];
                    return Pair::Ready(k, self.idle_read(ftl, &lane, k, t, ready));
                }
                // The encoder needs the prefetched data and the host's.
                return Pair::Ready(k, ftl.sched.join(t, ready));
            }
            let lane = self.lanes[l];
            match self.next_offset(ftl, &lane, lane.offset) {
                Some(k) => {
                    counts(ftl).demand_reads += 1;
                    return Pair::Ready(k, self.read_pair(ftl, &lane, k, ready));
                }
                None => self.close_lane(ftl, l),
            }
            at.tries += 1;
        }
        Pair::None
    }

    /// `runs` encoder runs, one after another, for the pair at `k` of `lane`, the first once
    /// its input is ready at `t`: when the last is done. The timing layer says how long one
    /// takes (`Op::Encode`).
    fn encoder_runs(&self, ftl: &mut Ftl, lane: &Lane, k: u32, t: Done, runs: u32) -> Done {
        let mode = ftl.flash.mode(lane.blocks[0]);
        let tx = Transaction::encode(lane.die, lane.blocks[0], k, mode, Cause::SecondWrite);
        (0..runs).fold(t, |at, _| ftl.sched.submit(&tx, at))
    }

    /// Encoding attempts on the pair at `k` (data in at `t`): the offset finally used, or
    /// `None` with the pair to keep for the next hot unit; and when the outcome is known. A
    /// failed attempt costs an encoder run before the next step (the paper's worst case).
    fn encode(&mut self, ftl: &mut Ftl, l: usize, k: u32, t: Done) -> (Option<u32>, Done) {
        let lane = self.lanes[l];
        match self.retry {
            Retry::SameData | Retry::Never => match self.wom.try_encode(&mut self.rng) {
                EncodeOutcome::Success => (Some(k), t),
                EncodeOutcome::SuccessOnRetry => {
                    counts(ftl).encode_failures += 1;
                    (Some(k), self.encoder_runs(ftl, &lane, k, t, 1))
                }
                EncodeOutcome::Failed => {
                    let attempts = self.wom.attempts(EncodeOutcome::Failed);
                    counts(ftl).encode_failures += attempts as u64;
                    (None, self.encoder_runs(ftl, &lane, k, t, attempts - 1))
                }
            },
            Retry::ExtraRead => {
                if self.wom.try_encode(&mut self.rng).is_success() {
                    return (Some(k), t);
                }
                counts(ftl).encode_failures += 1;
                // Retry on the next pair: read it, encode again. The first pair is skipped.
                let step = if self.sequential { 2 } else { 1 };
                let Some(k2) = self.next_offset(ftl, &lane, k + step) else { return (None, t) };
                self.lanes[l].offset = k2;
                counts(ftl).demand_reads += 1;
                let failed = self.encoder_runs(ftl, &lane, k, t, 1);
                let t2 = self.read_pair(ftl, &lane, k2, failed);
                if self.wom.try_encode(&mut self.rng).is_success() {
                    (Some(k2), t2)
                } else {
                    counts(ftl).encode_failures += 1;
                    self.lanes[l].prefetched = Some((k2, t2));
                    (None, t2)
                }
            }
        }
    }
}

/// The second-write counters, installed with the technique.
fn counts(ftl: &mut Ftl) -> &mut SecondWriteCounters {
    ftl.second_write_counters_mut().expect("second writes are installed with the technique")
}

#[typetag::serde]
impl SecondWriteTechnique for ReusableSsd {
    fn host_unit(&mut self, ftl: &mut Ftl, lpn: u32, request_units: u32, ready: Done) -> Verdict {
        let mut at = match self.waiting.take() {
            // Offered again after the space it asked for: already classified hot.
            Some(at) => {
                debug_assert_eq!(at.lpn, lpn, "the FTL offers the unit that asked for space");
                at
            }
            None => {
                if !self.classifier.is_hot(lpn, request_units as u64 * self.unit_bytes) {
                    return Verdict::Declined(ready);
                }
                // The die the FTL's striping would give this unit: second and first writes of
                // a request then share one rotation over the dies instead of colliding on one.
                let lane = self.lane_of[ftl.stripe_plane() as usize];
                Waiting { lpn, lane, tries: 0, cleaned: [false; 2] }
            }
        };
        let l = at.lane;
        let (k, t) = match self.take_pair(ftl, &mut at, ready) {
            Pair::Ready(k, t) => (k, t),
            Pair::NeedSpace(plane) => {
                self.waiting = Some(at);
                return Verdict::NeedSpace { plane, target: self.gc_threshold };
            }
            Pair::None => {
                counts(ftl).hot_first_writes += 1;
                return Verdict::Declined(ready);
            }
        };
        let lane = self.lanes[l];
        // Failed attempts cost an encoder run, a fallback an ECC computation for the first
        // write: one `Op::Encode` each (half the read time: the paper's worst case, 6.6).
        let (used, t) = self.encode(ftl, l, k, t);
        let Some(k_used) = used else {
            counts(ftl).encode_fallbacks += 1;
            if self.lanes[l].prefetched.is_none() {
                self.lanes[l].prefetched = Some((k, t)); // the invalid data stays in RAM
                self.lanes[l].lazy = false;
            }
            return Verdict::Declined(self.encoder_runs(ftl, &lane, k, t, 1));
        };
        let k = k_used;
        let [(a, pa), (b, pb)] = self.halves(&lane, k);
        let (txs, n) = self.pair_ops(ftl, &lane, k, Op::Program);
        let done = txs[..n].iter().map(|tx| ftl.sched.submit(tx, t)).reduce(Done::later).unwrap_or(t);
        ftl.map_second(lpn, a, pa, b, pb);
        let step = if self.sequential { 2 } else { 1 };
        self.lanes[l].offset = k + step;
        self.lanes[l].prefetched = None;
        self.lanes[l].lazy = false;
        if self.prefetch {
            let lane = self.lanes[l];
            match self.next_offset(ftl, &lane, lane.offset) {
                Some(next) if self.eager_prefetch => {
                    counts(ftl).prefetch_reads += 1;
                    let at = self.read_pair(ftl, &lane, next, done);
                    self.lanes[l].prefetched = Some((next, at));
                    self.lanes[l].offset = next;
                }
                Some(next) => {
                    self.lanes[l].prefetched = Some((next, done));
                    self.lanes[l].lazy = true;
                    self.lanes[l].offset = next;
                }
                None => self.close_lane(ftl, l),
            }
        }
        ftl.advance_stripe();
        Verdict::Taken(done)
    }

    fn collect(&mut self, ftl: &mut Ftl, plane: u32, ready: Done, target: usize) -> Done {
        self.gc(ftl, plane, ready, target)
    }

    fn next_erase(&mut self, ftl: &mut Ftl, plane: u32, target: usize) -> Option<u32> {
        self.next_victim(ftl, plane, target)
    }
}
