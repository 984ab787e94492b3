//! The queued scheduler: a discrete-event engine with per-die class queues, a channel
//! arbiter, pluggable policies and program/erase suspension.
//!
//! Unlike [`Reservation`](crate::timing::Reservation), which books each transaction on its
//! resources the moment it is submitted, this engine holds submitted work in queues and
//! decides what runs only when a resource frees, so work can be reordered by class, GC can
//! be interleaved step by step, and a read can suspend a program. The caller (the run loop)
//! learns of completions by advancing the engine's clock.
//!
//! # Contract
//!
//! - **Clock.** [`Queued::now`] is the latest `until` given to [`Queued::advance`] (0 at
//!   first). Time only moves forward.
//! - **Submit.** [`Queued::submit`]`(tx, ready_at, token)` hands over a transaction that may
//!   start no earlier than `ready_at`; a `ready_at` before the clock means "ready now".
//!   `token` is the caller's name for it and comes back in its [`Completion`]; the engine
//!   never interprets it. Submitting never runs anything: work starts inside `advance`, and
//!   everything that becomes ready at one instant is queued before any die picks, so the
//!   policy sees all of it (a host read and a GC read submitted for the same instant are
//!   ordered by the policy, not by the order of the calls).
//! - **Advance.** [`Queued::advance`]`(until, out)` handles every event due at or before
//!   `until` in time order and appends each finished transaction to `out` in completion
//!   order (ties in the order they were scheduled), then sets the clock to `until`.
//!   [`Queued::next_event_time`] is the earliest time something can happen (`None`: nothing
//!   in flight).
//! - **Reacting to a completion.** To submit follow-up work at the instant a transaction
//!   completes (a GC program after its read; the next request of a closed loop), advance no
//!   further than `next_event_time()` (and the caller's own next arrival): the completions
//!   handed back are then all at the new clock, and work submitted with `ready_at` = their
//!   `finish` starts then. Advancing further first is allowed but clamps such follow-ups to
//!   the later clock. The run loop's step is therefore
//!   `t = min(next_event_time, next arrival); advance(t); react; submit arrivals at t`.
//! - **Asking about dies.** [`Queued::is_idle`] (nothing running or suspended) and
//!   [`Queued::queue_len`] (ready work waiting, by class) answer as of the clock, for dynamic
//!   write allocation and GC pacing. [`Queued::set_urgent`] is the caller's hard-threshold
//!   flag for a die (its free blocks are nearly gone): the priority policy then serves
//!   background work first on that die until the flag is cleared.
//!
//! # Resources and costs
//!
//! One host link (command overhead plus bytes over its bandwidth, FIFO), channel buses
//! (bytes over bandwidth) and dies (array times from [`ArrayTimes`] by bit mode and page
//! type). Per operation the costs are [`Reservation`](crate::timing::Reservation)'s, so with
//! one transaction in flight at a time both give identical completions:
//! - **read**: the die senses (the channel is not needed), then asks for its channel and
//!   holds the sensed page in its register until the bus is granted and the data has
//!   crossed; the die is busy from the sense until the transfer ends;
//! - **program**: starts only when the die and its channel are both free; the data crosses
//!   into the die, then the die programs (the array phase);
//! - **erase**: the die only.
//!
//! # Channel arbitration
//!
//! A free channel first serves dies holding sensed data (in the order their senses ended):
//! they are blocked until drained, and a held die serves nobody. Then idle dies whose pick
//! is a program, in the order they asked; each such die re-picks when granted, since a
//! better candidate (a host read, which needs no bus to start) may have arrived meanwhile. A
//! die waiting for the bus is idle: a newly arrived read starts on it at once.
//!
//! # Dies and suspension
//!
//! A die picks (through its [`Policy`]) when it is idle and has ready work. With
//! [`Suspension`] on, a host read arriving at a die busy with a program or erase suspends
//! that operation if enough of its array time remains and it has not been suspended too
//! often (the preemption matrix: read over program, read over erase): the die spends the
//! suspend overhead, serves queued host reads (at most `reads_per_suspension`), then spends
//! the resume overhead and finishes the remaining array time. Only the array phase
//! suspends: a read arriving during a program's data-in suspends it once the data is in.
//! One operation per die may be suspended at a time; reads are never suspended. The check
//! is made when a read arrives, so an operation started while host reads already waited
//! (FIFO order, or background first on an urgent die) is not suspended for them.

