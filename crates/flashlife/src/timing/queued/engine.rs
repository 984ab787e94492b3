//! The engine's machinery: die and channel state, event handling and dispatch.
//!
//! Each instant is handled in two steps: first every event due then (arrivals, phase ends,
//! freed channels) updates state and marks the dies and channels it touched; then the marked
//! channels grant their bus and the marked dies pick, until nothing is marked. Picking only
//! after all of an instant's events is what lets a policy see simultaneous arrivals together.

use std::collections::VecDeque;

use super::die::Phase;
use super::events::{Event, Kind};
use super::policy::Class;
use super::slab::{Fifo, Rec, NONE};
use super::{Completion, Costs, Queued};
use crate::timing::{Op, Transaction};

#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Channel {
    /// When the current transfer ends.
    pub free_at: u64,
    /// Dies holding sensed data, in the order their senses ended.
    pub out: VecDeque<u32>,
    /// Dies that want the bus to start a program, with their tickets.
    pub want: VecDeque<(u32, u32)>,
    /// A `Channel` event is scheduled (at `free_at`).
    pub pending: bool,
    pub dirty: bool,
}

impl Channel {
    pub fn new() -> Self {
        Channel { free_at: 0, out: VecDeque::new(), want: VecDeque::new(), pending: false, dirty: false }
    }
}

/// The host link: one FIFO.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Link {
    pub q: Fifo,
    pub cur: u32,
    pub free_at: u64,
    pub dirty: bool,
}

impl Link {
    pub fn new() -> Self {
        Link { q: Fifo::EMPTY, cur: NONE, free_at: 0, dirty: false }
    }
}

impl Queued {
    /// A transaction's array (or link) time and channel time, uncontended.
    #[inline]
    pub(super) fn costs(&self, tx: &Transaction) -> (u64, u64) {
        match tx.op {
            Op::Read => (self.times.read_ns(tx.mode, tx.page), self.channel_ns(tx.bytes)),
            Op::Program => (self.times.program_ns(tx.mode, tx.page), self.channel_ns(tx.bytes)),
            Op::Erase => (self.times.erase_ns(tx.mode), 0),
            Op::HostTransfer => (self.command_ns + tx.bytes * self.link_ps_per_byte / 1000, 0),
            Op::Dram => (self.dram_ns, 0),
            Op::Encode => (self.times.read_ns(tx.mode, tx.page) / 2, 0),
            Op::Join => (0, 0),
        }
    }

    pub(super) fn submit_rec(&mut self, tx: &Transaction, costs: Costs, ready_at: u64, token: u32, high: bool) {
        let Costs { array_ns, xfer_ns } = costs;
        let ready = ready_at.max(self.now);
        let rec = Rec {
            op: tx.op,
            class: Class::of_tx(tx),
            suspensions: 0,
            die: tx.die,
            token,
            next: NONE,
            array_ns,
            xfer_ns,
            ready,
            start: 0,
            arrival: 0,
            bg_mark: 0,
            plane: self.multi_plane.map_or(0, |m| ((tx.block / m.blocks_per_plane) % m.planes_per_die) as u8),
            page: tx.page,
            partner: NONE,
        };
        let watched = rec.class == Class::Background && self.watched == Some(tx.class);
        let i = self.slab.alloc(rec);
        self.high.set(i, high);
        self.watched_recs.set(i, watched);
        // Work ready at the clock (a follow-up submitted as its input completes, the common
        // case) skips the heap: it can only be handled first in the next `advance` anyway.
        if ready == self.now {
            self.ready_now.push(i);
        } else {
            self.events.push(ready, i, Kind::Ready);
        }
    }

    pub(super) fn next_time(&self) -> Option<u64> {
        if self.ready_now.is_empty() {
            self.events.peek_time()
        } else {
            Some(self.now)
        }
    }

    #[inline]
    fn channel_ns(&self, bytes: u64) -> u64 {
        bytes * self.channel_ps_per_byte / 1000
    }

    pub(super) fn run_until(&mut self, until: u64, out: &mut Vec<Completion>) {
        if !self.ready_now.is_empty() && self.now <= until {
            // Every event up to the clock has been handled: these arrivals are the first.
            for k in 0..self.ready_now.len() {
                self.arrive(self.ready_now[k]);
            }
            self.ready_now.clear();
            self.dispatch();
        }
        while let Some(t) = self.events.peek_time() {
            if t > until {
                break;
            }
            self.now = t;
            while let Some(ev) = self.events.pop_due(t) {
                self.handle(ev, out);
            }
            self.dispatch();
        }
    }

