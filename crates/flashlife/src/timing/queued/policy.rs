//! Which of a die's class queues goes next: the pluggable scheduling policy.
//!
//! A policy sees only what a pick needs (which classes have work, the arrival order of their
//! heads, the die's urgency flag) and one integer of per-die state it may keep (the GC-to-host
//! credit); it never sees transactions, so a pick is a few bit operations. The engine asks
//! for a pick whenever the die can start something and tells the policy what it started.

use crate::stats::Cause;
use crate::timing::{Op, Transaction};

/// Number of queue classes per die.
pub const CLASSES: usize = 3;

/// The queue a transaction waits in on its die.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Class {
    /// Host reads.
    HostRead = 0,
    /// Host programs (and host erases, which open-channel hosts issue).
    HostWrite = 1,
    /// Everything done on the drive's own behalf: GC, wear leveling, reclaim, bad-block
    /// moves, migration, second writes.
    Background = 2,
}

impl Class {
    pub const ALL: [Class; CLASSES] = [Class::HostRead, Class::HostWrite, Class::Background];

    /// The class of a transaction with `op` done for `cause`. Second writes (Reusable SSD)
    /// carry the host's data on the host's path, so they are host work.
    #[inline]
    pub fn of(op: Op, cause: Cause) -> Class {
        match (cause, op) {
            (Cause::Host | Cause::SecondWrite, Op::Read) => Class::HostRead,
            (Cause::Host | Cause::SecondWrite, _) => Class::HostWrite,
            _ => Class::Background,
        }
    }

    /// The class of `tx`: its cause's, or a host class for work on a host request's path
    /// under another cause ([`Transaction::for_host`]).
    #[inline]
    pub fn of_tx(tx: &Transaction) -> Class {
        Class::of(tx.op, if tx.for_host { Cause::Host } else { tx.class })
    }

    #[inline]
    pub(super) fn bit(self) -> u8 {
        1 << self as u8
    }

    /// The first class (in `ALL`'s order) of a non-empty class mask.
    #[inline]
    pub(super) fn lowest(mask: u8) -> Class {
        match mask.trailing_zeros() {
            0 => Class::HostRead,
            1 => Class::HostWrite,
            _ => Class::Background,
        }
    }
}

/// What a policy sees of one die when it picks.
#[derive(Debug, Clone, Copy)]
pub struct Candidates {
    /// Bit `c` set: class `c` has a ready transaction waiting. Never 0 when a policy is asked.
    pub mask: u8,
    /// Arrival number of each class's head (smaller arrived earlier); meaningless for an
    /// empty class.
    pub head_arrival: [u64; CLASSES],
    /// The caller's hard-threshold flag for this die (see `Queued::set_urgent`): background
    /// work before everything.
    pub urgent: bool,
    /// A pool of the die is one block from its reserve (`Queued::set_urgent_writes`) and the
    /// die is not `urgent`: background work before host writes, or paced against them.
    pub near_reserve: bool,
    /// The pace the die's pool near its reserve needs, from its victim (`Queued::set_pace`),
    /// if known.
    pub pace: Option<GcRatio>,
    /// A pool of the die has a failed or reclaimed block's data to move (`Queued::set_chores`).
    pub chores: bool,
}

impl Candidates {
    #[inline]
    pub fn has(&self, c: Class) -> bool {
        self.mask & c.bit() != 0
    }
}

/// A scheduling policy: picks the class whose head a die starts next. Serialised by name
/// (`typetag`) with the engine, so a checkpoint keeps it.
#[typetag::serde]
pub trait Policy: Send {
    /// The name a configuration will select it by.
    fn name(&self) -> &'static str;

    /// The class to serve next among `c.mask`, which holds at least two classes (with one,
    /// the engine serves it without asking). `credit` is this die's state kept for the
    /// policy (0 at start); `pick` only reads it.
    fn pick(&self, c: &Candidates, credit: u32) -> Class;

    /// The die started the head of `class` (chosen by `pick` from `c`): update `credit`.
    fn started(&self, _class: Class, _c: &Candidates, _credit: &mut u32) {}

    /// Does `pick` read `Candidates::head_arrival`? Filling it costs a look at the head
    /// record of every non-empty queue, and a deep background queue's head is rarely in
    /// cache; a policy that orders by class alone says no.
    fn reads_arrivals(&self) -> bool {
        false
    }
}

/// Arrival order across classes on each die: what booking in submission order does, but
/// only per die (dies and channels still overlap). Ignores urgency.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct Fifo;

#[typetag::serde(name = "fifo")]
impl Policy for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    #[inline]
    fn pick(&self, c: &Candidates, _credit: u32) -> Class {
        let mut best = None;
        for class in Class::ALL {
            if c.has(class) && best.is_none_or(|b: Class| c.head_arrival[class as usize] < c.head_arrival[b as usize]) {
                best = Some(class);
            }
        }
        best.expect("a pick needs a non-empty class")
    }

    fn reads_arrivals(&self) -> bool {
        true
    }
}