mod die;
mod engine;
mod events;
mod policy;
mod slab;
mod stats;

#[cfg(test)]
mod tests;

pub use policy::{Candidates, Class, Fifo, GcRatio, NearReserve, Policy, Priority, CLASSES};
pub use stats::{DepthStats, QueuedStats};

use crate::flash::ArrayTimes;
use crate::stats::Cause;
use crate::timing::Transaction;
use die::Die;
use engine::Channel;
use events::Events;
use slab::{DieQueues, RecBits, Slab};
use stats::Counters;

/// A finished transaction, handed back by [`Queued::advance`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// The caller's token from `submit`.
    pub token: u32,
    /// When it was ready to start (`ready_at`, or the clock if that was later).
    pub ready: u64,
    /// When it got its first resource (its die, or for a program its die and channel
    /// together, or the host link): `start - ready` is its queueing delay.
    pub start: u64,
    pub finish: u64,
    /// The part of its wait during which its die was busy with background work.
    pub behind_background_ns: u64,
}

/// A transaction's uncontended times, ns: array (or link, or delay) and channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Costs {
    pub array_ns: u32,
    pub xfer_ns: u32,
}

impl Costs {
    /// The two together: the transaction's time with nothing in its way.
    #[inline]
    pub fn total(self) -> u64 {
        self.array_ns as u64 + self.xfer_ns as u64
    }
}

/// Program/erase suspension parameters. A read suspends an operation only in its array
/// phase, with at least the minimum remaining, fewer than `max_per_operation` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Suspension {
    pub program_suspend_ns: u64,
    pub program_resume_ns: u64,
    pub erase_suspend_ns: u64,
    pub erase_resume_ns: u64,
    /// Below this much array time left, finishing is cheaper than suspending.
    pub program_min_remaining_ns: u64,
    pub erase_min_remaining_ns: u64,
    /// Against starvation of the suspended operation.
    pub max_per_operation: u8,
    /// Host reads served per suspension before the operation resumes.
    pub reads_per_suspension: u32,
}

/// The configuration's defaults (`timing.*_suspend_us` and the rest): assumed values, no
/// datasheet gives them.
impl Default for Suspension {
    fn default() -> Self {
        Suspension {
            program_suspend_ns: 20_000,
            program_resume_ns: 20_000,
            erase_suspend_ns: 30_000,
            erase_resume_ns: 30_000,
            program_min_remaining_ns: 100_000,
            erase_min_remaining_ns: 300_000,
            max_per_operation: 2,
            reads_per_suspension: 2,
        }
    }
}

/// The drive's resources, as [`Reservation::new`](crate::timing::Reservation::new) takes them.
#[derive(Debug, Clone)]
pub struct QueuedParams {
    pub link_mb_per_s: f64,
    pub command_overhead_us: f64,
    pub channel_mb_per_s: f64,
    pub channels: u32,
    /// `die_channel[d]` is the channel die `d` sits on.
    pub die_channel: Vec<u32>,
    /// `None`: no suspension.
    pub suspension: Option<Suspension>,
    /// `None`: every program and read is one plane's.
    pub multi_plane: Option<MultiPlane>,
    /// A DRAM data cache access (`Op::Dram`), ns: a fixed delay on no resource, as under
    /// the reservation scheduler. 0 without a cache.
    pub dram_ns: u64,
}

/// Multi-plane operations: when a die starts a read or program, a waiting one of the same
/// class and kind for the same page of another of its planes (the usual NAND constraint)
/// runs with it as one operation: the array time once (the longer of the two), the channel
/// carrying both pages. Blocks are numbered plane by plane, `blocks_per_plane` each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MultiPlane {
    pub blocks_per_plane: u32,
    pub planes_per_die: u32,
}

/// Records looked at behind a queue's head for a multi-plane partner.
const PARTNER_SCAN: u32 = 16;

