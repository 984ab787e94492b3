//! The queued engine as the drive's [`Scheduler`]: the FTL submits transactions at the
//! instant it decides them, as under the reservation scheduler, and the engine decides when
//! they run; the run loop advances the clock and hears which host requests finished.
//!
//! - **Dependencies.** `submit` hands back a value naming the transaction (`tokens.rs`), so
//!   the FTL's "after this" becomes an edge: a GC program waits for its read, a page program
//!   for the host data it carries. A program into a block also waits for that block's last
//!   erase, wherever the FTL took the block from: the FTL frees a block when it *decides* the
//!   erase, the flash only when the erase has run.
//! - **Requests.** Between [`EventDriven::begin_request`] and [`EventDriven::end_request`]
//!   every host-class transaction belongs to the request; it finishes when they all have (a
//!   read then crosses the host link). Work the FTL decides on the way (GC, reclaim, wear
//!   leveling) is background class and no request waits for it, unless it must: a host program
//!   into a block whose erase has not run.
//! - **Stepped cleaning** (`stock.rs`). Below a pool's low watermark (the soft threshold)
//!   the FTL records that the pool owes cleaning and names its die (`cleaning_owed`); a die
//!   that owes cleaning and has fewer than a few background transactions in flight is offered
//!   to the run loop ([`EventDriven::background_wanted`]), which has the FTL decide one page's
//!   moves or an erase there. That work is background class and, under the priority policy,
//!   runs when its die has no host work (or at `timing.gc_ratio`).
//! - **Hard threshold.** A die goes urgent (background work first) while a pool of it owes
//!   cleaning one block from its reserve (`cleaning_urgent`), while a host write waits for
//!   cleaning the FTL had to decide at once at the reserve (`hard_threshold`, `wait_for`),
//!   while a host program waits for its block's erase, or while it owes more GC erases than
//!   `timing.hard_threshold_erases`. The summary counts these episodes and the time host
//!   programs spent waiting for erases.
//! - **Fast-forward.** With timing off a transaction completes when it may start, as under
//!   the reservation scheduler, and the engine is not touched.

mod pool;
mod stock;
mod summary;
mod tokens;

#[cfg(test)]
mod tests;

pub use summary::SchedulerSummary;

use crate::stats::timeseries::SchedTotals;
use crate::timing::queued::{Class, Completion, Costs, GcRatio, Queued};
use crate::timing::{Done, EventDriven, Finished, Op, Scheduler, Transaction, Utilisation, Wait};
use pool::Pool;
use stock::Stock;
use tokens::{Tok, Tokens, PENDING};

pub(super) const NONE: u32 = u32::MAX;
const NO_TOKEN: u64 = u64::MAX;

/// A transaction waiting for another to finish before it goes to the engine.
#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Parked {
    tx: Transaction,
    /// Its times, worked out once at submission.
    costs: Costs,
    id: u64,
    /// Its own earliest start (its `after` when that was a time).
    ready: u64,
    /// A second transaction it waits for after the first (a program's block erase).
    then: u64,
    /// When it was parked, and whether it is host work waiting on background work.
    since: u64,
    host_on_background: bool,
    next: u32,
}

/// A host request in flight.
#[derive(Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
struct Request {
    /// Its transactions not finished yet.
    pending: u32,
    /// `end_request` was called: no more transactions will join.
    ended: bool,
    /// Bytes to send to the host once the flash work is done (a read's data).
    transfer_after: u64,
    finish: u64,
    behind_background_ns: u64,
    /// Some transaction of it ran on a die at the hard threshold (see `Urgency::epoch`).
    hard: bool,
    /// Its flow is high priority (`[[flows]]`): its host work goes ahead of normal work.
    high: bool,
}

/// Why a die serves background work first, if it does.
#[derive(Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
struct Urgency {
    /// Host programs parked on its erases (their blocks are not erased yet).
    holds: u32,
    /// Background erases decided and not yet run.
    owed_erases: u32,
    /// The FTL cleaned at once for a host write (`Scheduler::hard_threshold`): until the
    /// die's background work is back to the stepped stock.
    draining: bool,
    /// A pool of the die is one block from its reserve (`Scheduler::cleaning_urgent`).
    cleaning: bool,
    on: bool,
    /// Episodes begun; a request that saw it change (or saw the die urgent) ran at the hard
    /// threshold.
    epoch: u32,
}

