//! A die's state machine: idle, sensing, holding sensed data, transferring out,
//! programming (data-in, then the array), erasing, suspending; at most one program or erase
//! suspended beside the current phase. Every phase end is one die event, cancelled by
//! bumping the die's generation when its operation is suspended.

use super::events::Kind;
use super::policy::{Class, GcRatio};
use super::slab::NONE;
use super::stats::QueuedStats;
use super::{Completion, Queued};
use crate::timing::Op;

/// What a die is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) enum Phase {
    Idle,
    /// A read senses until `end`.
    Sense,
    /// A sensed page waits in the register for the channel.
    WaitOut,
    /// A read's data crosses the channel until `end`.
    Out,
    /// A program: data-in until `array_start`, then the array until `end`.
    Program,
    /// An erase, in the array until `end`.
    Erase,
    /// Suspending the operation in `cur` until `end`.
    Suspending,
}

#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Die {
    pub phase: Phase,
    /// The record in service (the one being suspended, in `Suspending`).
    pub cur: u32,
    pub end: u64,
    /// Program or erase: when its (suspendable) array phase began or begins.
    pub array_start: u64,
    /// Bumped when a scheduled phase end is cancelled (suspension).
    pub gen: u32,
    /// A suspended program or erase, and its array time left.
    pub suspended: u32,
    pub remaining: u64,
    /// Host reads started during the current suspension.
    pub served: u32,
    pub channel: u32,
    pub urgent: bool,
    /// Background work goes before host writes but not host reads (`Queued::set_urgent_writes`).
    pub urgent_writes: bool,
    /// The policy's per-die state.
    pub credit: u32,
    /// Waiting for the channel to start a program; `ticket` tells a current request in the
    /// channel's queue from a stale one.
    pub want: bool,
    pub ticket: u32,
    pub dirty: bool,
    pub busy_since: u64,
    /// Since when the die works for background work (`u64::MAX`: it does not).
    pub bg_since: u64,
    /// Since when the die works for background work of the watched cause (`Queued::watch`;
    /// `u64::MAX`: it does not).
    pub watched_since: u64,
    /// When it last went idle (0 before its first work).
    #[serde(default)]
    pub idle_since: u64,
    /// The pace its urgent pool's cleaning needs (`Queued::set_pace`), if known.
    #[serde(default)]
    pub pace: Option<GcRatio>,
    /// A pool of the die has a failed or reclaimed block's data to move (`Queued::set_chores`).
    #[serde(default)]
    pub chores: bool,
}

impl Die {
    pub fn new(channel: u32) -> Self {
        Die {
            phase: Phase::Idle,
            cur: NONE,
            end: 0,
            array_start: 0,
            gen: 0,
            suspended: NONE,
            remaining: 0,
            served: 0,
            channel,
            urgent: false,
            urgent_writes: false,
            credit: 0,
            want: false,
            ticket: 0,
            dirty: false,
            busy_since: 0,
            idle_since: 0,
            pace: None,
            chores: false,
            bg_since: u64::MAX,
            watched_since: u64::MAX,
        }
    }

    pub fn is_idle(&self) -> bool {
        self.phase == Phase::Idle && self.suspended == NONE
    }
}

// Starting and ending die phases.
impl Queued {
    /// Die `d` is idle: start what its policy picks (or, with an operation suspended, a host
    /// read or the resume). `granted`: its channel has just been granted to it.
    pub(super) fn start_next(&mut self, d: u32, granted: bool) {
        if self.dies[d as usize].suspended != NONE {
            self.serve_suspended(d);
            return;
        }
        if self.queues.mask(d) == 0 {
            return;
        }
        let die = &self.dies[d as usize];
        let mut cand = self.queues.candidates(&self.slab, d, die.urgent, self.policy.reads_arrivals());
        cand.near_reserve = die.urgent_writes && !die.urgent;
        cand.pace = die.pace;
        cand.chores = die.chores;
        // With one class waiting there is nothing to choose.
        let class =
            if cand.mask.is_power_of_two() { Class::lowest(cand.mask) } else { self.policy.pick(&cand, die.credit) };
        let head = self.queues.head(d, class);
        let op = self.slab[head].op;
        let c = die.channel;
        if op == Op::Program && !granted {
            let ch = &self.channels[c as usize];
            if ch.free_at > self.now || !ch.out.is_empty() || !ch.want.is_empty() {
                let die = &mut self.dies[d as usize];
                if !die.want {
                    die.want = true;
                    die.ticket = die.ticket.wrapping_add(1);
                    let ticket = die.ticket;
                    self.channels[c as usize].want.push_back((d, ticket));
                    self.mark_channel(c);
                }
                return;
            }
        }
        let die = &mut self.dies[d as usize];
        die.want = false;
        self.policy.started(class, &cand, &mut die.credit);
        let r = self.dequeue(d, class);
        self.pair(d, class, r);
        match op {
            Op::Read => self.start_sense(d, r),
            Op::Program => self.start_program(d, r),
            _ => self.start_array(d, r, Phase::Erase, self.now, self.slab[r].array_ns as u64),
        }
    }

