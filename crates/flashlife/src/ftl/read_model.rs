//! Error-aware reads and read reclaim (`[reliability]`).
//!
//! The FTL asks a [`ReadModel`] about every page it senses: how many read-retry steps the read
//! needs (each one another sensing and transfer, timed by the scheduler), whether it is uncorrectable,
//! and, for host reads, whether the block should be reclaimed (its valid data rewritten
//! elsewhere and the block erased). The baseline ([`NoReadModel`]) answers "clean, no retry,
//! no reclaim" without looking at anything.
//!
//! [`ErrorAwareReads`] computes the page's RBER with the power-law model of
//! `flash::rber` from the block's P/E cycles, its reads since erase, the time since it was
//! opened for programming (retention) and the page's own variation factor (lognormal, derived
//! from a hash of the page address: no per-page memory), and turns it into retry steps with
//! [`ReadRetry`]. Its [`ReclaimPolicy`] decides reclaim from the block's predicted worst page:
//! the RBER with the page factor at its bound (4 sigma).
//!
//! Read latency relaxation (the `hinted` policy): host reads may carry a latency budget (hint
//! commands by LBA range and/or stream); the block is kept while the predicted latency of its
//! worst page, `(steps + 1) * (tR + transfer)`, stays within the budget of the data read, and
//! is always reclaimed before its worst page could become uncorrectable.

use crate::config::{Config, HintLatency, ReadReclaim, ReclaimWhen, ReliabilityConfig, ReliabilityModel};
use crate::error::Result;
use crate::flash::rber::{PowerLawRber, RberTerms, ReadRetry};
use crate::flash::{BitMode, FlashArray};

/// Page factors are clamped at this many sigmas, so `exp(PAGE_Z_MAX * sigma)` bounds every page.
pub const PAGE_Z_MAX: f64 = 4.0;

/// What a page read needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReadOutcome {
    /// Retry steps after the first sensing (the read senses and transfers `steps + 1` times).
    pub steps: u32,
    /// Even the last retry step failed: the page's data is lost.
    pub uncorrectable: bool,
    /// The block should be reclaimed (host reads only).
    pub reclaim: bool,
    /// ... and now: its deadline is reached (or reclaim is not postponed). A reclaim that is
    /// due but not urgent waits for an idle window of the block's die.
    pub urgent: bool,
}

impl ReadOutcome {
    /// A first read that decodes, no reclaim.
    pub const CLEAN: ReadOutcome = ReadOutcome { steps: 0, uncorrectable: false, reclaim: false, urgent: false };
}

/// The FTL's read-reliability hook, called for every page sensed.
#[typetag::serde]
pub trait ReadModel: Send {
    /// A host read of `units` mapping units from `first_lpn`, tagged `stream`, starts: look up
    /// its latency budget (`budget_us`: the request's own budget, 0 = none).
    fn begin_host_read(&mut self, _first_lpn: u32, _units: u32, _stream: u16, _budget_us: u32) {}

    /// `page` of `block` is sensed at `now` (`host`: for a host read, which may trigger
    /// reclaim). Called before the array counts the read.
    fn sense(&mut self, flash: &FlashArray, block: u32, page: u32, now: u64, host: bool) -> ReadOutcome;

    /// `block` is opened for programming at `now`: its data's retention clock starts.
    fn on_open(&mut self, _block: u32, _now: u64) {}

    /// Does the model compare budgets with the request's predicted latency? Then the FTL
    /// reports each host read's [`RequestTiming`] before its pages are sensed.
    fn wants_request_timing(&self) -> bool {
        false
    }

    /// The timing of the host read whose next page is sensed: durations the scheduler computed.
    fn request_timing(&mut self, _timing: RequestTiming) {}

    /// Host page reads by retry steps needed (index = steps); the last entry counts
    /// uncorrectable reads. Empty when there is no error model.
    fn retry_histogram(&self) -> &[u64] {
        &[]
    }

    /// Host read requests a hint covered (their own budget or a hint command).
    fn hinted_reads(&self) -> u64 {
        0
    }

    /// Placement classes of data the model tells apart (1: none). With more than one the FTL
    /// keeps each logical unit's class, as its last host read left it, and relocates each class
    /// into blocks of its own (`Stream::Placed` for class 1).
    fn placement_classes(&self) -> u8 {
        1
    }

    /// The placement class of the data the host read just served read (after its pages were
    /// sensed; below [`ReadModel::placement_classes`]).
    fn placement_class(&self) -> u8 {
        0
    }

    /// Clear the statistics (after preconditioning).
    fn reset_stats(&mut self) {}
}

