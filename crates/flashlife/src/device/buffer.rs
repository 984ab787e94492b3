//! A device write buffer (DRAM) in front of one way: FIFO flush, space released when a page's
//! program has succeeded (a failed program's data must stay for the retry).
//!
//! Pages enter in order; each entry keeps the time its space is released. Admitting a page
//! waits, if the buffer is full, for the oldest entries to be released. The ring is sized
//! once for the buffer's pages: no allocation per page.

use std::collections::VecDeque;

use crate::timing::Done;

/// One way's write buffer.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct WayBuffer {
    capacity: u64,
    used: u64,
    entries: VecDeque<(Done, u64)>,
}

impl WayBuffer {
    /// A buffer of `capacity` bytes holding pages of about `page_bytes`.
    pub fn new(capacity: u64, page_bytes: u64) -> Self {
        let slots = (capacity / page_bytes.max(1)) as usize + 2;
        WayBuffer { capacity, used: 0, entries: VecDeque::with_capacity(slots) }
    }

    /// Release every entry whose program finished by `t`.
    #[inline]
    fn drain(&mut self, t: u64) {
        while let Some(&(release, bytes)) = self.entries.front() {
            if release.as_time() > t {
                break;
            }
            self.used -= bytes;
            self.entries.pop_front();
        }
    }

    /// The time `bytes`, ready at `ready`, find room: `ready`, or later when the buffer is full.
    #[inline]
    pub fn admit(&mut self, ready: Done, bytes: u64) -> Done {
        // Release times are read as times: the buffer's own clock.
        let mut t = ready;
        self.drain(t.as_time());
        while self.used + bytes > self.capacity {
            let Some(&(release, _)) = self.entries.front() else { break };
            t = t.max(release);
            self.drain(t.as_time());
        }
        t
    }

    /// `bytes` admitted, released at `release` (when their program succeeded).
    #[inline]
    pub fn push(&mut self, release: Done, bytes: u64) {
        self.used += bytes;
        self.entries.push_back((release, bytes));
    }

    /// Bytes held at time `t` (releasing what finished by then).
    pub fn occupancy(&mut self, t: u64) -> u64 {
        self.drain(t);
        self.used
    }

    /// Bytes admitted so far whose space is still held after `t` (without releasing anything).
    pub fn held_after(&self, t: u64) -> u64 {
        self.entries.iter().filter(|&&(release, _)| release.as_time() > t).map(|&(_, b)| b).sum()
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_buffer_waits_for_the_oldest_release() {
        let mut b = WayBuffer::new(2 * 16384, 16384);
        assert_eq!(b.admit(Done::START, 16384), Done::START);
        b.push(Done::at(1000), 16384);
        assert_eq!(b.admit(Done::START, 16384), Done::START);
        b.push(Done::at(2000), 16384);
        // Full: the third page waits for the first release.
        assert_eq!(b.admit(Done::at(10), 16384), Done::at(1000));
        b.push(Done::at(3000), 16384);
        assert_eq!(b.held_after(1500), 2 * 16384);
        assert_eq!(b.held_after(2500), 16384);
        assert_eq!(b.occupancy(1500), 2 * 16384);
        assert_eq!(b.occupancy(5000), 0);
        assert_eq!(b.admit(Done::at(5000), 16384), Done::at(5000));
    }
}