/// Counters kept beside the engine's own.
#[derive(Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
struct Counts {
    transactions: u64,
    hard_threshold_episodes: u64,
    host_blocked_episodes: u64,
    host_wait_on_erase_ns: u64,
    /// The most any request away from the hard threshold waited behind background work.
    max_behind_background_ns: u64,
}

/// The queued scheduler (see the module docs). Checkpoints keep all of it (the engine with its
/// clock, queues and pending events; the dependency ring, parked work and requests in
/// flight), so a resumed run goes on exactly where it stopped.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct QueuedScheduler {
    engine: Queued,
    timing: bool,
    suspension: bool,
    tokens: Tokens,
    parked: Pool<Parked>,
    /// Per block: the id of its last erase (`NO_TOKEN`: none kept).
    erase_of: Vec<u64>,
    requests: Vec<Request>,
    current: u32,
    /// Host-path work submitted now is not the current request's (`Scheduler::set_detached`).
    detached: bool,
    /// Requests waiting for transactions that are not theirs (`Scheduler::wait_for`):
    /// (request, next) nodes, listed from `Tok::waiters`.
    waiters: Pool<(u32, u32)>,
    /// Per die: uncontended cost of the host work submitted and not finished.
    host_backlog_ns: Vec<u64>,
    /// Per die: whether background work goes first, and why.
    urgency: Vec<Urgency>,
    /// Background cleaning may fall this many block erases per plane behind the FTL's
    /// decisions before it goes first (the hard threshold); `u32::MAX`: only when a host
    /// program finds its block not yet erased.
    lag_limit: u32,
    /// Per die: background work in flight, and whether the FTL has cleaning to step there.
    stock: Stock,
    counts: Counts,
    /// Some request was high priority: host work then looks up its request's priority.
    prioritised: bool,
    /// Completions between the engine and `finished` (empty between calls).
    #[serde(skip)]
    scratch: Vec<Completion>,
}

impl QueuedScheduler {
    /// Over `engine`, for a drive of `blocks` blocks on `dies` dies; `timing` as the
    /// configuration says.
    ///
    /// `lag_limit`: GC erases a die may owe (decided, not run) before background work goes
    /// first there.
    pub fn new(engine: Queued, blocks: u32, dies: u32, timing: bool, suspension: bool, lag_limit: u32) -> Self {
        QueuedScheduler {
            engine,
            timing,
            suspension,
            tokens: Tokens::new(),
            parked: Pool::new(),
            erase_of: vec![NO_TOKEN; blocks as usize],
            requests: Vec::new(),
            current: NONE,
            detached: false,
            waiters: Pool::new(),
            host_backlog_ns: vec![0; dies as usize],
            urgency: vec![Urgency::default(); dies as usize],
            lag_limit,
            stock: Stock::new(dies),
            counts: Counts::default(),
            prioritised: false,
            scratch: Vec::new(),
        }
    }

    /// Is `id` still to finish?
    #[inline]
    fn pending(&self, id: u64) -> bool {
        id != NO_TOKEN && self.tokens.find_id(id).is_some_and(|t| t.finish == PENDING)
    }