    fn handle(&mut self, ev: Event, out: &mut Vec<Completion>) {
        let now = self.now;
        match ev.kind {
            Kind::Ready => self.arrive(ev.idx),
            Kind::Die { gen } => {
                let d = ev.idx;
                if self.dies[d as usize].gen == gen {
                    self.phase_end(d, out);
                }
            }
            Kind::Channel => {
                self.channels[ev.idx as usize].pending = false;
                self.mark_channel(ev.idx);
            }
            Kind::Delayed => self.complete(ev.idx, now, out),
            Kind::Link => {
                let r = self.link.cur;
                self.link.cur = NONE;
                self.complete(r, now, out);
                self.link.dirty = true;
            }
        }
    }

    /// Record `r` is ready: into its die's class queue (or the link's).
    fn arrive(&mut self, r: u32) {
        let rec = &self.slab[r];
        let (op, die, class, array_ns) = (rec.op, rec.die, rec.class, rec.array_ns);
        if op == Op::HostTransfer {
            self.link.q.push(&mut self.slab, r);
            self.link.dirty = true;
            return;
        }
        if matches!(op, Op::Encode | Op::Dram | Op::Join) {
            // The controller's encoder or its DRAM: a delay that waits for no resource (the
            // DRAM's bandwidth is far above the flash's, as under the reservation scheduler);
            // a join, none at all.
            self.slab[r].start = self.now;
            self.events.push(self.now + array_ns as u64, r, Kind::Delayed);
            return;
        }
        self.arrivals += 1;
        let bg_mark = self.bg_clock(die);
        let watched_mark = self.watched_clock(die);
        let rm = &mut self.slab[r];
        rm.arrival = self.arrivals;
        rm.bg_mark = bg_mark;
        // `start` is set when the record starts; until then it holds this mark (see `Rec`).
        rm.start = watched_mark;
        self.counters.joined(die, class, self.queues.len(die, class) + 1);
        if self.high.get(r) {
            self.queues.push_high(&mut self.slab, die, class, r);
        } else {
            self.queues.push(&mut self.slab, die, class, r);
        }
        self.mark_die(die);
    }

    /// Die `d`'s time spent on background work so far.
    #[inline]
    pub(super) fn bg_clock(&self, d: u32) -> u64 {
        let die = &self.dies[d as usize];
        let open = if die.bg_since == u64::MAX { 0 } else { self.now - die.bg_since };
        self.counters.die_bg_busy[d as usize] + open
    }

    /// Die `d`'s time spent on background work of the watched cause so far (`Queued::watch`).
    #[inline]
    pub(super) fn watched_clock(&self, d: u32) -> u64 {
        if self.watched.is_none() {
            // Nothing is watched, and never was (`watch` is for good): no die has run any.
            return 0;
        }
        let die = &self.dies[d as usize];
        let open = if die.watched_since == u64::MAX { 0 } else { self.now - die.watched_since };
        self.counters.die_watched_busy[d as usize] + open
    }

    /// Take the head of die `d`'s `class` queue to start it now.
    pub(super) fn dequeue(&mut self, d: u32, class: Class) -> u32 {
        self.dequeue_after(d, class, NONE)
    }

    /// With multi-plane operations on, a record waiting behind `r` (just dequeued) that can
    /// run with it: same die, class and kind, same page, another plane. It is dequeued and
    /// joined to `r`, which then carries both pages' transfers and the longer array time.
    pub(super) fn pair(&mut self, d: u32, class: Class, r: u32) {
        let op = self.slab[r].op;
        if self.multi_plane.is_none() || !matches!(op, Op::Read | Op::Program) {
            return;
        }
        let (plane, page) = (self.slab[r].plane, self.slab[r].page);
        let (mut prev, mut i, mut looked) = (NONE, self.queues.head(d, class), 0);
        while i != NONE && looked < super::PARTNER_SCAN {
            let c = &self.slab[i];
            if c.op == op && c.page == page && c.plane != plane {
                let j = self.dequeue_after(d, class, prev);
                debug_assert_eq!(i, j);
                let (array, xfer) = (self.slab[j].array_ns, self.slab[j].xfer_ns);
                let rec = &mut self.slab[r];
                rec.array_ns = rec.array_ns.max(array);
                rec.xfer_ns += xfer;
                rec.partner = j;
                self.counters.multi_plane_ops += 1;
                return;
            }
            (prev, i, looked) = (i, c.next, looked + 1);
        }
    }

