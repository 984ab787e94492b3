//! `[sampling]`: sampled timing. A lifetime run needs timing only for its latency; wear, write
//! amplification and death come from bookkeeping. With sampling on, the run alternates
//! stretches in fast-forward (no timing) with timed windows, each after a timed warm-up, and
//! reports latency from the windows only (periodic sampling with functional warming, as
//! sampled simulation does in computer architecture).

use serde::{Deserialize, Serialize};

use super::{parse_interval, Interval, StopCondition};
use crate::error::{Error, Result};

/// `[sampling]`. Left out of a written configuration when it is the default (off), so
/// configurations that predate it keep their text (and hash).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SamplingConfig {
    /// Sample the timing instead of timing every request.
    pub enabled: bool,
    /// A window starts every this much of the run: a share of the stop condition (`2%`; for
    /// `run.until = "death"`, of the drive's rated life used), host bytes written (`0.5dw`,
    /// `64GiB`) or simulated time (`10s`).
    pub every: String,
    /// Timed requests before each window, not measured: long enough for queues and garbage
    /// collection's backlog to reach their steady behaviour after a stretch in fast-forward.
    pub warmup_requests: u64,
    /// Timed and measured requests per window.
    pub window_requests: u64,
}

impl Default for SamplingConfig {
    fn default() -> Self {
        SamplingConfig { enabled: false, every: "2%".into(), warmup_requests: 20_000, window_requests: 20_000 }
    }
}

/// Where the windows start: a share of the run's progress, or a fixed interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Every {
    /// A fraction of the stop condition (of the rated life used, for a run to death).
    Share(f64),
    Interval(Interval),
}

impl SamplingConfig {
    pub fn is_default(&self) -> bool {
        *self == SamplingConfig::default()
    }

    /// `sampling.every`, parsed against the stop condition it divides.
    pub fn every(&self, stop: StopCondition, logical_bytes: u64) -> Result<Every> {
        let s = self.every.trim();
        if let Some(p) = s.strip_suffix('%') {
            let share = p.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0 && *v <= 100.0);
            let Some(share) = share else {
                return Err(Error::config("sampling.every", s, "a share of the run in (0, 100]%, e.g. 2%"));
            };
            if stop == StopCondition::EndOfWorkload {
                return Err(Error::config(
                    "sampling.every",
                    s,
                    "host bytes (0.5dw, 64GiB) or a time (10s) with run.until = \"end\", whose length is not known \
                     in advance",
                ));
            }
            return Ok(Every::Share(share / 100.0));
        }
        parse_interval("sampling.every", s, logical_bytes).map(Every::Interval)
    }

    /// Check ranges; errors name the dotted key under `sampling.`.
    pub fn validate(&self, timing: bool) -> Result<()> {
        if !self.enabled {
            if !self.is_default() {
                return Err(Error::config("sampling.enabled", false, "true (every other [sampling] key is its own)"));
            }
            return Ok(());
        }
        if !timing {
            return Err(Error::config(
                "sampling.enabled",
                true,
                "false with ftl.timing = false (fast-forward throughout has no latency to sample)",
            ));
        }
        if self.window_requests == 0 {
            return Err(Error::config("sampling.window_requests", 0, "a positive request count"));
        }
        // The share's form is checked here too; the interval's needs the drive's size.
        if self.every.trim().ends_with('%') {
            self.every(StopCondition::Death, 1)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reads_shares_bytes_and_times() {
        let on = SamplingConfig { enabled: true, ..Default::default() };
        let every = |s: &str, stop| SamplingConfig { every: s.into(), ..on.clone() }.every(stop, 1000);
        assert_eq!(every("5%", StopCondition::Death).unwrap(), Every::Share(0.05));
        assert_eq!(every("0.5dw", StopCondition::Death).unwrap(), Every::Interval(Interval::WriteBytes(500)));
        assert_eq!(every("10s", StopCondition::Death).unwrap(), Every::Interval(Interval::TimeNs(10_000_000_000)));
        for bad in ["0%", "101%", "x%", "-1%"] {
            let e = every(bad, StopCondition::Death).unwrap_err().to_string();
            assert!(e.contains("sampling.every"), "{bad}: {e}");
        }
        let e = every("2%", StopCondition::EndOfWorkload).unwrap_err().to_string();
        assert!(e.contains("run.until = \"end\""), "{e}");
    }

    #[test]
    fn sampling_needs_timing_and_its_keys_need_it_on() {
        let on = SamplingConfig { enabled: true, ..Default::default() };
        assert!(on.validate(true).is_ok());
        assert!(on.validate(false).unwrap_err().to_string().contains("ftl.timing = false"));
        let stray = SamplingConfig { window_requests: 5, ..Default::default() };
        assert!(stray.validate(true).unwrap_err().to_string().contains("sampling.enabled"));
        let empty = SamplingConfig { window_requests: 0, ..on };
        assert!(empty.validate(true).unwrap_err().to_string().contains("sampling.window_requests"));
    }
}