/// Background operations per host operations when both wait on a die (the soft threshold's
/// "GC at a ratio" mode), e.g. `{ background: 1, host: 4 }`: one GC step per four host ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GcRatio {
    pub background: u32,
    pub host: u32,
}

/// Host reads, then host writes, then background work (non-preemptive strict priority), with
/// two ways for background work to get ahead:
/// - a die flagged urgent (hard threshold: free blocks nearly gone) serves background first;
/// - with a [`GcRatio`], background work waiting behind host work still gets its share
///   (soft threshold); without one it runs only when the die has no host work.
///
/// A die whose pool is one block from its reserve (`Candidates::near_reserve`) serves its
/// background work before host writes, or paces it against them (`near_reserve`).
///
/// A die with a failed or reclaimed block's data to move (`Candidates::chores`) gives its
/// background work at least `chore_ratio`'s share against all host work, reads included:
/// without it that work waits behind every host read and, on a pool one block from its
/// reserve, behind GC too, and a saturated drive never moved it (a read-only stream at QD32:
/// 58 read reclaims where the closed form says 436-500; 7 failed blocks, none retired).
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct Priority {
    pub gc_ratio: Option<GcRatio>,
    #[serde(default)]
    pub near_reserve: NearReserve,
    #[serde(default)]
    pub chore_ratio: Option<GcRatio>,
}

/// How [`Priority`] serves background work on a die whose pool is near its reserve.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum NearReserve {
    /// Before host writes (host reads still first).
    #[default]
    First,
    /// Against host writes at this ratio.
    Ratio(GcRatio),
    /// Against host writes at the pace its victim needs (`Candidates::pace`); first until
    /// one is known.
    Victim,
}

impl Priority {
    /// The pace in force on a die: near the reserve, the one `near_reserve` says (none when
    /// served first); elsewhere the soft threshold's.
    #[inline]
    fn ratio(&self, c: &Candidates) -> Option<GcRatio> {
        let pace = match (c.near_reserve, self.near_reserve) {
            (true, NearReserve::Ratio(r)) => Some(r),
            (true, NearReserve::Victim) => c.pace,
            _ => self.gc_ratio,
        };
        match (c.chores, self.chore_ratio, pace) {
            // The larger background share of the two: b / h against r.b / r.h.
            (true, Some(r), Some(p)) if p.background * r.host >= r.background * p.host => Some(p),
            (true, Some(r), _) => Some(r),
            _ => pace,
        }
    }

    /// Does background work go before host writes on this die? Urgent dies; and near the
    /// reserve with no pace, unless host reads wait (they use no free block).
    #[inline]
    fn background_first(&self, c: &Candidates) -> bool {
        let unpaced = match self.near_reserve {
            NearReserve::First => true,
            NearReserve::Ratio(_) => false,
            NearReserve::Victim => c.pace.is_none(),
        };
        c.urgent || (c.near_reserve && unpaced && !c.has(Class::HostRead))
    }
}