    /// Take the record after `prev` in die `d`'s `class` queue (`NONE`: the head) to start
    /// it now.
    fn dequeue_after(&mut self, d: u32, class: Class, prev: u32) -> u32 {
        let now = self.now;
        let r = if prev == NONE {
            self.queues.pop(&self.slab, d, class)
        } else {
            self.queues.unlink_after(&mut self.slab, d, class, prev)
        };
        // It joined its queue when it became ready (`arrive`).
        self.counters.left(class, now - self.slab[r].ready);
        let behind = self.bg_clock(d) - self.slab[r].bg_mark;
        if class != Class::Background {
            self.counters.host_behind_bg += behind;
            // One wait per host transaction that its die's watched work held, the die's time
            // on that work while it waited (`start` holds the mark taken at its arrival).
            let watched = self.watched_clock(d) - self.slab[r].start;
            if watched > 0 {
                self.counters.host_waits_behind_watched += 1;
                self.counters.max_host_wait_behind_watched = self.counters.max_host_wait_behind_watched.max(watched);
            }
        }
        let rec = &mut self.slab[r];
        rec.start = now;
        rec.bg_mark = behind;
        r
    }

    pub(super) fn complete(&mut self, r: u32, now: u64, out: &mut Vec<Completion>) {
        let partner = self.slab[r].partner;
        if partner != NONE {
            self.complete(partner, now, out);
        }
        let rec = &self.slab[r];
        // By now `bg_mark` holds the time it waited behind background work (see `dequeue`).
        out.push(Completion {
            token: rec.token,
            ready: rec.ready,
            start: rec.start,
            finish: now,
            behind_background_ns: rec.bg_mark,
        });
        self.slab.release(r);
    }

    #[inline]
    pub(super) fn mark_die(&mut self, d: u32) {
        let die = &mut self.dies[d as usize];
        if !die.dirty {
            die.dirty = true;
            self.dirty_dies.push(d);
        }
    }

    #[inline]
    pub(super) fn mark_channel(&mut self, c: u32) {
        let ch = &mut self.channels[c as usize];
        if !ch.dirty {
            ch.dirty = true;
            self.dirty_channels.push(c);
        }
    }

    /// Let marked channels grant and marked dies pick, until nothing is marked.
    fn dispatch(&mut self) {
        if self.link.dirty {
            self.link.dirty = false;
            self.dispatch_link();
        }
        loop {
            while let Some(c) = self.dirty_channels.pop() {
                self.channels[c as usize].dirty = false;
                self.dispatch_channel(c);
            }
            if self.dirty_dies.is_empty() {
                break;
            }
            // Dies in the order they were marked (an instant's arrivals in arrival order).
            let mut i = 0;
            while i < self.dirty_dies.len() {
                let d = self.dirty_dies[i];
                i += 1;
                self.dies[d as usize].dirty = false;
                self.dispatch_die(d);
            }
            self.dirty_dies.clear();
        }
    }

    fn dispatch_link(&mut self) {
        if self.link.cur != NONE || self.link.q.len == 0 {
            return;
        }
        let r = self.link.q.pop(&self.slab);
        let dur = self.slab[r].array_ns as u64;
        self.slab[r].start = self.now;
        self.link.cur = r;
        self.link.free_at = self.now + dur;
        self.counters.link_busy += dur;
        self.events.push(self.now + dur, 0, Kind::Link);
    }

    fn dispatch_channel(&mut self, c: u32) {
        let now = self.now;
        loop {
            let ch = &mut self.channels[c as usize];
            if ch.free_at > now {
                if !ch.pending && (!ch.out.is_empty() || !ch.want.is_empty()) {
                    ch.pending = true;
                    let at = ch.free_at;
                    self.events.push(at, c, Kind::Channel);
                }
                return;
            }
            if let Some(d) = ch.out.pop_front() {
                self.start_out(d);
                continue;
            }
            let Some((d, ticket)) = ch.want.pop_front() else { return };
            let die = &mut self.dies[d as usize];
            if die.want && die.ticket == ticket && die.phase == Phase::Idle {
                die.want = false;
                self.start_next(d, true);
            }
        }
    }

    fn dispatch_die(&mut self, d: u32) {
        match self.dies[d as usize].phase {
            Phase::Idle => self.start_next(d, false),
            Phase::Program | Phase::Erase => self.try_suspend(d),
            _ => {}
        }
    }
}