/// The queued scheduler (see the module docs for the contract).
///
/// Serialisable whole, mid-run (work queued, running, suspended, events pending): a
/// checkpoint restores it and advancing goes on exactly as the original would.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Queued {
    now: u64,
    times: ArrayTimes,
    link_ps_per_byte: u64,
    command_ns: u64,
    channel_ps_per_byte: u64,
    suspension: Option<Suspension>,
    multi_plane: Option<MultiPlane>,
    dram_ns: u64,
    policy: Box<dyn Policy>,
    slab: Slab,
    queues: DieQueues,
    dies: Vec<Die>,
    channels: Vec<Channel>,
    link: engine::Link,
    events: Events,
    /// Records submitted ready at the clock, in submission order (not in `events`).
    ready_now: Vec<u32>,
    /// Next arrival number (the FIFO key).
    arrivals: u64,
    dirty_dies: Vec<u32>,
    dirty_channels: Vec<u32>,
    counters: Counters,
    /// Per slab record: a high-priority flow's host transaction, which joins its die queue
    /// ahead of normal ones.
    high: RecBits,
    /// The background cause whose host waits are counted one by one ([`Queued::watch`]), and
    /// per slab record whether it is background work of that cause.
    watched: Option<Cause>,
    watched_recs: RecBits,
}

impl Queued {
    pub fn new(times: ArrayTimes, params: QueuedParams, policy: Box<dyn Policy>) -> Self {
        let dies = params.die_channel.iter().map(|&c| Die::new(c)).collect();
        Queued {
            now: 0,
            times,
            link_ps_per_byte: super::reservation::ps_per_byte(params.link_mb_per_s),
            command_ns: (params.command_overhead_us * 1000.0).round() as u64,
            channel_ps_per_byte: super::reservation::ps_per_byte(params.channel_mb_per_s),
            suspension: params.suspension,
            multi_plane: params.multi_plane,
            dram_ns: params.dram_ns,
            policy,
            slab: Slab::new(),
            queues: DieQueues::new(params.die_channel.len()),
            dies,
            channels: (0..params.channels).map(|_| Channel::new()).collect(),
            link: engine::Link::new(),
            events: Events::new(),
            ready_now: Vec::new(),
            arrivals: 0,
            dirty_dies: Vec::new(),
            dirty_channels: Vec::new(),
            counters: Counters::new(params.die_channel.len(), params.channels as usize),
            high: RecBits::default(),
            watched: None,
            watched_recs: RecBits::default(),
        }
    }

