//! A least-recently-used order over dense slot numbers: intrusive links in two arrays, so a
//! touch, an eviction or an insertion moves no memory and allocates nothing. The DRAM data
//! cache (`host/cache.rs`) orders its lines with it and the cached mapping table
//! (`ftl/mapping_cache.rs`) its map entries.

use serde::{Deserialize, Serialize};

/// No slot.
pub const NONE: u32 = u32::MAX;

/// Slots `0..len` in LRU order (a slot may also be out of the list).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LruList {
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Most and least recently used slot, or [`NONE`] when the list is empty.
    head: u32,
    tail: u32,
}

impl LruList {
    /// `slots` slots, none in the list; `capacity`: room for slots added later.
    pub fn new(slots: u32, capacity: u32) -> LruList {
        let mut l = LruList {
            prev: Vec::with_capacity(capacity.max(slots) as usize),
            next: Vec::with_capacity(capacity.max(slots) as usize),
            head: NONE,
            tail: NONE,
        };
        l.prev.resize(slots as usize, NONE);
        l.next.resize(slots as usize, NONE);
        l
    }

    /// A new slot, not in the list yet.
    pub fn add_slot(&mut self) -> u32 {
        self.prev.push(NONE);
        self.next.push(NONE);
        self.prev.len() as u32 - 1
    }

    /// The least recently used slot, or [`NONE`].
    pub fn tail(&self) -> u32 {
        self.tail
    }

    /// Take slot `s` out of the list.
    pub fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p == NONE {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NONE {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    /// Put slot `s` (not in the list) at the most recently used end.
    pub fn push_front(&mut self, s: u32) {
        self.prev[s as usize] = NONE;
        self.next[s as usize] = self.head;
        if self.head != NONE {
            self.prev[self.head as usize] = s;
        }
        self.head = s;
        if self.tail == NONE {
            self.tail = s;
        }
    }

    /// Slot `s` (in the list) was used: move it to the most recently used end.
    #[inline]
    pub fn touch(&mut self, s: u32) {
        if self.head != s {
            self.unlink(s);
            self.push_front(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order after a sequence of operations, from most to least recent, both ways round.
    fn order(l: &LruList) -> Vec<u32> {
        let mut fwd = Vec::new();
        let mut s = l.head;
        while s != NONE {
            fwd.push(s);
            s = l.next[s as usize];
        }
        let mut back = Vec::new();
        let mut s = l.tail;
        while s != NONE {
            back.push(s);
            s = l.prev[s as usize];
        }
        back.reverse();
        assert_eq!(fwd, back, "the links disagree");
        fwd
    }

    #[test]
    fn touches_evictions_and_new_slots_keep_the_order() {
        let mut l = LruList::new(3, 4);
        for s in 0..3 {
            l.push_front(s);
        }
        assert_eq!(order(&l), [2, 1, 0]);
        l.touch(0);
        assert_eq!(order(&l), [0, 2, 1]);
        l.touch(0);
        assert_eq!(order(&l), [0, 2, 1]);
        let victim = l.tail();
        l.unlink(victim);
        assert_eq!((victim, order(&l)), (1, vec![0, 2]));
        let s = l.add_slot();
        l.push_front(s);
        assert_eq!(order(&l), [3, 0, 2]);
        for s in [3, 0, 2] {
            l.unlink(s);
        }
        assert_eq!((l.head, l.tail()), (NONE, NONE));
    }
}