    /// Die `d` (idle) has an operation suspended: a queued host read within the suspension's
    /// cap, or the resume. Out of line: rare, and kept apart so that the common path's code
    /// stays small.
    #[cold]
    #[inline(never)]
    fn serve_suspended(&mut self, d: u32) {
        let cap = self.suspension.map_or(0, |s| s.reads_per_suspension);
        if self.queues.len(d, Class::HostRead) > 0 && self.dies[d as usize].served < cap {
            self.dies[d as usize].served += 1;
            let r = self.dequeue(d, Class::HostRead);
            self.start_sense(d, r);
        } else {
            self.resume(d);
        }
    }

    /// Die `d` leaves idle to work on `r`.
    fn open(&mut self, d: u32, r: u32, phase: Phase, end: u64) {
        let now = self.now;
        let bg = self.slab[r].class == Class::Background;
        let watched = bg && self.watched_recs.get(r);
        let die = &mut self.dies[d as usize];
        die.phase = phase;
        die.cur = r;
        die.end = end;
        die.busy_since = now;
        if bg {
            die.bg_since = now;
        }
        if watched {
            die.watched_since = now;
        }
        self.events.push(end, d, Kind::Die { gen: die.gen });
    }

    fn start_sense(&mut self, d: u32, r: u32) {
        let end = self.now + self.slab[r].array_ns as u64;
        self.open(d, r, Phase::Sense, end);
    }

    fn start_program(&mut self, d: u32, r: u32) {
        let x = self.slab[r].xfer_ns as u64;
        let c = self.dies[d as usize].channel as usize;
        self.channels[c].free_at = self.now + x;
        self.counters.channel_busy[c] += x;
        self.start_array(d, r, Phase::Program, self.now + x, self.slab[r].array_ns as u64);
    }

    /// A program or erase whose array phase runs `array_ns` from `array_start`.
    fn start_array(&mut self, d: u32, r: u32, phase: Phase, array_start: u64, array_ns: u64) {
        self.dies[d as usize].array_start = array_start;
        self.open(d, r, phase, array_start + array_ns);
    }

    /// Channel granted to die `d`, holding a sensed page.
    pub(super) fn start_out(&mut self, d: u32) {
        let now = self.now;
        let die = &mut self.dies[d as usize];
        let x = self.slab[die.cur].xfer_ns as u64;
        die.phase = Phase::Out;
        die.end = now + x;
        let c = die.channel as usize;
        self.channels[c].free_at = now + x;
        self.counters.channel_busy[c] += x;
        self.events.push(now + x, d, Kind::Die { gen: die.gen });
    }

    /// Die `d`'s current phase has ended.
    pub(super) fn phase_end(&mut self, d: u32, out: &mut Vec<Completion>) {
        let now = self.now;
        let die = &mut self.dies[d as usize];
        match die.phase {
            Phase::Sense => {
                die.phase = Phase::WaitOut;
                let c = die.channel;
                self.channels[c as usize].out.push_back(d);
                self.mark_channel(c);
            }
            Phase::Out | Phase::Program | Phase::Erase => {
                let r = die.cur;
                let c = die.channel;
                self.close(d);
                self.complete(r, now, out);
                self.mark_die(d);
                // A read's transfer has just ended: the bus is free for whoever waits. (After a
                // program or an erase too: leaving the channel unmarked then changed the cached
                // mapping table's benchmark run, docs/performance.md, December 2.)
                self.mark_channel(c);
            }
            Phase::Suspending => {
                self.close(d);
                self.dies[d as usize].served = 0;
                self.mark_die(d);
            }
            Phase::Idle | Phase::WaitOut => unreachable!("no event is scheduled in {:?}", die.phase),
        }
    }