/// What the scheduler predicts for a host read request, page by page: the FTL asks the
/// scheduler (the timing layer computes every duration) and hands the answers on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestTiming {
    /// Pages the request senses.
    pub pages: u32,
    /// One attempt at the page being sensed (sensing and transfer).
    pub attempt_ns: u64,
    /// The longest queue of the request's dies when it is issued.
    pub queue_ns: u64,
    /// The request's transfer to the host.
    pub host_ns: u64,
}

/// The baseline: every read decodes at once, nothing is ever reclaimed.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct NoReadModel;

#[typetag::serde]
impl ReadModel for NoReadModel {
    #[inline]
    fn sense(&mut self, _flash: &FlashArray, _block: u32, _page: u32, _now: u64, _host: bool) -> ReadOutcome {
        ReadOutcome::CLEAN
    }
}

/// What a reclaim policy knows about a block after a host read of it.
pub struct BlockReadState<'a> {
    /// Reads of the block since its erase, this one included.
    pub reads_since_erase: u32,
    /// Predicted RBER of the block's worst page (page factor at its bound); 0 without a model.
    pub worst_rber: f64,
    /// The same right after a rewrite at the block's wear (no retention, no disturb): what
    /// reclaim can bring the errors down to.
    pub worst_fresh_rber: f64,
    /// Read retry at the block's mode; `None` without an error model.
    pub retry: Option<&'a ReadRetry>,
    /// Flash time of one read attempt of the block's pages (slowest page type's sensing plus
    /// a whole page's transfer).
    pub attempt_ns: u64,
    /// Latency budget of the data being read (hint command or `reliability.default_budget_us`).
    pub budget_ns: u64,
    /// Pages of the request being read (1 when budgets are compared with one page's time).
    pub pages: u32,
    /// The request's wait besides its pages' attempts (the die's queue, the host transfer;
    /// 0 when budgets are compared with one page's time).
    pub overhead_ns: u64,
    /// The fewest retries any earlier read of the block's data allowed since it was written,
    /// its queue left out (`u32::MAX`: no limit yet): the block keeps the promise made to its
    /// strictest reader, not only to the one reading it now. A queue passes; a request's size
    /// and budget are properties of the data's readers.
    pub strictest_steps: u32,
}

impl BlockReadState<'_> {
    /// Retries the worst page would need if its RBER were `worst_rber / margin`
    /// (`None`: uncorrectable). `Some(0)` without an error model.
    pub fn predicted_steps(&self, margin: f64) -> Option<u32> {
        match self.retry {
            Some(r) => r.steps_needed(self.worst_rber / margin),
            None => Some(0),
        }
    }

    /// Retries the worst page would need right after a rewrite (same margin): reclaim cannot
    /// do better, so the error-aware policies never reclaim for less (no reclaim storms on
    /// worn blocks whose errors come from wear, not from reads).
    pub fn floor_steps(&self, margin: f64) -> Option<u32> {
        match self.retry {
            Some(r) => r.steps_needed(self.worst_fresh_rber / margin),
            None => Some(0),
        }
    }

    /// Predicted flash latency of a read needing `steps` retries: `(steps + 1) * attempt`.
    pub fn latency_ns(&self, steps: u32) -> u64 {
        (steps as u64 + 1).saturating_mul(self.attempt_ns)
    }

    /// Retry steps the budget allows: the largest s with
    /// `overhead + pages * (s + 1) * attempt <= budget` (every page of the request as bad as the
    /// block's worst), at least 0 (a read without retry is always accepted: reclaim cannot
    /// make it faster) and at most the last retry step.
    pub fn allowed_steps(&self) -> u32 {
        let max = self.retry.map_or(0, |r| r.params().max_steps);
        let per_attempt = self.attempt_ns.max(1).saturating_mul(self.pages.max(1) as u64);
        let attempts = self.budget_ns.saturating_sub(self.overhead_ns) / per_attempt;
        (attempts.saturating_sub(1)).min(max as u64).min(self.strictest_steps as u64) as u32
    }

    /// Does the request meet its budget with one attempt per page (`overhead + pages * attempt
    /// <= budget`)? When it does not, no reclaim can make this read keep its promise.
    pub fn fits_without_retry(&self) -> bool {
        let pages = self.attempt_ns.saturating_mul(self.pages.max(1) as u64);
        self.overhead_ns.saturating_add(pages) <= self.budget_ns
    }
}

/// Read reclaim: decides, after a host read, whether the block read should be rewritten.
#[typetag::serde]
pub trait ReclaimPolicy: Send {
    /// Name as in `reliability.read_reclaim`.
    fn name(&self) -> &'static str;
    /// Reclaim the block now?
    fn reclaim(&self, state: &BlockReadState) -> bool;
    /// When reclaim is postponed to idle time: must it be done now, before the limit the
    /// policy keeps is reached? (Policies without a margin cannot wait.)
    fn deadline(&self, state: &BlockReadState) -> bool {
        self.reclaim(state)
    }
}