    fn submit_for(&mut self, tx: &Transaction, after: Done, request: u32) -> Done {
        let now = self.engine.now();
        // What `after` names: a pending transaction, or a time (a finished one's real finish).
        let (ready, mut dep, mut base) = match self.pending_or_time(after) {
            Ok(id) => (0, id, after.0),
            Err(t) => (t, NO_TOKEN, t),
        };
        let mut then = NO_TOKEN;
        if tx.op == Op::Program {
            let e = self.erase_of[tx.block as usize];
            if self.pending(e) {
                base = base.max(self.tokens.get(e).value);
                if dep == NO_TOKEN {
                    dep = e;
                } else {
                    then = e;
                }
            }
        }
        let costs = self.engine.tx_costs(tx);
        let cost = costs.total();
        let value = base.max(now) + cost;
        let on_host = tx.on_host_path();
        let host = on_host && tx.op.uses_die();
        let stock = !on_host && tx.op.uses_die();
        if stock {
            self.stock.submitted(tx.die);
        }
        let id = self.tokens.push(Tok {
            request,
            host_backlog_ns: if host { cost } else { 0 },
            background: !on_host,
            owes_erase: tx.op == Op::Erase && !on_host,
            stock,
            ..Tok::pending(value, tx.die, self.urgency[tx.die as usize].epoch)
        });
        self.counts.transactions += 1;
        if host {
            self.host_backlog_ns[tx.die as usize] += cost;
        }
        if request != NONE {
            let r = &mut self.requests[request as usize];
            r.pending += 1;
            r.hard |= tx.op.uses_die() && self.urgency[tx.die as usize].on;
        }
        if tx.op == Op::Erase {
            self.erase_of[tx.block as usize] = id;
            if !on_host {
                self.urgency[tx.die as usize].owed_erases += 1;
                self.reconsider(tx.die);
            }
        }
        if dep == NO_TOKEN {
            // Nothing to wait for (and so no second dependency): straight to the engine.
            self.send(tx, costs, ready, id);
        } else {
            self.park(
                Parked { tx: *tx, costs, id, ready, then, since: now, host_on_background: false, next: NONE },
                dep,
            );
        }
        Done::named(value, id)
    }

    /// What `d` names: `Ok(id)` of a pending transaction, or `Err(t)`, the time it is
    /// known to be done by (a finished transaction's real finish, or a plain time).
    fn pending_or_time(&self, d: Done) -> Result<u64, u64> {
        match self.tokens.named(d) {
            Some(t) => match t.finish {
                PENDING => Ok(d.1),
                finish => Err(finish),
            },
            None => Err(d.0),
        }
    }

    /// A transaction of no cost that completes when `a` and `b` have (`Scheduler::join`):
    /// parked on one pending input, then on the other, from the later of any known times.
    /// Nobody's work (no request or queue counts it): whoever needs both waits for it. It
    /// stands for a pending background input, and for its die: host work waiting for the
    /// join waits on background work there, which then goes first (a write-back buffer's
    /// page waiting for the space of a failed page whose retry is background work).
    /// `inputs` are the two completions with what they name (`pending_or_time`, read once by
    /// the caller).
    fn submit_join(&mut self, inputs: [(Done, Result<u64, u64>); 2]) -> Done {
        let now = self.engine.now();
        let (mut dep, mut then, mut ready) = (NO_TOKEN, NO_TOKEN, 0);
        let (mut background, mut die) = (false, 0);
        for (_, named) in inputs {
            match named {
                Ok(id) => {
                    let t = self.tokens.get(id);
                    if t.background && !background {
                        (background, die) = (true, t.die);
                    }
                    if dep == NO_TOKEN {
                        dep = id;
                    } else {
                        then = id;
                    }
                }
                Err(t) => ready = ready.max(t),
            }
        }
        let value = inputs[0].0 .0.max(inputs[1].0 .0).max(now);
        let tx = Transaction { op: Op::Join, ..Transaction::host(0) };
        let id = self.tokens.push(Tok { background, ..Tok::pending(value, die, self.urgency[die as usize].epoch) });
        let costs = Costs::default();
        let p = Parked { tx, costs, id, ready, then, since: now, host_on_background: false, next: NONE };
        if dep == NO_TOKEN {
            self.release(p);
        } else {
            self.park(p, dep);
        }
        Done::named(value, id)
    }

    /// Hand transaction `id` to the engine, to start no earlier than `ready`.
    #[inline]
    fn send(&mut self, tx: &Transaction, costs: Costs, ready: u64, id: u64) {
        let high = self.prioritised && tx.on_host_path() && {
            let r = self.tokens.get(id).request;
            r != NONE && self.requests[r as usize].high
        };
        self.engine.submit_costed(tx, costs, ready, id as u32, high);
    }

