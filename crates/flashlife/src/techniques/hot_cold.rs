//! Hot/cold classification of host data for second writes (Reusable SSD, paper `001`).
//!
//! The paper classifies by request size ("a logical page is cold if its original request size
//! is 64KB or more") and calls the scheme orthogonal to its design, pointing at better ones.
//! Classifiers are pluggable: [`RequestSize`] is the paper's; [`Recency`] adds an update-recency
//! test, so a small write is hot only if its logical page was last written recently.
//!
//! Why recency: a second write pays off only if its data dies (is overwritten) before the
//! reused block it sits on is cleaned. Data written in small requests but not rewritten soon
//! stays valid at half density in the second-write partition, holding the spare space first
//! writes need (docs/techniques/reusable-ssd.md, "Where and why ours differ").

use serde::{Deserialize, Serialize};

/// Decides, per host unit, whether it is hot (a second-write candidate).
#[typetag::serde]
pub trait HotColdClassifier: Send {
    /// Host unit `lpn`, part of a request of `request_bytes`: hot? Called once per host unit
    /// written, in order, so a classifier may keep per-unit history.
    fn is_hot(&mut self, lpn: u32, request_bytes: u64) -> bool;
}

/// The paper's rule: hot if the request is smaller than `threshold` bytes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RequestSize {
    pub threshold: u64,
}

#[typetag::serde]
impl HotColdClassifier for RequestSize {
    #[inline]
    fn is_hot(&mut self, _lpn: u32, request_bytes: u64) -> bool {
        request_bytes < self.threshold
    }
}

/// Hot if the request is smaller than `threshold` bytes *and* the unit's previous write was
/// among the last `window` host units written. One `u32` per logical unit (the write clock
/// at its last host write); units never written by the host since the start count as old.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Recency {
    pub threshold: u64,
    pub window: u32,
    clock: u32,
    last: Vec<u32>,
}

impl Recency {
    /// A classifier for `logical_units` units. The clock starts past the window, so data
    /// written before the run (preconditioning) is old.
    pub fn new(threshold: u64, window: u32, logical_units: u32) -> Self {
        let window = window.max(1);
        Recency { threshold, window, clock: window, last: vec![0; logical_units as usize] }
    }
}

#[typetag::serde]
impl HotColdClassifier for Recency {
    #[inline]
    fn is_hot(&mut self, lpn: u32, request_bytes: u64) -> bool {
        self.clock = self.clock.wrapping_add(1);
        // Wrapping is harmless: after 2^32 units a stale stamp may look recent once.
        let previous = std::mem::replace(&mut self.last[lpn as usize], self.clock);
        let recent = previous != 0 && self.clock.wrapping_sub(previous) <= self.window;
        request_bytes < self.threshold && recent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_size_is_the_papers_threshold() {
        let mut c = RequestSize { threshold: 64 * 1024 };
        assert!(c.is_hot(0, 4096));
        assert!(c.is_hot(0, 64 * 1024 - 1));
        assert!(!c.is_hot(0, 64 * 1024));
    }

    #[test]
    fn recency_needs_a_recent_previous_write_and_a_small_request() {
        let mut c = Recency::new(64 * 1024, 3, 10);
        assert!(!c.is_hot(5, 4096), "first write of a unit: no history, cold");
        assert!(c.is_hot(5, 4096), "rewritten at once: hot");
        c.is_hot(1, 4096);
        c.is_hot(2, 4096);
        assert!(c.is_hot(5, 4096), "3 units since its last write: within the window");
        for u in [1, 2, 3, 4] {
            c.is_hot(u, 4096);
        }
        assert!(!c.is_hot(5, 4096), "4 units since: outside the window");
        assert!(!c.is_hot(5, 64 * 1024), "recent but in a large request: cold");
        assert!(c.is_hot(5, 4096), "the large write still counted as a write");
    }
}