    /// Die `d` goes idle: close its busy (and background) time.
    fn close(&mut self, d: u32) {
        let now = self.now;
        let die = &mut self.dies[d as usize];
        self.counters.die_busy[d as usize] += now - die.busy_since;
        if die.bg_since != u64::MAX {
            self.counters.die_bg_busy[d as usize] += now - die.bg_since;
            die.bg_since = u64::MAX;
        }
        if die.watched_since != u64::MAX {
            self.counters.die_watched_busy[d as usize] += now - die.watched_since;
            die.watched_since = u64::MAX;
        }
        die.phase = Phase::Idle;
        die.cur = NONE;
        die.idle_since = now;
    }
}

// Suspension and snapshots.
impl Queued {
    /// A host read waits on die `d`, busy with a program or erase: suspend it if allowed.
    /// During a program's data-in the suspension is decided now and takes effect when the
    /// data is in (the array phase is what suspends).
    pub(super) fn try_suspend(&mut self, d: u32) {
        let Some(s) = self.suspension else { return };
        let die = &self.dies[d as usize];
        if self.queues.len(d, Class::HostRead) == 0 || die.suspended != NONE {
            return;
        }
        let at = self.now.max(die.array_start);
        let (min_left, cost) = match die.phase {
            Phase::Program => (s.program_min_remaining_ns, s.program_suspend_ns),
            _ => (s.erase_min_remaining_ns, s.erase_suspend_ns),
        };
        let r = die.cur;
        if die.end - at < min_left || self.slab[r].suspensions >= s.max_per_operation {
            return;
        }
        if die.phase == Phase::Program {
            self.counters.program_suspensions += 1;
        } else {
            self.counters.erase_suspensions += 1;
        }
        self.slab[r].suspensions += 1;
        let die = &mut self.dies[d as usize];
        die.gen = die.gen.wrapping_add(1);
        die.remaining = die.end - at;
        die.suspended = r;
        die.phase = Phase::Suspending;
        die.end = at + cost;
        self.events.push(at + cost, d, Kind::Die { gen: die.gen });
    }

    /// Die `d` (idle) resumes its suspended operation.
    fn resume(&mut self, d: u32) {
        let s = self.suspension.expect("only a suspension leaves an operation suspended");
        let die = &mut self.dies[d as usize];
        let r = std::mem::replace(&mut die.suspended, NONE);
        let remaining = die.remaining;
        let (phase, cost) = match self.slab[r].op {
            Op::Program => (Phase::Program, s.program_resume_ns),
            _ => (Phase::Erase, s.erase_resume_ns),
        };
        self.start_array(d, r, phase, self.now + cost, remaining);
    }

    pub(super) fn snapshot(&self) -> QueuedStats {
        let now = self.now;
        let c = &self.counters;
        let die_busy = self
            .dies
            .iter()
            .enumerate()
            .map(|(d, die)| c.die_busy[d] + if die.phase == Phase::Idle { 0 } else { now - die.busy_since })
            .collect();
        let die_bg = (0..self.dies.len() as u32).map(|d| self.bg_clock(d)).collect();
        let channel_busy = self
            .channels
            .iter()
            .enumerate()
            .map(|(i, ch)| c.channel_busy[i] - ch.free_at.saturating_sub(now))
            .collect();
        QueuedStats {
            elapsed_ns: now,
            link_busy_ns: c.link_busy - self.link.free_at.saturating_sub(now),
            die_busy_ns: die_busy,
            die_background_busy_ns: die_bg,
            channel_busy_ns: channel_busy,
            queue_depth: c.depth_stats(now, self.queues.open_waits(&self.slab, now)),
            host_behind_background_ns: c.host_behind_bg,
            host_waits_behind_watched: c.host_waits_behind_watched,
            max_host_wait_behind_watched_ns: c.max_host_wait_behind_watched,
            program_suspensions: c.program_suspensions,
            erase_suspensions: c.erase_suspensions,
            multi_plane_ops: c.multi_plane_ops,
        }
    }
}