    /// `p` waits for nothing more, or for its second dependency only (its first has finished,
    /// or it had none): park it on that if it is pending, otherwise send it to the engine.
    /// Inlined: it runs for each released transaction (0.15% fewer instructions than a call).
    #[inline(always)]
    fn release(&mut self, mut p: Parked) {
        if p.then != NO_TOKEN && self.pending(p.then) {
            let dep = std::mem::replace(&mut p.then, NO_TOKEN);
            self.park(p, dep);
        } else {
            self.send(&p.tx, p.costs, p.ready, p.id);
        }
    }

    /// Park `p` on `dep`, pending (callers name only what they found pending), until it
    /// finishes.
    fn park(&mut self, mut p: Parked, dep: u64) {
        debug_assert!(self.pending(dep));
        let now = self.engine.now();
        p.since = now;
        // Host work held up by background work: the drive has run out of erased blocks on
        // this plane, so the die serves background work first until this is released.
        let waited_on_background = self.tokens.get(dep).background;
        p.host_on_background = p.tx.on_host_path() && waited_on_background && p.tx.op == Op::Program;
        if p.host_on_background {
            let die = self.tokens.get(dep).die;
            self.tokens.get_mut(dep).urgent_holds += 1;
            self.urgency[die as usize].holds += 1;
            self.reconsider(die);
        }
        p.next = self.tokens.get(dep).parked;
        self.tokens.get_mut(dep).parked = self.parked.alloc(p);
    }

    /// `c` finished: release what waited for it and account for its request.
    fn finished(&mut self, c: Completion, out: &mut Vec<Finished>) {
        let id = self.tokens.id_of(c.token);
        let t = *self.tokens.get(id);
        {
            let m = self.tokens.get_mut(id);
            m.finish = c.finish;
            m.parked = NONE;
            m.urgent_holds = 0;
            m.waiters = NONE;
        }
        if t.host_backlog_ns > 0 {
            self.host_backlog_ns[t.die as usize] -= t.host_backlog_ns;
        }
        if t.stock {
            self.stock.finished(t.die);
            if self.urgency[t.die as usize].draining && self.stock.of(t.die) <= stock::STOCK {
                self.urgency[t.die as usize].draining = false;
                self.reconsider(t.die);
            }
        }
        if t.urgent_holds > 0 || t.owes_erase {
            let u = &mut self.urgency[t.die as usize];
            u.holds -= t.urgent_holds;
            u.owed_erases -= u32::from(t.owes_erase);
            self.reconsider(t.die);
        }
        let mut p = t.parked;
        while p != NONE {
            let mut w = self.parked.take(p);
            let next = w.next;
            // A burst of work parked on one transaction (a victim's page reads on the host
            // data that asked for them) is a chain through records allocated far apart.
            if next != NONE {
                self.parked.prefetch(next);
            }
            if w.host_on_background {
                self.counts.host_wait_on_erase_ns += c.finish - w.since;
            }
            w.ready = w.ready.max(c.finish);
            self.release(w);
            p = next;
        }
        let mut w = t.waiters;
        while w != NONE {
            let (slot, next) = self.waiters.take(w);
            let r = &mut self.requests[slot as usize];
            r.pending -= 1;
            r.finish = r.finish.max(c.finish);
            if r.pending == 0 && r.ended {
                self.drained(slot, out);
            }
            w = next;
        }
        if t.request != NONE {
            let r = &mut self.requests[t.request as usize];
            r.pending -= 1;
            r.finish = r.finish.max(c.finish);
            r.behind_background_ns += c.behind_background_ns;
            r.hard |= t.host_backlog_ns > 0
                && (self.urgency[t.die as usize].epoch != t.epoch || self.urgency[t.die as usize].on);
            if r.pending == 0 && r.ended {
                self.drained(t.request, out);
            }
        }
    }