/// The margin at which a postponed reclaim's deadline falls: halfway from the policy's
/// margin to its limit (ours: late enough to leave idle windows time, early enough that the
/// read after the one that finds the deadline is still inside the limit).
fn deadline_margin(margin: f64) -> f64 {
    0.5 * (1.0 + margin)
}

/// Never reclaim: reads slow down (retries) and eventually fail.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct NoReclaim;

#[typetag::serde]
impl ReclaimPolicy for NoReclaim {
    fn name(&self) -> &'static str {
        "none"
    }
    fn reclaim(&self, _state: &BlockReadState) -> bool {
        false
    }
}

/// Classic firmware: reclaim when the block's reads since erase reach a threshold.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ReadCountReclaim {
    pub threshold: u32,
}

#[typetag::serde]
impl ReclaimPolicy for ReadCountReclaim {
    fn name(&self) -> &'static str {
        "read_count"
    }
    fn reclaim(&self, s: &BlockReadState) -> bool {
        s.reads_since_erase >= self.threshold
    }
}

/// Aggressive, error-aware firmware: reclaim as soon as the worst page, with a margin, would
/// need a retry, so reads never slow down.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ErrorBasedReclaim {
    pub margin: f64,
}

#[typetag::serde]
impl ReclaimPolicy for ErrorBasedReclaim {
    fn name(&self) -> &'static str {
        "error_based"
    }
    fn reclaim(&self, s: &BlockReadState) -> bool {
        exceeds(s, self.margin, 0)
    }
    fn deadline(&self, s: &BlockReadState) -> bool {
        exceeds(s, deadline_margin(self.margin), 0)
    }
}

/// Read latency relaxation: keep the block while the worst page's predicted latency (with the
/// margin) fits the budget of the data read; reclaim before it could become uncorrectable.
/// Without any hint (budget 0) this is [`ErrorBasedReclaim`].
#[derive(serde::Serialize, serde::Deserialize)]
pub struct HintedReclaim {
    pub margin: f64,
}

#[typetag::serde]
impl ReclaimPolicy for HintedReclaim {
    fn name(&self) -> &'static str {
        "hinted"
    }
    fn reclaim(&self, s: &BlockReadState) -> bool {
        exceeds(s, self.margin, s.allowed_steps())
    }
    fn deadline(&self, s: &BlockReadState) -> bool {
        exceeds(s, deadline_margin(self.margin), s.allowed_steps())
    }
}

/// Retry-only firmware (the paper's SSD-I/-J, which keep their long reads): retries absorb the
/// errors; the block is rewritten only as a last resort, when its worst page (with the margin)
/// would be past the last retry step, before any data is lost.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct RetryOnlyReclaim {
    pub margin: f64,
}

#[typetag::serde]
impl ReclaimPolicy for RetryOnlyReclaim {
    fn name(&self) -> &'static str {
        "retry_only"
    }
    fn reclaim(&self, s: &BlockReadState) -> bool {
        exceeds(s, self.margin, last_step(s))
    }
    fn deadline(&self, s: &BlockReadState) -> bool {
        exceeds(s, deadline_margin(self.margin), last_step(s))
    }
}

fn last_step(s: &BlockReadState) -> u32 {
    s.retry.map_or(0, |r| r.params().max_steps)
}

/// Does the worst page (with the margin) need more than `allowed` retries, and more than a
/// rewrite would leave it with? An uncorrectable prediction always reclaims, unless even a
/// freshly rewritten page would be uncorrectable (the block is worn out: nothing to gain).
fn exceeds(s: &BlockReadState, margin: f64, allowed: u32) -> bool {
    match (s.predicted_steps(margin), s.floor_steps(margin)) {
        (_, None) => false,
        (None, Some(_)) => true,
        (Some(steps), Some(floor)) => steps > allowed.max(floor),
    }
}

/// Hint commands resolved to sector ranges and nanoseconds.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct HintTable {
    /// (first sector, end sector (exclusive), stream, budget in ns).
    hints: Vec<(u64, u64, Option<u16>, u64)>,
    default_ns: u64,
}

impl HintTable {
    /// From the configuration.
    pub fn new(cfg: &ReliabilityConfig) -> Self {
        let ns = |us: f64| (us * 1000.0).round() as u64;
        HintTable {
            hints: cfg
                .hints
                .iter()
                .map(|h| (h.lba_start.unwrap_or(0), h.lba_end.unwrap_or(u64::MAX), h.stream, ns(h.budget_us)))
                .collect(),
            default_ns: ns(cfg.default_budget_us),
        }
    }