#[typetag::serde(name = "priority")]
impl Policy for Priority {
    fn name(&self) -> &'static str {
        "priority"
    }

    #[inline]
    fn pick(&self, c: &Candidates, credit: u32) -> Class {
        let bg = c.has(Class::Background);
        if bg && self.background_first(c) {
            return Class::Background;
        }
        if bg {
            if let Some(r) = self.ratio(c) {
                if credit >= r.host {
                    return Class::Background;
                }
            }
        }
        // Lowest set bit: host read (bit 0) before host write (bit 1) before background.
        Class::lowest(c.mask)
    }

    /// Credit grows by `background` for each host operation started while background work
    /// waits, and each background start spends `host`; so over a busy stretch the two are
    /// started in the ratio `background : host`. Credit does not build up while no background
    /// work waits, so a later burst of GC cannot take a long run of turns.
    #[inline]
    fn started(&self, class: Class, c: &Candidates, credit: &mut u32) {
        if let Some(r) = self.ratio(c) {
            if class == Class::Background {
                *credit = credit.saturating_sub(r.host);
            } else if c.has(Class::Background) {
                *credit += r.background;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cands(classes: &[Class], urgent: bool) -> Candidates {
        let mut c = Candidates {
            mask: 0,
            head_arrival: [u64::MAX; CLASSES],
            urgent,
            near_reserve: false,
            pace: None,
            chores: false,
        };
        for (i, &class) in classes.iter().enumerate() {
            c.mask |= class.bit();
            c.head_arrival[class as usize] = i as u64;
        }
        c
    }

    #[test]
    fn classes_follow_op_and_cause() {
        // Reference: the class list of the module docs (host read / host write / background).
        assert_eq!(Class::of(Op::Read, Cause::Host), Class::HostRead);
        assert_eq!(Class::of(Op::Program, Cause::Host), Class::HostWrite);
        assert_eq!(Class::of(Op::Erase, Cause::Host), Class::HostWrite);
        assert_eq!(Class::of(Op::Read, Cause::SecondWrite), Class::HostRead);
        assert_eq!(Class::of(Op::Program, Cause::SecondWrite), Class::HostWrite);
        // A translation page read on a cached map's miss: counted as the map's, queued as
        // the host's.
        let miss = Transaction::read(0, 0, 0, crate::flash::BitMode::Slc, 4096, Cause::Mapping);
        assert_eq!(Class::of_tx(&miss), Class::Background);
        assert_eq!(Class::of_tx(&miss.for_host()), Class::HostRead);
        assert!(miss.for_host().on_host_path() && !miss.on_host_path());
        for cause in Cause::ALL[1..].iter().filter(|&&c| c != Cause::SecondWrite) {
            for op in [Op::Read, Op::Program, Op::Erase] {
                assert_eq!(Class::of(op, *cause), Class::Background);
            }
        }
    }

    #[test]
    fn fifo_takes_the_earliest_head_whatever_its_class() {
        let c = cands(&[Class::Background, Class::HostRead], false);
        assert_eq!(Fifo.pick(&c, 0), Class::Background);
        let c = cands(&[Class::HostWrite, Class::Background, Class::HostRead], true);
        assert_eq!(Fifo.pick(&c, 0), Class::HostWrite, "urgency does not reorder FIFO");
    }

    #[test]
    fn priority_is_read_write_background_unless_urgent() {
        let p = Priority::default();
        let all = cands(&[Class::Background, Class::HostWrite, Class::HostRead], false);
        assert_eq!(p.pick(&all, 0), Class::HostRead);
        assert_eq!(p.pick(&cands(&[Class::Background, Class::HostWrite], false), 0), Class::HostWrite);
        assert_eq!(p.pick(&cands(&[Class::Background], false), 0), Class::Background);
        let urgent = cands(&[Class::HostRead, Class::Background], true);
        assert_eq!(p.pick(&urgent, 0), Class::Background);
        assert_eq!(p.pick(&cands(&[Class::HostRead], true), 0), Class::HostRead, "urgent with no background work");
    }

    #[test]
    fn gc_ratio_interleaves_background_in_its_share() {
        // Reference: the ratio's definition; with both classes always waiting, 20 starts at
        // 1:4 are 4 background and 16 host, at 2:1 about two thirds background.
        for (ratio, want_bg) in [(GcRatio { background: 1, host: 4 }, 4), (GcRatio { background: 2, host: 1 }, 13)] {
            let p = Priority { gc_ratio: Some(ratio), near_reserve: NearReserve::First, chore_ratio: None };
            let c = cands(&[Class::HostWrite, Class::Background], false);
            let mut credit = 0;
            let mut bg = 0;
            for _ in 0..20 {
                let class = p.pick(&c, credit);
                p.started(class, &c, &mut credit);
                bg += (class == Class::Background) as u32;
            }
            assert_eq!(bg, want_bg, "{ratio:?}");
        }
        // No background waiting: no credit builds up.
        let p = Priority {
            gc_ratio: Some(GcRatio { background: 1, host: 1 }),
            near_reserve: NearReserve::First,
            chore_ratio: None,
        };
        let mut credit = 0;
        p.started(Class::HostRead, &cands(&[Class::HostRead], false), &mut credit);
        assert_eq!(credit, 0);
    }

    #[test]
    fn chores_take_their_share_against_reads_and_writes() {
        // Reference: the ratio's definition, as for `gc_ratio`: with host reads and background
        // work always waiting on a die with chores, 20 starts at 1:1 are 10 background; the
        // larger share of a pace in force and the chores' wins; without chores, reads first.
        let one = GcRatio { background: 1, host: 1 };
        let p = Priority { gc_ratio: None, near_reserve: NearReserve::First, chore_ratio: Some(one) };
        let mut c = cands(&[Class::HostRead, Class::Background], false);
        let count = |c: &Candidates| {
            let (mut credit, mut bg) = (0, 0);
            for _ in 0..20 {
                let class = p.pick(c, credit);
                p.started(class, c, &mut credit);
                bg += (class == Class::Background) as u32;
            }
            bg
        };
        assert_eq!(count(&c), 0, "no chores: reads first");
        c.chores = true;
        assert_eq!(count(&c), 10);
        let q = Priority { gc_ratio: Some(GcRatio { background: 1, host: 4 }), ..p };
        assert_eq!(q.ratio(&c), Some(one), "1:1 is the larger share");
        let q = Priority { gc_ratio: Some(GcRatio { background: 3, host: 1 }), ..p };
        assert_eq!(q.ratio(&c), Some(GcRatio { background: 3, host: 1 }));
    }
}