    /// Request `slot` has no flash work left: send its data to the host, or report it done.
    fn drained(&mut self, slot: u32, out: &mut Vec<Finished>) {
        let r = &mut self.requests[slot as usize];
        if r.transfer_after > 0 {
            let bytes = std::mem::take(&mut r.transfer_after);
            let at = r.finish;
            self.submit_for(&Transaction::host(bytes), Done::at(at), slot);
        } else {
            if !r.hard {
                self.counts.max_behind_background_ns = self.counts.max_behind_background_ns.max(r.behind_background_ns);
            }
            out.push(Finished {
                request: slot,
                finish: r.finish,
                behind_background_ns: r.behind_background_ns,
                hard_threshold: r.hard,
            });
        }
    }

    /// Die `die` goes urgent (background work first) while a host program waits for one of
    /// its erases or while it owes more erases than the lag allows; each change is passed to
    /// the engine, and each start is an episode.
    fn reconsider(&mut self, die: u32) {
        let lag_limit = self.lag_limit;
        let u = &mut self.urgency[die as usize];
        let strict = u.holds > 0 || u.owed_erases > lag_limit || u.draining;
        let on = strict || u.cleaning;
        if on != u.on {
            u.on = on;
            if on {
                u.epoch = u.epoch.wrapping_add(1);
                self.counts.hard_threshold_episodes += 1;
            }
        }
        // The engine's flag is the last strict verdict: a rise is an episode that held host work.
        if strict && !self.engine.is_urgent(die) {
            self.counts.host_blocked_episodes += 1;
        }
        // Work waiting on background work, or owed beyond the lag, goes before everything; a
        // pool running short of free blocks only needs to go before the writes that use them.
        self.engine.set_urgent(die, strict);
        self.engine.set_urgent_writes(die, u.cleaning);
    }

    fn die_has_host_work(&self, die: u32) -> bool {
        !self.engine.is_idle(die)
            || self.engine.queue_len(die, Class::HostRead) > 0
            || self.engine.queue_len(die, Class::HostWrite) > 0
    }
}

