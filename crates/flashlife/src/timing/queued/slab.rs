//! Transaction records in a slab, and the per-die class queues threaded through them.
//!
//! Records are fixed-size and addressed by `u32`; a freed record goes on a free list and is
//! reused, so once the slab has grown to the largest number of transactions in flight no
//! submission allocates. Each (die, class) queue is an intrusive FIFO (head and tail indices,
//! the link inside the record), and each die keeps a bitmask of its non-empty classes, so
//! enqueue, dequeue and "which classes have work" are O(1) (anchor lessons 2 and 8).

use super::policy::{Candidates, Class, CLASSES};
use crate::timing::Op;

pub(super) const NONE: u32 = u32::MAX;

/// One submitted transaction, from submission to completion: 64 bytes, one cache line, so a
/// record taken from a deep queue costs one miss (and one prefetch hides it).
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
#[repr(align(64))]
pub(super) struct Rec {
    pub op: Op,
    pub class: Class,
    /// Suspensions this operation has had (capped by the suspension parameters).
    pub suspensions: u8,
    pub die: u32,
    pub token: u32,
    /// Next record in the same queue.
    pub next: u32,
    /// Array time: sense, program or erase; for a host transfer, its whole link time (at
    /// most about 4.3 s, checked at submission).
    pub array_ns: u32,
    /// Channel time of its bytes (likewise).
    pub xfer_ns: u32,
    /// When it may start (after the clock clamp): when it joins its queue.
    pub ready: u64,
    /// When it got its first resource. Until then, on a die's queue: the die's clock of
    /// watched background work when it arrived (`Queued::watch`), which the record has no
    /// other room for.
    pub start: u64,
    /// Arrival order among ready transactions (the FIFO key).
    pub arrival: u64,
    /// The die's background-busy clock when this record joined its queue.
    pub bg_mark: u64,
    /// Plane within its die and page within its block (multi-plane pairing).
    pub plane: u8,
    pub page: u32,
    /// The record run together with this one as one multi-plane operation (`NONE`: none).
    pub partner: u32,
}

const _: () = assert!(std::mem::size_of::<Rec>() == 64, "a record is one cache line");

/// The records, and the indices free for reuse (a stack: the most recently freed record,
/// likely still in cache, is reused first; taking one reads no record).
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(into = "SlabData", from = "SlabData")]
pub(super) struct Slab {
    recs: Vec<Rec>,
    free: Vec<u32>,
}

/// A slab as checkpoints store it: the free records linked through `next` from `free`
/// (most recently freed first), as the slab kept them before its free stack.
#[derive(serde::Serialize, serde::Deserialize)]
struct SlabData {
    recs: Vec<Rec>,
    free: u32,
}

impl From<Slab> for SlabData {
    fn from(mut s: Slab) -> Self {
        let mut head = NONE;
        for &i in &s.free {
            s.recs[i as usize].next = head;
            head = i;
        }
        SlabData { recs: s.recs, free: head }
    }
}

impl From<SlabData> for Slab {
    fn from(d: SlabData) -> Self {
        let mut free = Vec::new();
        let mut i = d.free;
        while i != NONE {
            free.push(i);
            i = d.recs[i as usize].next;
        }
        free.reverse();
        Slab { recs: d.recs, free }
    }
}

impl Slab {
    pub fn new() -> Self {
        Slab { recs: Vec::new(), free: Vec::new() }
    }

    #[inline]
    pub fn alloc(&mut self, rec: Rec) -> u32 {
        if let Some(i) = self.free.pop() {
            self.recs[i as usize] = rec;
            i
        } else {
            self.recs.push(rec);
            (self.recs.len() - 1) as u32
        }
    }

    #[inline]
    pub fn release(&mut self, i: u32) {
        self.free.push(i);
    }

    /// Records ever allocated (the high-water mark of transactions in flight).
    pub fn capacity(&self) -> usize {
        self.recs.len()
    }
}

