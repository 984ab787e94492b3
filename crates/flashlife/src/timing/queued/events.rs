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

/// The pending events. The event `pop_due` hands out stays at the heap's root, marked
/// taken, until the next `push` overwrites it or the next `pop_due` needs the one after it:
/// the usual step, a die's phase end followed at once by its next phase's end, then costs
/// one sift down instead of a pop (down to a leaf and back up) and a push. The order events
/// come out in is the same: keys are unique, and the taken one is the least until replaced.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(into = "EventsData", from = "EventsData")]
pub(super) struct Events {
    heap: BinaryHeap<Event>,
    seq: u64,
    /// The root has been handed out and is no longer pending.
    taken: bool,
}

/// The stored form: the pending events only (a taken root dropped), as before the root was
/// left in place.
#[derive(serde::Serialize, serde::Deserialize)]
struct EventsData {
    heap: BinaryHeap<Event>,
    seq: u64,
}

impl From<Events> for EventsData {
    fn from(mut e: Events) -> Self {
        e.drop_taken();
        EventsData { heap: e.heap, seq: e.seq }
    }
}

impl From<EventsData> for Events {
    fn from(d: EventsData) -> Self {
        Events { heap: d.heap, seq: d.seq, taken: false }
    }
}

impl Events {
    pub fn new() -> Self {
        Events { heap: BinaryHeap::new(), seq: 0, taken: false }
    }

    #[inline]
    fn drop_taken(&mut self) {
        if self.taken {
            self.taken = false;
            self.heap.pop();
        }
    }

    #[inline]
    pub fn push(&mut self, time: u64, idx: u32, kind: Kind) {
        self.seq += 1;
        let ev = Event { key: (time as u128) << 64 | self.seq as u128, idx, kind };
        if self.taken {
            self.taken = false;
            // Overwrite the taken root; the guard sifts the new event down when dropped.
            if let Some(mut root) = self.heap.peek_mut() {
                *root = ev;
            }
        } else {
            self.heap.push(ev);
        }
    }

    /// The earliest pending event.
    #[inline]
    fn first(&self) -> Option<&Event> {
        let h = self.heap.as_slice();
        if !self.taken {
            return h.first();
        }
        // The root is taken: the earliest pending one is one of its children.
        match (h.get(1), h.get(2)) {
            (Some(a), Some(b)) => Some(if b.key < a.key { b } else { a }),
            (a, _) => a,
        }
    }

    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        self.first().map(Event::time)
    }

    /// The earliest event if it is due by `until`.
    #[inline]
    pub fn pop_due(&mut self, until: u64) -> Option<Event> {
        if self.first()?.time() > until {
            return None;
        }
        self.drop_taken();
        self.taken = true;
        self.heap.peek().copied()
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

    /// Against a plain binary heap of every event (the order the module promises): random
    /// pushes and pops with times that never go back, and a round trip through the stored
    /// form now and then, taken root and all.
    #[test]
    fn taken_root_pops_as_a_plain_heap() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        let mut e = Events::new();
        let mut reference: BinaryHeap<Event> = BinaryHeap::new();
        let (mut seq, mut now) = (0u64, 0u64);
        for step in 0..50_000 {
            if rng.gen_bool(0.5) {
                let t = now + rng.gen_range(0..40);
                let idx = rng.gen_range(0..64);
                seq += 1;
                reference.push(Event { key: (t as u128) << 64 | seq as u128, idx, kind: Kind::Ready });
                e.push(t, idx, Kind::Ready);
            } else {
                let until = now + rng.gen_range(0..10);
                assert_eq!(e.peek_time(), reference.peek().map(Event::time));
                let want = match reference.peek() {
                    Some(ev) if ev.time() <= until => reference.pop(),
                    _ => None,
                };
                let got = e.pop_due(until);
                assert_eq!(got.map(|g| (g.key, g.idx)), want.map(|w| (w.key, w.idx)));
                if let Some(w) = want {
                    now = w.time();
                }
            }
            if step % 997 == 0 {
                let data = EventsData::from(e);
                let json = serde_json::to_string(&data).unwrap();
                e = Events::from(serde_json::from_str::<EventsData>(&json).unwrap());
            }
        }
    }
}