#[typetag::serde(name = "queued")]
impl Scheduler for QueuedScheduler {
    fn name(&self) -> &'static str {
        "queued"
    }

    fn submit(&mut self, tx: &Transaction, after: Done) -> Done {
        if !self.timing {
            return after;
        }
        let request = if tx.on_host_path() && !self.detached { self.current } else { NONE };
        self.submit_for(tx, after, request)
    }

    fn timing(&self) -> bool {
        self.timing
    }

    /// From the transaction's record while it is kept: pending, or finished at its real
    /// time. A value not kept is a plain time or work finished long ago (its estimate no
    /// later than its real completion, `tokens.rs`), read as is.
    fn completed(&self, d: Done) -> Option<Done> {
        if !self.timing {
            return Some(d);
        }
        match self.tokens.named(d).map(|t| t.finish) {
            Some(PENDING) => None,
            Some(finish) => Some(Done::at(finish)),
            None => Some(d),
        }
    }

    fn watch_background(&mut self, cause: crate::stats::Cause) {
        self.engine.watch(cause);
    }

    fn waits_behind_watched(&self) -> Option<(u64, u64)> {
        Some(self.engine.waits_behind_watched())
    }

    /// Two pending completions (or one, and a time still to come) are joined by a
    /// transaction that waits for both; otherwise the one known to finish later is the
    /// answer, exactly.
    fn join(&mut self, a: Done, b: Done) -> Done {
        if !self.timing || a == b {
            return Done::later(a, b);
        }
        let now = self.engine.now();
        let (na, nb) = (self.pending_or_time(a), self.pending_or_time(b));
        match (na, nb) {
            (Err(ta), Err(tb)) => {
                if ta >= tb {
                    a
                } else {
                    b
                }
            }
            (Ok(_), Err(t)) if t <= now => a,
            (Err(t), Ok(_)) if t <= now => b,
            _ => self.submit_join([(a, na), (b, nb)]),
        }
    }

    fn set_detached(&mut self, on: bool) {
        self.detached = on;
    }

    /// The current request also waits for the transaction `value` names, if it is pending
    /// (a write-back device's buffer frees when an earlier page's program ends). Host work
    /// waiting on background work makes its die urgent, as a host program waiting for its
    /// block's erase does. Not while detached: work submitted then is not the request's,
    /// and neither is what that work waits for (a DRAM cache's destage, caused by a read,
    /// meeting the hard threshold).
    fn wait_for(&mut self, value: Done) {
        if !self.timing || self.current == NONE || self.detached {
            return;
        }
        let Some(&t) = self.tokens.named(value) else { return };
        let id = value.1;
        if t.finish != PENDING || t.request == self.current {
            return;
        }
        let w = self.waiters.alloc((self.current, t.waiters));
        self.requests[self.current as usize].pending += 1;
        let m = self.tokens.get_mut(id);
        m.waiters = w;
        if t.background {
            m.urgent_holds += 1;
            self.urgency[t.die as usize].holds += 1;
            self.reconsider(t.die);
            // A request held up by background work (cleaning the FTL had to finish before
            // its write could go on) ran at the hard threshold.
            self.requests[self.current as usize].hard = true;
        }
    }

    fn set_timing(&mut self, on: bool) {
        self.timing = on;
    }

    /// With timing on: the run loop is there to ask (with it off, in fast-forward, nothing
    /// is timed and the FTL cleans at once).
    fn steps_cleaning(&self) -> bool {
        self.timing
    }

    fn cleaning_owed(&mut self, die: u32) {
        self.stock.owe(die);
    }

    fn cleaning_urgent(&mut self, die: u32, on: bool) {
        if self.urgency[die as usize].cleaning != on {
            self.urgency[die as usize].cleaning = on;
            self.reconsider(die);
        }
    }

    fn chores_owed(&mut self, die: u32, on: bool) {
        self.engine.set_chores(die, on);
    }

    fn cleaning_pace(&mut self, die: u32, background: u32, host: u32) {
        self.engine.set_pace(die, GcRatio { background, host });
    }

    fn hard_threshold(&mut self, die: u32) {
        if self.timing && self.stock.of(die) > stock::STOCK {
            self.urgency[die as usize].draining = true;
            self.reconsider(die);
        }
    }

    /// The clock plus the host work already queued on the die: background work yields to
    /// host work at its next transaction, so it is not counted.
    fn die_free_at(&self, die: u32) -> u64 {
        self.engine.now() + self.host_backlog_ns[die as usize]
    }

    fn die_free_offsets(&self) -> Option<(u64, &[u64])> {
        Some((self.engine.now(), &self.host_backlog_ns))
    }

    fn cost_ns(&self, tx: &Transaction) -> u64 {
        self.engine.cost_ns(tx)
    }

    /// From the clock (or `from`), if the die has no host work; background work submitted
    /// now yields to host work arriving later at its next transaction.
    fn idle_start(&self, die: u32, from: u64, until: u64) -> Option<Done> {
        let start = from.max(self.engine.now());
        (start < until && !self.die_has_host_work(die)).then_some(Done::at(start))
    }

    /// As the reservation scheduler answers it, from what has happened: work wanted since
    /// `from` fits if each die it uses (and with `Wait::DiesAndChannels` its channel) has had
    /// nothing to do since before the work's time ran out ahead of `until`. A die with work
    /// now (running, suspended or queued, of any class) has no such gap: its last one ended
    /// when that work came. Asked at `until` (a host write about to need the data), this
    /// looks back over the idle gap that has just passed, which no host work used; the
    /// engine is not told of the work, just as the reservation scheduler books none.
    fn fits_before(&self, txs: &[Transaction], from: u64, until: u64, wait: Wait) -> bool {
        let mut start = from;
        let mut cost = 0;
        for tx in txs {
            if tx.op.uses_die() {
                let Some(die) = self.engine.idle_since(tx.die) else { return false };
                start = start.max(die);
                if wait == Wait::DiesAndChannels {
                    let Some(ch) = self.engine.channel_idle_since(tx.die) else { return false };
                    start = start.max(ch);
                }
            }
            cost += self.engine.cost_ns(tx);
        }
        start + cost <= until
    }

    fn utilisation(&self) -> Utilisation {
        let s = self.engine.stats();
        Utilisation {
            link_busy_ns: s.link_busy_ns,
            channel_busy_ns: s.channel_busy_ns.iter().sum(),
            die_busy_ns: s.die_busy_ns.iter().sum(),
        }
    }

    fn events(&mut self) -> Option<&mut dyn EventDriven> {
        self.timing.then_some(self as &mut dyn EventDriven)
    }

    fn interval_totals(&mut self) -> Option<SchedTotals> {
        let queue_max = self.engine.take_interval_queue_max();
        let s = self.engine.stats();
        let t = s.elapsed_ns as f64;
        Some(SchedTotals {
            die_busy_each_ns: s.die_busy_ns.clone(),
            queue_max,
            elapsed_ns: s.elapsed_ns,
            dies: s.die_busy_ns.len() as u32,
            channels: s.channel_busy_ns.len() as u32,
            die_busy_ns: s.die_busy_ns.iter().sum(),
            channel_busy_ns: s.channel_busy_ns.iter().sum(),
            background_busy_ns: s.die_background_busy_ns.iter().sum(),
            queue_area: s.queue_depth.map(|d| d.mean * t),
        })
    }

    fn summary(&self) -> Option<SchedulerSummary> {
        Some(SchedulerSummary::new(&self.engine.stats(), self.engine.policy(), self.suspension, &self.counts))
    }
}