impl std::ops::Index<u32> for Slab {
    type Output = Rec;
    #[inline]
    fn index(&self, i: u32) -> &Rec {
        &self.recs[i as usize]
    }
}

impl std::ops::IndexMut<u32> for Slab {
    #[inline]
    fn index_mut(&mut self, i: u32) -> &mut Rec {
        &mut self.recs[i as usize]
    }
}

/// One flag per slab record that most runs never set (a high-priority flow's transaction, a
/// watched cause's): no memory until the first is set, and from then on a reused record's
/// flag is cleared when it is taken. Kept beside the records, which have no spare bit.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub(super) struct RecBits(Vec<u64>);

impl RecBits {
    /// Record `i` was just taken: set its flag to `on`.
    #[inline]
    pub fn set(&mut self, i: u32, on: bool) {
        if !on && self.0.is_empty() {
            return;
        }
        let (w, b) = ((i / 64) as usize, 1u64 << (i % 64));
        if self.0.len() <= w {
            self.0.resize(w + 1, 0);
        }
        if on {
            self.0[w] |= b;
        } else {
            self.0[w] &= !b;
        }
    }

    #[inline]
    pub fn get(&self, i: u32) -> bool {
        self.0.get((i / 64) as usize).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
}

/// A FIFO threaded through the records' `next` links, with a front segment for a
/// high-priority flow's records (`[[flows]]` with `priority = "high"`): each segment is in
/// arrival order, and the high one is served first.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(super) struct Fifo {
    pub head: u32,
    tail: u32,
    pub len: u32,
    /// The last record of the high-priority segment at the front (`NONE`: the segment is empty).
    hi_tail: u32,
}

impl Fifo {
    pub const EMPTY: Fifo = Fifo { head: NONE, tail: NONE, len: 0, hi_tail: NONE };

    /// Queue `i` behind the other high-priority records, ahead of every normal one.
    pub fn push_high(&mut self, slab: &mut Slab, i: u32) {
        if self.hi_tail == NONE {
            slab[i].next = self.head;
            self.head = i;
        } else {
            slab[i].next = slab[self.hi_tail].next;
            slab[self.hi_tail].next = i;
        }
        if self.tail == NONE || self.tail == self.hi_tail {
            self.tail = i;
        }
        self.hi_tail = i;
        self.len += 1;
    }

    #[inline]
    pub fn push(&mut self, slab: &mut Slab, i: u32) {
        slab[i].next = NONE;
        if self.tail == NONE {
            self.head = i;
        } else {
            slab[self.tail].next = i;
        }
        self.tail = i;
        self.len += 1;
    }

    /// Take out the record after `prev` (not the head: see `pop`).
    pub fn unlink_after(&mut self, slab: &mut Slab, prev: u32) -> u32 {
        let i = slab[prev].next;
        debug_assert!(i != NONE);
        slab[prev].next = slab[i].next;
        if self.tail == i {
            self.tail = prev;
        }
        // The high segment is a prefix, so the record before its last one is high too.
        if self.hi_tail == i {
            self.hi_tail = prev;
        }
        self.len -= 1;
        i
    }

    #[inline]
    pub fn pop(&mut self, slab: &Slab) -> u32 {
        let i = self.head;
        debug_assert!(i != NONE);
        self.head = slab[i].next;
        if self.hi_tail == i {
            self.hi_tail = NONE;
        }
        // The new head is looked at when its die next picks: in a deep queue its record was
        // written long ago and is out of cache, so it is asked for now.
        if self.head != NONE {
            crate::cache_hint::prefetch(&slab.recs, self.head as usize);
        }
        if self.head == NONE {
            self.tail = NONE;
        }
        self.len -= 1;
        i
    }
}

/// The class queues of every die, with each die's non-empty mask.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct DieQueues {
    q: Vec<[Fifo; CLASSES]>,
    mask: Vec<u8>,
}

