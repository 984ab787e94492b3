//! The open-channel host FTL's own write buffer (`open_channel.host_buffer_kib`), as pblk
//! keeps one (its ring buffer, `pblk-rb.c`): a host write completes once its units are in
//! the buffer; a page goes to the device when it is full (a partial page waits for the next
//! write, or for a flush, which pads it); a unit's space is freed when the device has
//! completed the page holding it.
//!
//! Space is freed in the order it was taken, as pblk's sync pointer advances only over
//! entries whose writes have all completed: a page that completes early frees nothing while
//! an older one is still in flight. The buffer only keeps times and counts; which units
//! are where is the host FTL's page map.

use std::collections::VecDeque;

use crate::timing::{Done, Scheduler};
use serde::{Deserialize, Serialize};

/// `summary.open_channel.host_path.host_buffer`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostBufferStats {
    pub capacity_bytes: u64,
    /// Units that found the buffer full and waited for space.
    pub full_waits: u64,
    /// The longest such wait, us.
    pub max_wait_us: f64,
    /// The most bytes the buffer held at once (never above `capacity_bytes`).
    pub max_held_bytes: u64,
    /// Partial pages sent to the device padded: by a flush (each partial page once), or by
    /// the rewrite of a page whose program failed and was reported (OCSSD).
    pub padded_pages: u64,
    /// Empty slots those pages were padded with, in units.
    pub padding_units: u64,
    /// Flushes: at the caller's request, or because the buffer was full of partial pages.
    pub flushes: u64,
    /// Bytes in partial pages, not sent to the device, when the summary was taken.
    pub unsent_bytes: u64,
}

/// The buffer: counts of units, in mapping units.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostBuffer {
    capacity: u32,
    unit_bytes: u64,
    /// Units in each parallel unit's open host page, not yet sent to the device.
    unsent: Vec<u32>,
    unsent_total: u32,
    /// Pages sent: (the time their space is freed, units), oldest first.
    sent: VecDeque<(Done, u32)>,
    sent_total: u32,
    stats: HostBufferStats,
}

impl HostBuffer {
    /// A buffer of `bytes` (at least one page: the caller checks) for `pus` parallel units.
    pub fn new(bytes: u64, unit_bytes: u64, pus: u32) -> HostBuffer {
        let capacity = (bytes / unit_bytes.max(1)).min(u32::MAX as u64) as u32;
        HostBuffer {
            capacity,
            unit_bytes,
            unsent: vec![0; pus as usize],
            unsent_total: 0,
            sent: VecDeque::new(),
            sent_total: 0,
            stats: HostBufferStats { capacity_bytes: capacity as u64 * unit_bytes, ..Default::default() },
        }
    }

    /// Release the pages the device completed by `t`, oldest first. Whether and when a page
    /// completed is the scheduler's answer ([`Scheduler::completed`]): under the queued
    /// scheduler a completion value is an estimate, and a page still in flight holds its
    /// space however early its estimate.
    fn release(&mut self, t: u64, sched: &dyn Scheduler) {
        while let Some(&(free_at, units)) = self.sent.front() {
            match sched.completed(free_at) {
                Some(f) if f.as_time() <= t => {
                    self.sent_total -= units;
                    self.sent.pop_front();
                }
                _ => break,
            }
        }
    }

    #[inline]
    fn held(&self) -> u32 {
        self.unsent_total + self.sent_total
    }

    /// When a unit arriving at `ready` finds room: `ready`, or the time the oldest sent pages
    /// free enough. `None` when the buffer is full of units in partial pages (nothing sent to
    /// wait for): the caller must flush them first.
    /// The unit waits for the oldest sent page still held: until its completion if that is
    /// known, or for the page itself (joined with its own data, [`Scheduler::join`]) while
    /// it is in flight, and takes its space.
    pub fn room_at(&mut self, ready: Done, sched: &mut dyn Scheduler) -> Option<Done> {
        let mut t = ready;
        self.release(t.as_time(), sched);
        while self.held() >= self.capacity {
            let &(free_at, units) = self.sent.front()?;
            t = match sched.completed(free_at) {
                Some(f) => t.max(f),
                None => sched.join(t, free_at),
            };
            self.sent_total -= units;
            self.sent.pop_front();
        }
        if t != ready {
            // `t` is the later of the two: the wait, in plain time, is the buffer's statistic.
            self.stats.full_waits += 1;
            self.stats.max_wait_us = self.stats.max_wait_us.max((t.as_time() - ready.as_time()) as f64 / 1e3);
        }
        Some(t)
    }