impl EventDriven for QueuedScheduler {
    fn now(&self) -> u64 {
        self.engine.now()
    }

    fn begin_request(&mut self, slot: u32) {
        let i = slot as usize;
        if self.requests.len() <= i {
            self.requests.resize(i + 1, Request::default());
        }
        self.requests[i] = Request { finish: self.engine.now(), ..Request::default() };
        self.current = slot;
    }

    fn begin_request_prioritised(&mut self, slot: u32, high: bool) {
        self.begin_request(slot);
        self.requests[slot as usize].high = high;
        self.prioritised |= high;
    }

    fn end_request(&mut self, transfer_bytes: u64, out: &mut Vec<Finished>) {
        let slot = std::mem::replace(&mut self.current, NONE);
        let r = &mut self.requests[slot as usize];
        r.ended = true;
        r.transfer_after = transfer_bytes;
        if r.pending == 0 {
            self.drained(slot, out);
        }
    }

    fn next_event_time(&self) -> Option<u64> {
        self.engine.next_event_time()
    }

    fn advance(&mut self, until: u64, out: &mut Vec<Finished>) {
        let mut comps = std::mem::take(&mut self.scratch);
        self.engine.advance(until, &mut comps);
        for c in comps.drain(..) {
            self.finished(c, out);
        }
        self.scratch = comps;
        self.tokens.trim();
    }

    /// One `advance` per event time, as the run loop would make them, until a request
    /// finishes or a die is listed as wanting background work (the loop answers both), or the
    /// next event is past `limit`. Most events (a sense ending, a program whose die has more
    /// queued) need no answer: a saturated drive's loop made two round trips per transaction.
    ///
    /// Only a completion can finish a request or list a die, so the engine goes on by itself
    /// through the event times that complete nothing (`Queued::advance_to_completion`): at
    /// those this adapter had nothing to do (trimming the ring again changes nothing while
    /// nothing finishes), and a saturated drive has more of them than of completions.
    fn advance_quiet(&mut self, limit: u64, out: &mut Vec<Finished>) {
        // Something to answer already: one event time, then back, as the loop would.
        if !out.is_empty() || self.stock.any_listed() {
            if let Some(e) = self.engine.next_event_time() {
                self.advance(e, out);
            }
            return;
        }
        let mut comps = std::mem::take(&mut self.scratch);
        while self.engine.advance_to_completion(limit, &mut comps) {
            for c in comps.drain(..) {
                self.finished(c, out);
            }
            self.tokens.trim();
            if !out.is_empty() || self.stock.any_listed() {
                break;
            }
            if self.engine.next_event_time().is_none_or(|n| n > limit) {
                break;
            }
        }
        self.scratch = comps;
    }

    fn background_wanted(&mut self) -> Option<u32> {
        self.stock.next_wanting()
    }

    fn background_stepped(&mut self, die: u32, more: bool) {
        self.stock.stepped(die, more);
    }
}