impl DieQueues {
    pub fn new(dies: usize) -> Self {
        DieQueues { q: vec![[Fifo::EMPTY; CLASSES]; dies], mask: vec![0; dies] }
    }

    #[inline]
    pub fn push(&mut self, slab: &mut Slab, d: u32, c: Class, i: u32) {
        self.q[d as usize][c as usize].push(slab, i);
        self.mask[d as usize] |= c.bit();
    }

    /// Queue `i` ahead of the normal-priority records of its class (`Fifo::push_high`).
    pub fn push_high(&mut self, slab: &mut Slab, d: u32, c: Class, i: u32) {
        self.q[d as usize][c as usize].push_high(slab, i);
        self.mask[d as usize] |= c.bit();
    }

    #[inline]
    pub fn pop(&mut self, slab: &Slab, d: u32, c: Class) -> u32 {
        let q = &mut self.q[d as usize][c as usize];
        let i = q.pop(slab);
        if q.len == 0 {
            self.mask[d as usize] &= !c.bit();
        }
        i
    }

    /// Take out the record after `prev` in die `d`'s `c` queue (never the head).
    pub fn unlink_after(&mut self, slab: &mut Slab, d: u32, c: Class, prev: u32) -> u32 {
        let q = &mut self.q[d as usize][c as usize];
        let i = q.unlink_after(slab, prev);
        if q.len == 0 {
            self.mask[d as usize] &= !c.bit();
        }
        i
    }

    #[inline]
    pub fn head(&self, d: u32, c: Class) -> u32 {
        self.q[d as usize][c as usize].head
    }

    #[inline]
    pub fn len(&self, d: u32, c: Class) -> u32 {
        self.q[d as usize][c as usize].len
    }

    #[inline]
    pub fn mask(&self, d: u32) -> u8 {
        self.mask[d as usize]
    }

    /// Per class: the waits so far, at `now`, of the transactions in its queues on all dies.
    /// A walk over every queued transaction: for snapshots (a time-series row, the summary),
    /// never per operation.
    pub fn open_waits(&self, slab: &Slab, now: u64) -> [u128; CLASSES] {
        let mut open = [0u128; CLASSES];
        for q in &self.q {
            for c in Class::ALL {
                let mut i = q[c as usize].head;
                while i != NONE {
                    open[c as usize] += (now - slab[i].ready) as u128;
                    i = slab[i].next;
                }
            }
        }
        open
    }

