//! A device write buffer (DRAM) in front of one way: FIFO flush, space released when a page's
//! program has succeeded (a failed program's data must stay for the retry).
//!
//! Pages enter in order; each entry keeps the completion that releases its space. Admitting a
//! page waits, if the buffer is full, for the oldest entries to be released. Whether and when
//! an entry's program finished is the scheduler's answer ([`Scheduler::completed`]): under
//! the reservation scheduler the completion is the time; under the queued one a pending
//! program holds its space however early its estimate, and a page admitted into that space
//! waits for the program itself. The ring is sized once for the buffer's pages: no allocation
//! per page.

use std::collections::VecDeque;

use crate::timing::{Done, Scheduler};

/// One way's write buffer.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct WayBuffer {
    capacity: u64,
    used: u64,
    entries: VecDeque<(Done, u64)>,
}

/// Where a page found room ([`WayBuffer::admit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    /// What the page's program and, for write-back, the host's answer wait for: the page's
    /// data, and the release of the space it takes when the buffer was full.
    pub at: Done,
    /// The buffer was full: the page waited for space.
    pub waited: bool,
}

impl WayBuffer {
    /// A buffer of `capacity` bytes holding pages of about `page_bytes`.
    pub fn new(capacity: u64, page_bytes: u64) -> Self {
        let slots = (capacity / page_bytes.max(1)) as usize + 2;
        WayBuffer { capacity, used: 0, entries: VecDeque::with_capacity(slots) }
    }

    /// Release every entry, oldest first, whose program finished by `t`.
    #[inline]
    fn drain(&mut self, t: u64, sched: &dyn Scheduler) {
        while let Some(&(release, bytes)) = self.entries.front() {
            match sched.completed(release) {
                Some(f) if f.as_time() <= t => {
                    self.used -= bytes;
                    self.entries.pop_front();
                }
                _ => break,
            }
        }
    }

    /// Room for `bytes` whose data is ready at `ready`: at once, or when the oldest entries'
    /// programs release theirs.
    #[inline]
    pub fn admit(&mut self, ready: Done, bytes: u64, sched: &mut dyn Scheduler) -> Admission {
        // Release times are read as times: the buffer's own clock.
        let mut at = ready;
        self.drain(at.as_time(), sched);
        let waited = self.used + bytes > self.capacity;
        while self.used + bytes > self.capacity {
            let Some(&(release, freed)) = self.entries.front() else { break };
            match sched.completed(release) {
                // Finished after `at`: the page waits until then.
                Some(f) => at = at.max(f),
                // Still running: the page waits for that program (a dependency, whatever its
                // estimate says) and takes its space, and for its own data if that is still
                // coming. The two are joined by the scheduler, not by their estimates: the
                // program's, made when it was submitted, can be far earlier than its real end
                // (it may have queued behind hundreds of others), and taking the transfer for
                // the later let every page in at once and the buffer bound nothing (before
                // 2026-11-29: `ftpassd-small` at QD32 queued up to 420 programs a die).
                None => at = sched.join(at, release),
            }
            self.used -= freed;
            self.entries.pop_front();
        }
        Admission { at, waited }
    }

    /// `bytes` admitted, released at `release` (when their program succeeded).
    #[inline]
    pub fn push(&mut self, release: Done, bytes: u64) {
        self.used += bytes;
        self.entries.push_back((release, bytes));
    }

    /// Bytes held at time `t` (releasing what finished by then).
    pub fn occupancy(&mut self, t: u64, sched: &dyn Scheduler) -> u64 {
        self.drain(t, sched);
        self.used
    }

    /// Bytes admitted so far whose space is still held after `t` (without releasing anything):
    /// programs pending, or finished after `t`.
    pub fn held_after(&self, t: u64, sched: &dyn Scheduler) -> u64 {
        let held = |&&(release, _): &&(Done, u64)| sched.completed(release).is_none_or(|f| f.as_time() > t);
        self.entries.iter().filter(held).map(|&(_, b)| b).sum()
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
        // Completions known at submission: the reservation scheduler's.
        let cfg = crate::config::FlashConfig::default();
        let mut r =
            crate::timing::Reservation::new(crate::flash::ArrayTimes::new(&cfg), true, 600.0, 0.0, 400.0, 1, vec![0]);
        let s: &mut dyn Scheduler = &mut r;
        let mut b = WayBuffer::new(2 * 16384, 16384);
        assert_eq!(b.admit(Done::START, 16384, s), Admission { at: Done::START, waited: false });
        b.push(Done::at(1000), 16384);
        assert_eq!(b.admit(Done::START, 16384, s).at, Done::START);
        b.push(Done::at(2000), 16384);
        // Full: the third page waits for the first release.
        assert_eq!(b.admit(Done::at(10), 16384, s), Admission { at: Done::at(1000), waited: true });
        b.push(Done::at(3000), 16384);
        assert_eq!(b.held_after(1500, s), 2 * 16384);
        assert_eq!(b.held_after(2500, s), 16384);
        assert_eq!(b.occupancy(1500, s), 2 * 16384);
        assert_eq!(b.occupancy(5000, s), 0);
        assert_eq!(b.admit(Done::at(5000), 16384, s).at, Done::at(5000));
    }
}