    /// A unit took its room (after [`Self::room_at`]) in `pu`'s open host page.
    pub fn admitted(&mut self, pu: u32) {
        self.unsent[pu as usize] += 1;
        self.unsent_total += 1;
        debug_assert!(self.held() <= self.capacity, "the host buffer overflowed");
        let held = self.held() as u64 * self.unit_bytes;
        self.stats.max_held_bytes = self.stats.max_held_bytes.max(held);
    }

    /// `pu`'s open host page went to the device, completed at `done`: its buffered units
    /// are freed then. `padding` empty slots were padded.
    pub fn page_sent(&mut self, pu: u32, done: Done, padding: u32) {
        let units = std::mem::take(&mut self.unsent[pu as usize]);
        if padding > 0 {
            self.stats.padded_pages += 1;
            self.stats.padding_units += padding as u64;
        }
        if units == 0 {
            return;
        }
        self.unsent_total -= units;
        self.sent.push_back((done, units));
        self.sent_total += units;
    }

    /// Parallel units whose open host page holds buffered units (a flush pads these).
    pub fn partial_pages(&self) -> impl Iterator<Item = u32> + '_ {
        self.unsent.iter().enumerate().filter(|(_, &n)| n > 0).map(|(pu, _)| pu as u32)
    }

    pub fn flushed(&mut self) {
        self.stats.flushes += 1;
    }

    /// Units held at time `t` (sent pages completed by then freed).
    pub fn held_at(&mut self, t: u64, sched: &dyn Scheduler) -> u32 {
        self.release(t, sched);
        self.held()
    }

    pub fn capacity_units(&self) -> u32 {
        self.capacity
    }

    pub fn stats(&self) -> HostBufferStats {
        HostBufferStats { unsent_bytes: self.unsent_total as u64 * self.unit_bytes, ..self.stats.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Completions known at submission: the reservation scheduler's (a value is its time).
    fn known() -> crate::timing::Reservation {
        let cfg = crate::config::FlashConfig::default();
        crate::timing::Reservation::new(crate::flash::ArrayTimes::new(&cfg), true, 600.0, 0.0, 400.0, 1, vec![0])
    }

    #[test]
    fn space_frees_in_order_and_a_full_buffer_waits() {
        let s = &mut known();
        // Four units, two parallel units.
        let mut b = HostBuffer::new(4 * 4096, 4096, 2);
        for _ in 0..2 {
            assert_eq!(b.room_at(Done::START, s), Some(Done::START));
            b.admitted(0);
        }
        b.page_sent(0, Done::at(5000), 0);
        for _ in 0..2 {
            assert_eq!(b.room_at(Done::START, s), Some(Done::START));
            b.admitted(1);
        }
        // Full: two sent (free at 5000), two unsent.
        b.page_sent(1, Done::at(1000), 0);
        // The page that completed first (1000) frees nothing before the older one (5000).
        assert_eq!(b.held_at(2000, s), 4);
        assert_eq!(b.room_at(Done::at(2000), s), Some(Done::at(5000)));
        assert_eq!(b.held_at(5000, s), 0);
        let st = b.stats();
        assert_eq!((st.full_waits, st.max_held_bytes), (1, 4 * 4096));
    }

    #[test]
    fn a_buffer_full_of_partial_pages_asks_for_a_flush() {
        let s = &mut known();
        let mut b = HostBuffer::new(2 * 4096, 4096, 2);
        assert_eq!(b.room_at(Done::START, s), Some(Done::START));
        b.admitted(0);
        assert_eq!(b.room_at(Done::START, s), Some(Done::START));
        b.admitted(1);
        assert_eq!(b.room_at(Done::START, s), None);
        assert_eq!(b.partial_pages().collect::<Vec<_>>(), vec![0, 1]);
        b.page_sent(0, Done::at(100), 3);
        b.page_sent(1, Done::at(200), 3);
        assert_eq!(b.room_at(Done::START, s), Some(Done::at(100)));
        assert_eq!(b.stats().padded_pages, 2);
        assert_eq!(b.stats().padding_units, 6);
    }
}