    /// What the policy sees of die `d` (its mask must be non-zero); the heads' arrival
    /// numbers only when `arrivals`.
    #[inline]
    pub fn candidates(&self, slab: &Slab, d: u32, urgent: bool, arrivals: bool) -> Candidates {
        let mask = self.mask[d as usize];
        let mut head_arrival = [u64::MAX; CLASSES];
        for c in Class::ALL {
            if arrivals && mask & c.bit() != 0 {
                head_arrival[c as usize] = slab[self.head(d, c)].arrival;
            }
        }
        Candidates { mask, head_arrival, urgent, near_reserve: false, pace: None, chores: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(arrival: u64) -> Rec {
        Rec {
            op: Op::Read,
            class: Class::HostRead,
            suspensions: 0,
            die: 0,
            token: arrival as u32,
            next: NONE,
            array_ns: 0,
            xfer_ns: 0,
            ready: 0,
            start: 0,
            arrival,
            bg_mark: 0,
            plane: 0,
            page: 0,
            partner: NONE,
        }
    }

    #[test]
    fn queues_are_fifo_per_class_and_the_mask_tracks_emptiness() {
        // Reference: FIFO order and "mask bit set iff the queue is non-empty" (invariants).
        let mut slab = Slab::new();
        let mut q = DieQueues::new(2);
        let a = slab.alloc(rec(0));
        let b = slab.alloc(rec(1));
        let c = slab.alloc(rec(2));
        q.push(&mut slab, 1, Class::Background, a);
        q.push(&mut slab, 1, Class::HostRead, b);
        q.push(&mut slab, 1, Class::Background, c);
        assert_eq!(q.mask(1), 0b101);
        assert_eq!(q.mask(0), 0);
        let cand = q.candidates(&slab, 1, false, true);
        assert_eq!(cand.head_arrival, [1, u64::MAX, 0]);
        assert_eq!(q.len(1, Class::Background), 2);
        assert_eq!(q.pop(&slab, 1, Class::Background), a);
        assert_eq!(q.pop(&slab, 1, Class::Background), c);
        assert_eq!(q.mask(1), 0b001);
        assert_eq!(q.pop(&slab, 1, Class::HostRead), b);
        assert_eq!(q.mask(1), 0);
    }

    #[test]
    fn high_priority_records_go_ahead_of_normal_ones_each_in_arrival_order() {
        // Reference: the two-segment order of `Fifo::push_high` (high in arrival order, then
        // normal in arrival order), whatever the interleaving of pushes, pops and a partner
        // taken from the middle.
        let mut slab = Slab::new();
        let mut q = DieQueues::new(1);
        let r: Vec<u32> = (0..7).map(|a| slab.alloc(rec(a))).collect();
        let c = Class::HostWrite;
        q.push(&mut slab, 0, c, r[0]);
        q.push_high(&mut slab, 0, c, r[1]);
        q.push(&mut slab, 0, c, r[2]);
        q.push_high(&mut slab, 0, c, r[3]);
        q.push_high(&mut slab, 0, c, r[4]);
        // Queue: 1 3 4 | 0 2. Take 4 (the high tail) out from behind 3.
        assert_eq!(q.unlink_after(&mut slab, 0, c, r[3]), r[4]);
        q.push_high(&mut slab, 0, c, r[5]);
        q.push(&mut slab, 0, c, r[6]);
        let order: Vec<u32> = (0..6).map(|_| q.pop(&slab, 0, c)).collect();
        assert_eq!(order, [r[1], r[3], r[5], r[0], r[2], r[6]]);
        assert_eq!(q.mask(0), 0);
        // Only high records, then a normal one behind them, then high again after a drain.
        q.push_high(&mut slab, 0, c, r[0]);
        q.push(&mut slab, 0, c, r[1]);
        q.push_high(&mut slab, 0, c, r[2]);
        assert_eq!((0..3).map(|_| q.pop(&slab, 0, c)).collect::<Vec<_>>(), [r[0], r[2], r[1]]);
    }

    #[test]
    fn a_checkpointed_slab_reuses_its_free_records_in_the_same_order() {
        // Reference: the free stack's LIFO order (invariant), kept through the checkpoint
        // form, which links free records through `next` as the slab did before its stack.
        let mut slab = Slab::new();
        let ids: Vec<u32> = (0..5).map(|a| slab.alloc(rec(a))).collect();
        for &i in &[ids[3], ids[0], ids[4]] {
            slab.release(i);
        }
        let bytes = postcard::to_stdvec(&slab).unwrap();
        let mut back: Slab = postcard::from_bytes(&bytes).unwrap();
        let order: Vec<u32> = (0..3).map(|a| back.alloc(rec(a))).collect();
        assert_eq!(order, [ids[4], ids[0], ids[3]]);
        assert_eq!(back.alloc(rec(9)), 5, "then the slab grows");
    }

    #[test]
    fn released_records_are_reused_so_the_slab_stops_growing() {
        // Reference: the no-allocation-in-steady-state property (slab length as the witness).
        let mut slab = Slab::new();
        for round in 0..100 {
            let x = slab.alloc(rec(round));
            let y = slab.alloc(rec(round));
            slab.release(x);
            slab.release(y);
        }
        assert_eq!(slab.capacity(), 2);
    }
}
