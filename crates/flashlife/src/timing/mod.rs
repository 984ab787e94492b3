//! Timing: *when* flash work happens.
//!
//! The FTL, the open-channel device and the techniques decide *what* happens (which unit goes
//! where, which victim, which page moves) and describe each flash operation as a
//! [`Transaction`]; a [`Scheduler`] owns the resources (host link, channel buses, dies) and
//! decides when each transaction runs. Callers hold completions as [`Done`] and pass them along
//! as dependencies ("after this read"); `Done` has no arithmetic, so they cannot add durations
//! themselves: every duration comes from here.
//!
//! Schedulers (`timing.scheduler` chooses):
//! - [`Reservation`]: each resource keeps the time it next becomes free and a transaction is
//!   booked on its resources, in order, at the earliest time all are free. Work is served in
//!   booking order with no reordering, which costs a few additions per operation and is what
//!   makes whole-lifetime runs fast; it is the reference the golden results were recorded with.
//! - [`QueuedScheduler`] over the [`Queued`] engine: a discrete-event engine with per-die
//!   class queues, a channel arbiter, pluggable policies and program/erase suspension; it
//!   reports completions as its clock advances instead of at submission, so the run loop
//!   drives it through [`EventDriven`].

mod done;
pub mod queued;
mod queued_drive;
mod reservation;

pub use done::Done;
pub use queued::{Completion, Queued, QueuedParams, QueuedStats, Suspension};
pub use queued_drive::{QueuedScheduler, SchedulerSummary};
pub use reservation::{Reservation, Utilisation};

use crate::flash::BitMode;
use crate::stats::Cause;

/// What a transaction does to its resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Op {
    /// The die senses a page, then `bytes` cross its channel to the controller. The die stays
    /// busy until its page register is drained.
    Read,
    /// `bytes` cross the channel into the die, then it programs the page.
    Program,
    /// The die erases a block (no data moves).
    Erase,
    /// A command with `bytes` of data crosses the host link (no die).
    HostTransfer,
    /// `bytes` move between the controller and its DRAM data cache (`[cache]`): a fixed
    /// latency, no die, channel or link (the DRAM's bandwidth is far above the flash's).
    Dram,
    /// The controller runs an encoder (Reusable SSD's WOM encoding or ECC over a page): half
    /// the read time of `page` in `mode` (the Reusable SSD paper's worst-case setting, its
    /// section 6.6), occupying no die, channel or link.
    Encode,
    /// Completes when its inputs have, taking no time or resource: the queued scheduler's
    /// join of two pending completions ([`Scheduler::join`]). Never submitted by the FTL.
    Join,
}

impl Op {
    /// Does the operation occupy a die (and so count as work queued on it)?
    #[inline]
    pub fn uses_die(self) -> bool {
        matches!(self, Op::Read | Op::Program | Op::Erase)
    }
}

/// One flash (or host link) operation, as the FTL decided it: what, where, how much data,
/// and on whose behalf. Small and `Copy`: built on the stack per operation, never allocated.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Transaction {
    pub op: Op,
    /// The die (unused for host transfers).
    pub die: u32,
    /// The physical block (unused for host transfers).
    pub block: u32,
    /// The page within the block; with `mode`, it selects the page type's latency.
    pub page: u32,
    /// The block's bit mode when the operation runs.
    pub mode: BitMode,
    /// Bytes moved over the channel (or the host link). A multi-plane operation is one die
    /// operation that moves the data of every plane it covers.
    pub bytes: u64,
    /// On whose behalf: host, GC, wear leveling, reclaim, bad-block handling, migration,
    /// second writes. A scheduler may give classes different priorities.
    pub class: Cause,
    /// Work a host request waits for although it is not the host's data (a cached mapping
    /// table's translation page, read on a miss): counted under `class`, scheduled as host
    /// work ([`Transaction::on_host_path`]). Set with [`Transaction::for_host`].
    #[serde(default)]
    pub for_host: bool,
}

impl Transaction {
    /// Sense `page` of `block` on `die` and move `bytes` of it to the controller.
    #[inline]
    pub fn read(die: u32, block: u32, page: u32, mode: BitMode, bytes: u64, class: Cause) -> Self {
        Transaction { op: Op::Read, die, block, page, mode, bytes, class, for_host: false }
    }