    /// Budget of a read of sectors `[start, end)` on `stream`, and whether a hint matched:
    /// the smallest budget among the hints it matches, else the default.
    pub fn budget_ns(&self, start: u64, end: u64, stream: u16) -> (u64, bool) {
        let mut best: Option<u64> = None;
        for &(s, e, st, b) in &self.hints {
            if start < e && s < end && st.is_none_or(|x| x == stream) {
                best = Some(best.map_or(b, |x| x.min(b)));
            }
        }
        match best {
            Some(b) => (b, true),
            None => (self.default_ns, false),
        }
    }

    /// Budget of a read that may carry its own budget (`request_us`, 0 = none): the request's
    /// budget wins over the hint commands and the default.
    pub fn request_budget_ns(&self, start: u64, end: u64, stream: u16, request_us: u32) -> (u64, bool) {
        if request_us > 0 {
            (request_us as u64 * 1000, true)
        } else {
            self.budget_ns(start, end, stream)
        }
    }
}

/// splitmix64 finaliser.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A standard normal number derived from `key` (Box-Muller on two hashed uniforms), clamped
/// to `[-PAGE_Z_MAX, PAGE_Z_MAX]`.
#[inline]
pub fn hashed_normal(seed: u64, key: u64) -> f64 {
    let h1 = mix(seed ^ key.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let h2 = mix(h1 ^ 0x5851_f42d_4c95_7f2d);
    let u1 = ((h1 >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    let u2 = (h2 >> 11) as f64 / (1u64 << 53) as f64;
    let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
    z.clamp(-PAGE_Z_MAX, PAGE_Z_MAX)
}

/// Error-aware reads: RBER model, ECC and read retry, reclaim policy, hint commands.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ErrorAwareReads {
    rber: Option<PowerLawRber>,
    /// Read retry per bit mode (page sizes, hence codewords per page, differ by mode).
    retry: [Option<ReadRetry>; 4],
    /// One read attempt per bit mode, for the reclaim prediction.
    attempt_ns: [u64; 4],
    sigma: f64,
    worst_factor: f64,
    seed: u64,
    base_cycles: f64,
    pages_per_block: u64,
    /// When each block was last opened for programming.
    programmed_at: Vec<u64>,
    reclaim: Box<dyn ReclaimPolicy>,
    hints: HintTable,
    unit_bytes: u64,
    budget_ns: u64,
    /// Compare budgets with the request's predicted latency (`reliability.hint_latency`).
    #[serde(default)]
    request_level: bool,
    /// The current host read's timing, as the FTL last reported it (within one read call).
    #[serde(skip)]
    timing: RequestTiming,
    /// Postpone reclaims to idle windows (`reliability.reclaim_when = "idle"`).
    #[serde(default)]
    postpone: bool,
    /// Per block, the fewest retries a read of its data allowed since it was written
    /// (request-level hints only; `u8::MAX`: none yet).
    #[serde(default)]
    strictest: Vec<u8>,
    /// Place data by budget class (`reliability.budget_placement`): class 1 is data whose
    /// current host read allows at least one retry, its queue left out.
    #[serde(default)]
    placement: bool,
    /// The class of the current host read (within one read call).
    #[serde(skip)]
    class: u8,
    histogram: Vec<u64>,
    hinted_reads: u64,
}

impl ErrorAwareReads {
    /// The page's variation factor (median 1), fixed for the page.
    #[inline]
    pub fn page_factor(&self, block: u32, page: u32) -> f64 {
        if self.sigma == 0.0 {
            return 1.0;
        }
        let key = block as u64 * self.pages_per_block + page as u64;
        (self.sigma * hashed_normal(self.seed, key)).exp()
    }

    /// Nominal RBER (page factor 1) of `block` at `now`.
    pub fn nominal_rber(&self, flash: &FlashArray, block: u32, now: u64) -> f64 {
        self.terms(flash, block, now).total()
    }

    /// The RBER terms (page factor 1) of `block` at `now`; all zero without a model.
    pub fn terms(&self, flash: &FlashArray, block: u32, now: u64) -> RberTerms {
        let Some(m) = &self.rber else {
            return RberTerms { floor: 0.0, wear: 0.0, retention: 0.0, disturb: 0.0 };
        };
        let cycles = flash.erase_count(block) as f64 + self.base_cycles;
        let age_s = now.saturating_sub(self.programmed_at[block as usize]) as f64 / 1e9;
        m.terms(cycles, age_s, flash.reads_since_erase(block) as f64)
    }

    /// The reclaim policy in use.
    pub fn policy(&self) -> &dyn ReclaimPolicy {
        self.reclaim.as_ref()
    }
}

#[typetag::serde]
impl ReadModel for ErrorAwareReads {
    fn begin_host_read(&mut self, first_lpn: u32, units: u32, stream: u16, budget_us: u32) {
        let start = first_lpn as u64 * self.unit_bytes / 512;
        let end = (first_lpn as u64 + units as u64) * self.unit_bytes / 512;
        let (budget, hinted) = self.hints.request_budget_ns(start, end.max(start + 1), stream, budget_us);
        self.budget_ns = budget;
        self.hinted_reads += hinted as u64;
        // Until a sensed page says otherwise (pages in the controller's buffer are not sensed).
        self.class = (budget > 0) as u8;
    }

    fn sense(&mut self, flash: &FlashArray, block: u32, page: u32, now: u64, host: bool) -> ReadOutcome {
        let mode = flash.mode(block).index();
        let terms = self.terms(flash, block, now);
        let nominal = terms.total();
        let mut out = ReadOutcome::CLEAN;
        if let Some(retry) = &self.retry[mode] {
            let rber = (nominal * self.page_factor(block, page)).min(crate::flash::rber::MAX_RBER);
            match retry.steps_needed(rber) {
                Some(s) => out.steps = s,
                None => {
                    out.steps = retry.params().max_steps;
                    out.uncorrectable = true;
                }
            }
            if host {
                let i = if out.uncorrectable { self.histogram.len() - 1 } else { out.steps as usize };
                self.histogram[i] += 1;
            }
        }
        if host {
            let t = &self.timing;
            let (attempt_ns, pages, overhead_ns) = if self.request_level {
                (t.attempt_ns, t.pages, t.queue_ns.saturating_add(t.host_ns))
            } else {
                (self.attempt_ns[mode], 1, 0)
            };
            let strictest = self.strictest.get(block as usize).map_or(u32::MAX, |&x| x as u32);
            let mut state = BlockReadState {
                reads_since_erase: flash.reads_since_erase(block).saturating_add(1),
                worst_rber: nominal * self.worst_factor,
                worst_fresh_rber: (terms.floor + terms.wear) * self.worst_factor,
                retry: self.retry[mode].as_ref(),
                attempt_ns,
                budget_ns: self.budget_ns,
                pages,
                overhead_ns,
                strictest_steps: u32::MAX,
            };
            if self.request_level && !state.fits_without_retry() {
                // The queue alone already breaks the promise: this read is late whatever the
                // block's errors, and a reclaim would only lengthen the queue for the reads
                // behind it, each of which would then reclaim its own block (measured: bursts
                // of dozens of reclaim erases an hour, stalls of seconds). Such a read is held
                // to what its budget allows without the queue, like the block's memory below.
                state.overhead_ns = self.timing.host_ns;
            }
            if let Some(x) = self.strictest.get_mut(block as usize) {
                // What this reader allows, its queue left out, joins the block's memory; the
                // reader itself is held to the strictest earlier one (read before the update).
                let without_queue = BlockReadState { overhead_ns: self.timing.host_ns, ..state };
                *x = (*x as u32).min(without_queue.allowed_steps()) as u8;
                state.strictest_steps = strictest;
            }
            if self.placement {
                // The data's class: does its reader allow a retry (queue left out, not held to
                // earlier readers: the class is the reader's, the block's memory is the block's)?
                let own = BlockReadState {
                    overhead_ns: if self.request_level { self.timing.host_ns } else { 0 },
                    strictest_steps: u32::MAX,
                    ..state
                };
                if own.allowed_steps() == 0 {
                    self.class = 0;
                }
            }
            out.reclaim = self.reclaim.reclaim(&state);
            out.urgent = out.reclaim && (!self.postpone || self.reclaim.deadline(&state));
        }
        out
    }

    fn on_open(&mut self, block: u32, now: u64) {
        self.programmed_at[block as usize] = now;
        if let Some(x) = self.strictest.get_mut(block as usize) {
            *x = u8::MAX; // new data: no reader has asked anything of it yet
        }
    }

    fn wants_request_timing(&self) -> bool {
        self.request_level
    }

    fn request_timing(&mut self, timing: RequestTiming) {
        self.timing = timing;
    }

    fn retry_histogram(&self) -> &[u64] {
        &self.histogram
    }

    fn hinted_reads(&self) -> u64 {
        self.hinted_reads
    }

    fn placement_classes(&self) -> u8 {
        if self.placement {
            2
        } else {
            1
        }
    }

    fn placement_class(&self) -> u8 {
        self.class
    }

    fn reset_stats(&mut self) {
        self.histogram.iter_mut().for_each(|x| *x = 0);
        self.hinted_reads = 0;
    }
}

/// The reclaim policy `reliability.read_reclaim` names.
pub fn build_policy(cfg: &ReliabilityConfig) -> Box<dyn ReclaimPolicy> {
    match cfg.read_reclaim {
        ReadReclaim::ReadCount => Box::new(ReadCountReclaim { threshold: cfg.read_count_threshold }),
        ReadReclaim::ErrorBased => Box::new(ErrorBasedReclaim { margin: cfg.reclaim_margin }),
        ReadReclaim::Hinted => Box::new(HintedReclaim { margin: cfg.reclaim_margin }),
        ReadReclaim::RetryOnly => Box::new(RetryOnlyReclaim { margin: cfg.reclaim_margin }),
        ReadReclaim::None => Box::new(NoReclaim),
    }
}

/// The read model a configuration asks for: [`NoReadModel`] for the baseline (no error
/// model, no reclaim), else [`ErrorAwareReads`].
pub fn build(cfg: &Config, flash: &FlashArray, unit_bytes: u64, seed: u64) -> Result<Box<dyn ReadModel>> {
    let r = &cfg.reliability;
    if r.model == ReliabilityModel::None && r.read_reclaim == ReadReclaim::None {
        return Ok(Box::new(NoReadModel));
    }
    Ok(Box::new(error_aware(cfg, flash, unit_bytes, seed)?))
}

/// [`ErrorAwareReads`] for a configuration (whatever `reliability.model` says about using it).
pub fn error_aware(cfg: &Config, flash: &FlashArray, unit_bytes: u64, seed: u64) -> Result<ErrorAwareReads> {
    let r = &cfg.reliability;
    let with_model = r.model == ReliabilityModel::PowerLaw;
    let rber = if with_model { Some(PowerLawRber::new(r.rber_params()?)?) } else { None };
    // Only a budget-aware policy needs the request's timing.
    let request_level = r.hint_latency == HintLatency::Request && r.read_reclaim == ReadReclaim::Hinted;
    let mut retry: [Option<ReadRetry>; 4] = [None, None, None, None];
    let mut attempt_ns = [0u64; 4];
    for mode in BitMode::ALL {
        let bytes = flash.page_bytes(mode);
        if with_model {
            retry[mode.index()] = Some(ReadRetry::new(r.read_retry.clone(), r.ecc.for_page(bytes))?);
        }
        let sense = (0..mode.bits()).map(|p| flash.read_ns(mode, p)).max().unwrap_or(0);
        let transfer = (bytes as f64 * 1000.0 / cfg.flash.channel_mb_per_s).round() as u64;
        attempt_ns[mode.index()] = sense + transfer;
    }
    Ok(ErrorAwareReads {
        rber,
        retry,
        attempt_ns,
        sigma: r.page_sigma,
        worst_factor: (PAGE_Z_MAX * r.page_sigma).exp(),
        seed,
        base_cycles: r.base_cycles as f64,
        pages_per_block: flash.geo.pages_per_block as u64,
        programmed_at: vec![0; flash.geo.blocks() as usize],
        reclaim: build_policy(r),
        hints: HintTable::new(r),
        unit_bytes,
        budget_ns: 0,
        request_level,
        timing: RequestTiming::default(),
        postpone: r.reclaim_when == ReclaimWhen::Idle,
        strictest: if request_level { vec![u8::MAX; flash.geo.blocks() as usize] } else { Vec::new() },
        placement: r.budget_placement,
        class: 0,
        histogram: vec![0; r.read_retry.max_steps as usize + 2],
        hinted_reads: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::flash::rber::ReadRetryParams;
    use crate::flash::wear::FixedPeLimit;
    use crate::flash::Geometry;

    fn config(sets: &[&str]) -> Config {
        let mut b = ConfigBuilder::new();
        for s in sets {
            b = b.set(s).unwrap();
        }
        b.build().unwrap()
    }

    fn flash(cfg: &Config) -> FlashArray {
        let geo = Geometry::new(&cfg.geometry);
        FlashArray::new(geo, &cfg.flash, Box::new(FixedPeLimit::new([100_000; 4])), None)
    }

    #[test]
    fn hashed_page_factors_are_lognormal_with_the_configured_sigma() {
        let n = 200_000u64;
        let zs: Vec<f64> = (0..n).map(|k| hashed_normal(7, k)).collect();
        let mean = zs.iter().sum::<f64>() / n as f64;
        let var = zs.iter().map(|z| (z - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.02, "variance {var}");
        // Normal tail: P(Z > 2) = 2.275%.
        let above2 = zs.iter().filter(|&&z| z > 2.0).count() as f64 / n as f64;
        assert!((above2 - 0.02275).abs() < 0.002, "P(Z>2) = {above2}");
        assert!(zs.iter().all(|z| z.abs() <= PAGE_Z_MAX));
        // Same key, same factor; the seed changes it.
        assert_eq!(hashed_normal(7, 42), hashed_normal(7, 42));
        assert_ne!(hashed_normal(7, 42), hashed_normal(8, 42));
    }

    #[test]
    fn hints_pick_the_smallest_matching_budget() {
        let cfg = config(&[
            "reliability.default_budget_us=100",
            "reliability.hints=[{lba_start=0, lba_end=1000, budget_us=500}, {stream=2, budget_us=300}, {lba_start=900, lba_end=2000, stream=1, budget_us=800}]",
        ]);
        let t = HintTable::new(&cfg.reliability);
        assert_eq!(t.budget_ns(0, 8, 0), (500_000, true));
        assert_eq!(t.budget_ns(0, 8, 2), (300_000, true));
        assert_eq!(t.budget_ns(1000, 1008, 0), (100_000, false));
        assert_eq!(t.budget_ns(1000, 1008, 1), (800_000, true));
        assert_eq!(t.budget_ns(996, 1004, 1), (500_000, true), "overlaps both ranges");
        assert_eq!(t.budget_ns(5000, 5008, 2), (300_000, true), "stream hint without a range");
        // A request's own budget wins over every hint command and the default, larger or smaller.
        assert_eq!(t.request_budget_ns(0, 8, 2, 1000), (1_000_000, true));
        assert_eq!(t.request_budget_ns(0, 8, 2, 120), (120_000, true));
        assert_eq!(t.request_budget_ns(1000, 1008, 0, 250), (250_000, true));
        assert_eq!(t.request_budget_ns(1000, 1008, 0, 0), (100_000, false), "0 = no budget of its own");
        assert_eq!(t.request_budget_ns(0, 8, 2, 0), (300_000, true));
    }

    #[test]
    fn budgets_translate_into_allowed_retries() {
        let retry =
            ReadRetry::new(ReadRetryParams::default(), crate::flash::rber::EccParams::default().for_page(16384))
                .unwrap();
        let s = |budget_ns| BlockReadState {
            reads_since_erase: 0,
            worst_rber: 0.0,
            worst_fresh_rber: 0.0,
            retry: Some(&retry),
            attempt_ns: 100_000,
            budget_ns,
            pages: 1,
            overhead_ns: 0,
            strictest_steps: u32::MAX,
        };
        assert_eq!(s(0).allowed_steps(), 0);
        assert_eq!(s(199_999).allowed_steps(), 0);
        assert_eq!(s(200_000).allowed_steps(), 1);
        assert_eq!(s(450_000).allowed_steps(), 3);
        assert_eq!(s(u64::MAX).allowed_steps(), 8, "capped at the last retry step");
        assert_eq!(s(0).latency_ns(3), 400_000);
        // At the request level: two pages, 50 us of queue and host transfer on top.
        let r = |budget_ns| BlockReadState { pages: 2, overhead_ns: 50_000, ..s(budget_ns) };
        assert_eq!(r(249_999).allowed_steps(), 0, "two pages, one attempt each, do not fit");
        assert_eq!(r(450_000).allowed_steps(), 1, "2 x 2 attempts + 50 us = 450 us");
        assert_eq!(r(649_999).allowed_steps(), 1);
        assert_eq!(r(40_000).allowed_steps(), 0, "the queue alone passes the budget: no retry");
        let strict = |budget_ns| BlockReadState { strictest_steps: 1, ..s(budget_ns) };
        assert_eq!(strict(450_000).allowed_steps(), 1, "an earlier, stricter reader of the block caps it");
    }

    #[test]
    fn policies_order_their_thresholds() {
        // Walk a block's worst-page RBER up: error_based reclaims first, hinted (2 retries
        // allowed) later, and hinted with an unlimited budget still before uncorrectable.
        let retry =
            ReadRetry::new(ReadRetryParams::default(), crate::flash::rber::EccParams::default().for_page(16384))
                .unwrap();
        let first = |policy: &dyn ReclaimPolicy, budget_ns: u64| {
            (0..4000)
                .map(|i| 1e-4 * 1.002f64.powi(i))
                .find(|&w| {
                    policy.reclaim(&BlockReadState {
                        reads_since_erase: 0,
                        worst_rber: w,
                        worst_fresh_rber: 1e-4,
                        retry: Some(&retry),
                        attempt_ns: 100_000,
                        budget_ns,
                        pages: 1,
                        overhead_ns: 0,
                        strictest_steps: u32::MAX,
                    })
                })
                .unwrap()
        };
        let crit = retry.critical_rber();
        let f = retry.params().rber_reduction_per_step;
        let eb = first(&ErrorBasedReclaim { margin: 0.9 }, 0);
        let h0 = first(&HintedReclaim { margin: 0.9 }, 0);
        let h2 = first(&HintedReclaim { margin: 0.9 }, 300_000);
        let hmax = first(&HintedReclaim { margin: 0.9 }, u64::MAX);
        let rel = |a: f64, b: f64| (a / b - 1.0).abs();
        assert!(rel(eb, 0.9 * crit) < 0.003, "{eb} vs {}", 0.9 * crit);
        assert_eq!(h0, eb, "hinted without a budget is error_based");
        assert!(rel(h2, 0.9 * crit * f * f) < 0.003);
        assert!(rel(hmax, 0.9 * crit * f.powi(8)) < 0.003);
        assert!(hmax < crit * f.powi(8), "before uncorrectable");
        // Retry-only reclaims where an unlimited hint does: at the last retry step, no sooner.
        assert_eq!(first(&RetryOnlyReclaim { margin: 0.9 }, 0), hmax);
        // A block whose errors come from wear alone is not reclaimed for them.
        let worn = |worst: f64, fresh: f64| BlockReadState {
            reads_since_erase: 0,
            worst_rber: worst,
            worst_fresh_rber: fresh,
            retry: Some(&retry),
            attempt_ns: 100_000,
            budget_ns: 0,
            pages: 1,
            overhead_ns: 0,
            strictest_steps: u32::MAX,
        };
        let eb = ErrorBasedReclaim { margin: 0.9 };
        assert!(!eb.reclaim(&worn(2.0 * crit, 2.0 * crit)), "rewriting would not help");
        assert!(eb.reclaim(&worn(2.0 * crit * f * f, 2.0 * crit)), "disturb on top of wear");
        assert!(!eb.reclaim(&worn(1.0, 1.0)), "a worn-out block is not reclaimed in a loop");
    }

    #[test]
    fn a_queue_that_alone_passes_the_budget_does_not_reclaim() {
        let cfg = config(&[
            "reliability.model=\"power_law\"",
            "reliability.page_sigma=0",
            "reliability.base_cycles=3000",
            "reliability.read_reclaim=\"hinted\"",
            "reliability.hint_latency=\"request\"",
        ]);
        let fl = flash(&cfg);
        let mut m = error_aware(&cfg, &fl, 4096, 1).unwrap();
        m.on_open(0, 0);
        // An age at which block 0's worst page needs a few retries (still correctable).
        let retry = m.retry[fl.mode(0).index()].clone().unwrap();
        let day = 86_400 * 1_000_000_000u64;
        let steps = |t| retry.steps_needed(m.nominal_rber(&fl, 0, t) * m.worst_factor);
        let now = (1..20_000u64).map(|d| d * day).find(|&t| steps(t).is_some_and(|s| s >= 2)).unwrap();
        let s = steps(now).unwrap() as u64;
        assert!(s <= 4, "{s} retries");
        // A budget the block's retries fit in with two steps to spare, on an idle die.
        let (attempt, host) = (100_000, 10_000);
        let budget = host + (s + 3) * attempt;
        let read = |m: &mut ErrorAwareReads, queue_ns: u64| {
            m.on_open(0, 0); // a fresh block memory for each reader
            m.begin_host_read(0, 1, 0, (budget / 1000) as u32);
            m.request_timing(RequestTiming { pages: 1, attempt_ns: attempt, queue_ns, host_ns: host });
            m.sense(&fl, 0, 0, now, true).reclaim
        };
        assert!(!read(&mut m, 0), "an idle die: the retries fit the budget");
        assert!(read(&mut m, budget - host - attempt), "a queue that leaves room for one attempt only: reclaim");
        assert!(!read(&mut m, budget), "the queue alone passes the budget: reclaim cannot help this read");
    }

    #[test]
    fn sense_follows_the_model_and_retention_clock() {
        let cfg =
            config(&["reliability.model=\"power_law\"", "reliability.page_sigma=0", "reliability.base_cycles=3000"]);
        let fl = flash(&cfg);
        let mut m = error_aware(&cfg, &fl, 4096, 1).unwrap();
        // tlc-3d at 3,000 cycles, fresh: 3.1e-4 (docs/models/bit-errors.md table).
        let fresh = m.nominal_rber(&fl, 0, 0);
        assert!((fresh - 3.1e-4).abs() < 0.05e-4, "{fresh}");
        // One year of retention adds b * 3000 * 365^0.5 = 3.0e-4.
        m.on_open(0, 0);
        let year = m.nominal_rber(&fl, 0, 365 * 86_400 * 1_000_000_000);
        assert!((year - fresh - 3.0e-4).abs() < 0.02e-4, "{year}");
        let out = m.sense(&fl, 0, 0, 0, true);
        assert_eq!(out, ReadOutcome::CLEAN);
        assert_eq!(m.retry_histogram()[0], 1);
    }
}
