//! The event queue: a binary heap of small `Copy` events keyed on (time, sequence).
//!
//! The sequence number makes ties deterministic (first scheduled, first handled), so a run
//! never depends on the heap's internal order. Cancellation is lazy: die events carry the
//! die's generation and are dropped when it has moved on (a suspended operation's finish).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What happens at an event's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) enum Kind {
    /// Record `idx` becomes ready to start.
    Ready,
    /// Die `idx` ends its current phase, if its generation is still `gen`.
    Die { gen: u32 },
    /// Channel `idx` becomes free and has someone waiting.
    Channel,
    /// The host link finishes its current transfer.
    Link,
    /// Record `idx`, a delay on no resource (an encoder run, a DRAM cache access), is done.
    Delayed,
}

#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(super) struct Event {
    /// Time in the high 64 bits, sequence in the low: one integer compare orders events.
    key: u128,
    pub idx: u32,
    pub kind: Kind,
}

impl Event {
    #[inline]
    pub fn time(&self) -> u64 {
        (self.key >> 64) as u64
    }
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    /// Reversed, so the std max-heap pops the earliest (time, seq) first.
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Events {
    heap: BinaryHeap<Event>,
    seq: u64,
}

impl Events {
    pub fn new() -> Self {
        Events { heap: BinaryHeap::new(), seq: 0 }
    }

    #[inline]
    pub fn push(&mut self, time: u64, idx: u32, kind: Kind) {
        self.seq += 1;
        self.heap.push(Event { key: (time as u128) << 64 | self.seq as u128, idx, kind });
    }

    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(Event::time)
    }

    /// The earliest event if it is due by `until`.
    #[inline]
    pub fn pop_due(&mut self, until: u64) -> Option<Event> {
        if self.heap.peek()?.time() <= until {
            self.heap.pop()
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_pop_by_time_then_scheduling_order() {
        // Reference: the (time, seq) order the module promises.
        let mut e = Events::new();
        e.push(20, 1, Kind::Link);
        e.push(10, 2, Kind::Channel);
        e.push(10, 3, Kind::Ready);
        e.push(10, 4, Kind::Die { gen: 7 });
        assert_eq!(e.peek_time(), Some(10));
        let order: Vec<u32> = std::iter::from_fn(|| e.pop_due(15)).map(|ev| ev.idx).collect();
        assert_eq!(order, [2, 3, 4]);
        assert!(e.pop_due(19).is_none());
        assert_eq!(e.pop_due(20).map(|ev| ev.kind), Some(Kind::Link));
        assert_eq!(e.peek_time(), None);
    }
}