    /// Move `bytes` into `die` and program `page` of `block`.
    #[inline]
    pub fn program(die: u32, block: u32, page: u32, mode: BitMode, bytes: u64, class: Cause) -> Self {
        Transaction { op: Op::Program, die, block, page, mode, bytes, class, for_host: false }
    }

    /// Erase `block` on `die`.
    #[inline]
    pub fn erase(die: u32, block: u32, mode: BitMode, class: Cause) -> Self {
        Transaction { op: Op::Erase, die, block, page: 0, mode, bytes: 0, class, for_host: false }
    }

    /// `bytes` of host data read from or written into the DRAM data cache.
    #[inline]
    pub fn dram(bytes: u64) -> Self {
        Transaction::off_die(Op::Dram, bytes)
    }

    /// One encoder run for `page` of `block` (in `mode`) on `die`'s behalf.
    #[inline]
    pub fn encode(die: u32, block: u32, page: u32, mode: BitMode, class: Cause) -> Self {
        Transaction { op: Op::Encode, die, block, page, mode, bytes: 0, class, for_host: false }
    }

    /// The same work, on a host request's path: scheduled as host work while still counted
    /// under its own cause (a translation page read on a cached map's miss, which the
    /// request's data work waits for).
    #[inline]
    pub fn for_host(self) -> Self {
        Transaction { for_host: true, ..self }
    }

    /// Is this work on a host request's path (the host's data, Reusable SSD's second writes,
    /// or work marked [`Transaction::for_host`])? A scheduler that queues by class gives it the
    /// host's classes, and the request it is submitted in waits for it.
    #[inline]
    pub fn on_host_path(&self) -> bool {
        self.for_host || matches!(self.class, Cause::Host | Cause::SecondWrite)
    }

    /// A host command carrying `bytes` over the host link.
    #[inline]
    pub fn host(bytes: u64) -> Self {
        Transaction::off_die(Op::HostTransfer, bytes)
    }

    /// Host data moving off the flash (no die, block or page; the fields are unused).
    #[inline]
    fn off_die(op: Op, bytes: u64) -> Self {
        Transaction { op, die: 0, block: 0, page: 0, mode: BitMode::Slc, bytes, class: Cause::Host, for_host: false }
    }
}

/// Which resources must be free before background work planned into an idle window may
/// start (see [`Scheduler::fits_before`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// The dies the transactions use.
    Dies,
    /// The dies and their channel buses.
    DiesAndChannels,
}

/// Decides when transactions run, on the resources it owns.
///
/// Times are integer nanoseconds. `submit` books a transaction that may start no earlier
/// than `after` (its inputs' completion, or the request's issue) and returns its
/// completion as a [`Done`]; the caller passes that on to whatever depends on it.
#[typetag::serde(tag = "scheduler")]
pub trait Scheduler: Send {
    /// The name `timing.scheduler` selects this scheduler by (recorded in results).
    fn name(&self) -> &'static str;

    /// Book `tx`, which may start after `after`; returns its completion.
    fn submit(&mut self, tx: &Transaction, after: Done) -> Done;

    /// Is timing on? Off (fast-forward, e.g. preconditioning), every transaction completes
    /// when it may start.
    fn timing(&self) -> bool;

    /// Switch timing on or off.
    fn set_timing(&mut self, on: bool);

    /// While on, work submitted on the host's path is not part of the current request (a
    /// write-back device's programs of buffered data: the host was answered when the data
    /// was buffered; a DRAM cache's destage of a line a read evicted), and `wait_for` adds
    /// nothing to it. Only a scheduler that completes work later needs it.
    fn set_detached(&mut self, _on: bool) {}

    /// The current request also waits for what `completion` (a value `submit` returned)
    /// names (a write-back device's full buffer frees when an earlier page's program ends).
    /// Only a scheduler that completes work later needs it.
    fn wait_for(&mut self, _completion: Done) {}

    /// Is cleaning stepped on request? Then the FTL, at the soft threshold, records that a
    /// pool owes cleaning ([`Scheduler::cleaning_owed`]) instead of deciding it at once, and
    /// the run loop has it decide a step at a time when [`EventDriven::background_wanted`]
    /// names a die. A scheduler that books work as it is submitted (the reservation one) has
    /// no later moment to ask at, so the FTL decides it all at once there.
    fn steps_cleaning(&self) -> bool {
        false
    }