    /// The policy's name.
    pub fn policy(&self) -> &'static str {
        self.policy.name()
    }

    /// The engine's clock: the latest time advanced to.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Hand over `tx`, which may start at `ready_at` (or now, if that is earlier); `token`
    /// comes back in its completion.
    pub fn submit(&mut self, tx: &Transaction, ready_at: u64, token: u32) {
        self.submit_costed(tx, self.tx_costs(tx), ready_at, token, false);
    }

    /// [`Queued::submit`] with `tx`'s times already worked out ([`Queued::tx_costs`]: a caller
    /// that needs them first, for an estimate, does not have them worked out twice), and
    /// `high` for a high-priority flow's transaction: in its die's class queue it waits behind
    /// earlier high-priority work only, ahead of all normal work.
    pub fn submit_costed(&mut self, tx: &Transaction, costs: Costs, ready_at: u64, token: u32, high: bool) {
        self.submit_rec(tx, costs, ready_at, token, high);
    }

    /// How long `tx` takes with nothing in its way (array or link time plus channel time).
    pub fn cost_ns(&self, tx: &Transaction) -> u64 {
        let (array, xfer) = self.costs(tx);
        array + xfer
    }

    /// `tx`'s array (or link) time and channel time, uncontended, as the engine keeps them.
    pub fn tx_costs(&self, tx: &Transaction) -> Costs {
        let (array_ns, xfer_ns) = self.costs(tx);
        let narrow = |ns: u64| u32::try_from(ns).expect("an operation of more than 4.29 s");
        Costs { array_ns: narrow(array_ns), xfer_ns: narrow(xfer_ns) }
    }

    /// When the next event is due, if anything is in flight.
    pub fn next_event_time(&self) -> Option<u64> {
        self.next_time()
    }

    /// Run every event due by `until`, appending completions to `out` in time order; the
    /// clock becomes `until`.
    pub fn advance(&mut self, until: u64, out: &mut Vec<Completion>) {
        self.run_until(until, out);
        self.now = self.now.max(until);
    }

    /// Advance to the next event time, then on from event time to event time while no
    /// transaction has completed and the next event is due by `limit`: exactly a loop of
    /// `advance(next_event_time())` that stops at the first time with completions, or before
    /// an event past `limit` (the first step is taken whatever its time). Returns whether
    /// there was anything to advance to.
    ///
    /// Most event times (a sense ending, work submitted at the clock arriving) complete
    /// nothing, and a caller that only reacts to completions need not see them.
    pub fn advance_to_completion(&mut self, limit: u64, out: &mut Vec<Completion>) -> bool {
        let Some(mut e) = self.next_time() else { return false };
        loop {
            self.advance(e, out);
            if !out.is_empty() {
                return true;
            }
            match self.next_time() {
                Some(n) if n <= limit => e = n,
                _ => return true,
            }
        }
    }

    /// Nothing is running on die `d` and nothing is suspended there.
    pub fn is_idle(&self, d: u32) -> bool {
        self.dies[d as usize].is_idle()
    }

    /// Since when die `d` has had nothing to do (idle, nothing suspended, nothing queued);
    /// `None` if it has work. With [`Queued::channel_idle_since`], this lets a caller ask
    /// whether work wanted earlier would have fitted in the gap that has just passed.
    pub fn idle_since(&self, d: u32) -> Option<u64> {
        let die = &self.dies[d as usize];
        (die.is_idle() && Class::ALL.iter().all(|&c| self.queues.len(d, c) == 0)).then_some(die.idle_since)
    }

    /// Since when die `d`'s channel has carried nothing and nobody waits for it; `None` if busy.
    pub fn channel_idle_since(&self, d: u32) -> Option<u64> {
        let ch = &self.channels[self.dies[d as usize].channel as usize];
        (ch.free_at <= self.now && !ch.pending && ch.out.is_empty() && ch.want.is_empty()).then_some(ch.free_at)
    }

    /// The pace die `d`'s urgent pool needs (`Scheduler::cleaning_pace`): a policy that paces
    /// cleaning by the victim uses it while the die is flagged with `set_urgent_writes`.
    pub fn set_pace(&mut self, d: u32, pace: GcRatio) {
        self.dies[d as usize].pace = Some(pace);
    }

    /// A pool of die `d` has a failed or reclaimed block's data still to move (`on`), or none
    /// any more: a policy that paces such work (`Priority::chore_ratio`) gives it its share.
    pub fn set_chores(&mut self, d: u32, on: bool) {
        self.dies[d as usize].chores = on;
    }

    /// Ready transactions of `class` waiting on die `d` (not started).
    pub fn queue_len(&self, d: u32, class: Class) -> u32 {
        self.queues.len(d, class)
    }

    /// Set or clear die `d`'s hard-threshold flag (see [`Priority`]).
    pub fn set_urgent(&mut self, d: u32, urgent: bool) {
        // Takes effect at the die's next pick: when its current operation ends, or, for a
        // die waiting for its channel, when the bus is granted.
        self.dies[d as usize].urgent = urgent;
    }

    /// Does die `d` serve background work first ([`Queued::set_urgent`])?
    pub fn is_urgent(&self, d: u32) -> bool {
        self.dies[d as usize].urgent
    }

    /// Like [`Queued::set_urgent`], but host reads waiting on the die still go first: for a
    /// die short of free blocks, which only writes consume.
    pub fn set_urgent_writes(&mut self, d: u32, urgent: bool) {
        self.dies[d as usize].urgent_writes = urgent;
    }

    /// Transaction records ever allocated: the most ever in flight at once.
    pub fn records(&self) -> usize {
        self.slab.capacity()
    }

    /// Count, one by one, the host transactions that wait on their die while it runs
    /// background work of `cause` (submitted from now on), and the longest of those waits
    /// ([`QueuedStats::host_waits_behind_watched`]): the cost a caller's background work puts
    /// on host work, told apart from the rest of the background work. One cause at a time.
    pub fn watch(&mut self, cause: Cause) {
        self.watched = Some(cause);
    }

    /// The host waits [`Queued::watch`] counts: how many, and the longest (ns).
    pub fn waits_behind_watched(&self) -> (u64, u64) {
        (self.counters.host_waits_behind_watched, self.counters.max_host_wait_behind_watched)
    }

    /// The counters as of the clock.
    pub fn stats(&self) -> QueuedStats {
        self.snapshot()
    }

    /// The most transactions of each class that waited on any one die since the last call
    /// (or the start); the next interval starts from the queues as they are now.
    pub fn take_interval_queue_max(&mut self) -> [u32; CLASSES] {
        let dies = self.dies.len() as u32;
        let longest = Class::ALL.map(|c| (0..dies).map(|d| self.queues.len(d, c)).max().unwrap_or(0));
        self.counters.take_interval_max(longest)
    }
}