    /// The FTL has cleaning owed on `die`, to be stepped when the die runs short of
    /// background work (only called when [`Scheduler::steps_cleaning`]).
    fn cleaning_owed(&mut self, _die: u32) {}

    /// The hard threshold: a host write found `die`'s pool with no free block above the
    /// reserve, and the FTL has just decided the cleaning it needed at once. Background work
    /// goes first on the die until the background work queued there is back to what stepping
    /// keeps (only called when [`Scheduler::steps_cleaning`]).
    fn hard_threshold(&mut self, _die: u32) {}

    /// A pool of `die` owes cleaning and is one block from its reserve (`on`), or none is any
    /// more: while on, background work goes first there, so the stepped cleaning catches up
    /// before host writes reach the reserve (only called when [`Scheduler::steps_cleaning`]).
    fn cleaning_urgent(&mut self, _die: u32, _on: bool) {}

    /// A pool of `die` has a failed or reclaimed block's data still to move (`on`), or none
    /// any more (only called when [`Scheduler::steps_cleaning`]): a scheduler that paces
    /// background work gives that work its share (`timing.chore_ratio`).
    fn chores_owed(&mut self, _die: u32, _on: bool) {}

    /// The pace that keeps `die`'s urgent pool level: `background` transactions per `host`
    /// write (from the victim being cleaned). A scheduler that paces cleaning there by the
    /// victim (`timing.urgent_gc_pace = "victim"`) uses it; the others ignore it.
    fn cleaning_pace(&mut self, _die: u32, _background: u32, _host: u32) {}

    /// Count, one by one, host-path work that waits on its die while the die runs background
    /// work of `cause` (the caller's own, e.g. a device's migration copies), for
    /// [`Scheduler::waits_behind_watched`]. A scheduler that books work as it is submitted
    /// (the reservation one) leaves it to the caller, who knows there what each waits for.
    fn watch_background(&mut self, _cause: Cause) {}

    /// The waits [`Scheduler::watch_background`] asked for: host transactions that waited
    /// behind that work, and the longest wait (ns, the die's time on that work while the
    /// transaction was ready). `None`: this scheduler counts none.
    fn waits_behind_watched(&self) -> Option<(u64, u64)> {
        None
    }

    /// Has the work `d` names finished, and when? `Some` with its completion as a plain time,
    /// `None` while it is pending. A scheduler that knows completions at submission (the
    /// reservation scheduler, fast-forward) answers `Some(d)`; one that learns them later
    /// answers from what has happened, so that state kept by completion (a write buffer's
    /// space) follows the work, not estimates of it.
    fn completed(&self, d: Done) -> Option<Done> {
        Some(d)
    }

    /// Work that completes when both `a` and `b` have: what waits for both waits for this.
    /// Where completions are times (the reservation scheduler, fast-forward) it is
    /// [`Done::later`]. The queued scheduler's values are estimates, and an estimate made long
    /// ago can be far earlier than the work's real completion (a program that has since
    /// queued behind hundreds of others): the later *estimate* may name the one that finishes
    /// first. There, two pending completions are joined by a transaction that waits for both.
    /// Use it where both inputs bind (a write-back buffer's page waits for its data and for
    /// the program that frees its space); `Done::later` stays right where either one is
    /// known to be the later.
    fn join(&mut self, a: Done, b: Done) -> Done {
        Done::later(a, b)
    }

    /// When `die` could start new work: for allocation that sends work where it will wait
    /// least. A query; books nothing.
    fn die_free_at(&self, die: u32) -> u64;

    /// Every die's [`Scheduler::die_free_at`] at once, as `base + offsets[die]`: for an
    /// allocator that compares all dies for every unit it places (`least_loaded`), which
    /// would otherwise make a call per die. `None`: ask die by die.
    fn die_free_offsets(&self) -> Option<(u64, &[u64])> {
        None
    }

    /// How long `tx` takes on its resources with nothing in its way: for predictions (a read
    /// attempt, a request's host transfer). A query; books nothing.
    fn cost_ns(&self, tx: &Transaction) -> u64;

    /// How long work submitted to `die` at `now` would wait for the die (its queue; for a
    /// scheduler that lets host work pass background work, the host work queued). A query.
    fn die_backlog_ns(&self, die: u32, now: u64) -> u64 {
        self.die_free_at(die).saturating_sub(now)
    }

    /// When background work could start on `die` in the idle window `[from, until)` (times
    /// in ns), as what that work waits for: `None` if the die is busy until the window closes.
    fn idle_start(&self, die: u32, from: u64, until: u64) -> Option<Done>;

    /// Would `txs`, run back to back from when the `wait` resources of their dies are free
    /// (and no earlier than `from`), all finish by `until`? Planning only: books nothing.
    fn fits_before(&self, txs: &[Transaction], from: u64, until: u64, wait: Wait) -> bool;

    /// Busy time per resource kind so far.
    fn utilisation(&self) -> Utilisation;

    /// The run loop's side of a scheduler that completes work later than it is submitted
    /// (`None`: every completion is known at submission, as the reservation scheduler's is).
    fn events(&mut self) -> Option<&mut dyn EventDriven> {
        None
    }

    /// The scheduler's own section of the summary (`None`: nothing beyond the latencies).
    fn summary(&self) -> Option<SchedulerSummary> {
        None
    }

    /// Cumulative busy times and queue integrals, for the time series' per-interval columns
    /// (`None`: the scheduler keeps none). Called once per row: it also closes the interval
    /// of the figures no difference of totals gives (the longest queues), and the next
    /// interval starts.
    fn interval_totals(&mut self) -> Option<crate::stats::timeseries::SchedTotals> {
        None
    }
}

/// A host request whose flash work (and, for a read, its data's trip to the host) is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Finished {
    /// The slot the run loop gave it in `begin_request`.
    pub request: u32,
    pub finish: u64,
    /// Time its transactions waited, ready, while their die ran background work.
    pub behind_background_ns: u64,
    /// Some of its work ran on a die at the hard threshold (out of erased blocks, background
    /// work first).
    pub hard_threshold: bool,
}

/// How the run loop drives a scheduler that reports completions as its clock advances.
///
/// A request is issued at the clock: `begin_request(slot)`, then the drive's calls
/// (`host_transfer`, `write` or `read`), then `end_request(bytes)` with the bytes to send to
/// the host once its flash work is done (a read's data; 0 for a write). Its [`Finished`]
/// comes back from `advance` (or at once from `end_request`, when it had nothing to wait
/// for). Between requests the loop calls `advance` no further than `next_event_time`, so
/// that follow-up work starts at the instant its input finishes.
pub trait EventDriven {
    /// The clock.
    fn now(&self) -> u64;
    /// Host work submitted from now until `end_request` belongs to request `slot`.
    fn begin_request(&mut self, slot: u32);
    /// [`EventDriven::begin_request`] for a request of a flow (`[[flows]]`): `high`, its host
    /// work goes ahead of normal-priority work in the dies' queues. A scheduler without
    /// queues to order ignores it.
    fn begin_request_prioritised(&mut self, slot: u32, _high: bool) {
        self.begin_request(slot);
    }
    /// The request has submitted everything; `transfer_bytes` go to the host after it.
    fn end_request(&mut self, transfer_bytes: u64, out: &mut Vec<Finished>);
    /// When something next happens (`None`: nothing in flight).
    fn next_event_time(&self) -> Option<u64>;
    /// Handle everything due by `until`; requests finished go to `out`.
    fn advance(&mut self, until: u64, out: &mut Vec<Finished>);
    /// Advance to the next event, and on from event to event while nothing happens that the
    /// run loop answers (no request finishes, no die asks for background work) and the next
    /// event is due by `limit`. Each event is handled exactly as `advance` to its time
    /// would: this only saves the loop's round trips between them.
    fn advance_quiet(&mut self, limit: u64, out: &mut Vec<Finished>) {
        if let Some(e) = self.next_event_time() {
            self.advance(e, out);
        }
        let _ = limit;
    }
    /// A die that owes cleaning ([`Scheduler::cleaning_owed`]) and is running short of
    /// background work: the run loop has the FTL decide one step there (`Drive::step_cleaning`)
    /// and reports back with [`EventDriven::background_stepped`]. The scheduler asks and the
    /// FTL decides, so neither layer reaches into the other: the run loop sits above both.
    fn background_wanted(&mut self) -> Option<u32> {
        None
    }
    /// The FTL stepped `die`'s cleaning; `more`: it may have more to step there (otherwise it
    /// owes nothing until it says so again).
    fn background_stepped(&mut self, _die: u32, _more: bool) {}
}
