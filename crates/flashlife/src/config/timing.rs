//! `[timing]`: which scheduler times the flash work, and the queued scheduler's policy,
//! GC pacing and program/erase suspension.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// `timing.scheduler`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerKind {
    /// Each resource keeps the time it next becomes free; work is booked in the order the FTL
    /// decides it (fast: whole-lifetime runs; the reference the golden results were recorded
    /// with).
    Reservation,
    /// Discrete-event (the default): per-die class queues, a channel arbiter, GC interleaved
    /// with host work a transaction at a time, optional suspension.
    Queued,
}

/// `timing.policy`: how a die picks among its queues (queued scheduler).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueuePolicy {
    /// Host reads, then host writes, then background work.
    Priority,
    /// The order transactions became ready, whatever their class.
    Fifo,
}

/// `timing.urgent_gc_pace`: how a die paces cleaning one block from its pool's reserve.
/// Unset: `victim`, or the fixed `urgent_gc_ratio` when that is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UrgentPace {
    /// Background work before host writes (or at `urgent_gc_ratio` if set).
    First,
    /// At the pace that keeps the pool level, from the victim being cleaned: `2v + 1`
    /// background transactions per `n - v` host writes for `v` valid pages of `n`.
    Victim,
}

/// `[timing]`. Always written (with the scheduler named), so that a configuration written by
/// one version means the same run under a later one whatever its default scheduler: until
/// November 2026 the default was `reservation` and the section was left out at its default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimingConfig {
    pub scheduler: SchedulerKind,
    pub policy: QueuePolicy,
    /// The soft threshold's GC pace under `priority`: `[background, host]` transactions
    /// started in this ratio while both wait on a die (e.g. `[8, 1]` for a drive whose writes
    /// each cost about eight GC transactions); empty: background work only when its die has
    /// no host work, or at the hard threshold.
    pub gc_ratio: Vec<u32>,
    /// The pace of cleaning on a die whose pool is one block from its reserve, under
    /// `priority`: `[background, host]` transactions started in this ratio while both wait
    /// (host reads still go first); empty (the default): the pace `urgent_gc_pace` says.
    /// Work held for background work (the hard threshold proper) always goes first. Written
    /// only when set, so configurations without it keep their text and hash.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub urgent_gc_ratio: Vec<u32>,
    /// `"victim"` (unset, without `urgent_gc_ratio`): that cleaning at the pace the victim
    /// being cleaned sets; `"first"`: background work before host writes there. Written only
    /// when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub urgent_gc_pace: Option<UrgentPace>,
    /// Under `priority`: on a die with a failed or reclaimed block's data to move,
    /// `[background, host]` transactions started at least in this ratio while both wait,
    /// host reads included (a pace in force with a larger background share wins); empty:
    /// that work waits like other background work. `fifo` orders by arrival and ignores it.
    pub chore_ratio: Vec<u32>,
    /// The hard threshold: GC erases a plane may owe (decided by the FTL, not yet run on the
    /// flash) before background work goes first on its die.
    pub hard_threshold_erases: u32,
    /// Multi-plane operations: a read or program of the same page of another plane of the
    /// die, waiting in the same class, runs with it as one operation.
    pub multi_plane: bool,
    /// A host read may suspend a program or erase in progress on its die.
    pub suspension: bool,
    pub program_suspend_us: f64,
    pub program_resume_us: f64,
    pub erase_suspend_us: f64,
    pub erase_resume_us: f64,
    /// Below this much array time left, the operation finishes instead of suspending.
    pub program_min_remaining_us: f64,
    pub erase_min_remaining_us: f64,
    /// Suspensions per operation at most (against starving it).
    pub max_suspensions: u8,
    /// Host reads served per suspension before the operation resumes.
    pub reads_per_suspension: u32,
}

impl Default for TimingConfig {
    fn default() -> Self {
        TimingConfig {
            scheduler: SchedulerKind::Queued,
            policy: QueuePolicy::Priority,
            gc_ratio: Vec::new(),
            urgent_gc_ratio: Vec::new(),
            urgent_gc_pace: None,
            chore_ratio: vec![1, 1],
            hard_threshold_erases: 1,
            multi_plane: false,
            suspension: false,
            program_suspend_us: 20.0,
            program_resume_us: 20.0,
            erase_suspend_us: 30.0,
            erase_resume_us: 30.0,
            program_min_remaining_us: 100.0,
            erase_min_remaining_us: 300.0,
            max_suspensions: 2,
            reads_per_suspension: 2,
        }
    }
}

impl TimingConfig {
    /// Check ranges; errors name the dotted key under `timing.`.
    pub fn validate(&self) -> Result<()> {
        for (key, v) in [
            ("program_suspend_us", self.program_suspend_us),
            ("program_resume_us", self.program_resume_us),
            ("erase_suspend_us", self.erase_suspend_us),
            ("erase_resume_us", self.erase_resume_us),
            ("program_min_remaining_us", self.program_min_remaining_us),
            ("erase_min_remaining_us", self.erase_min_remaining_us),
        ] {
            if !(v.is_finite() && (0.0..1e9).contains(&v)) {
                return Err(Error::config(format!("timing.{key}"), v, "a duration in microseconds, >= 0"));
            }
        }
        let ratios = [("gc_ratio", &self.gc_ratio), ("urgent_gc_ratio", &self.urgent_gc_ratio)];
        for (key, ratio) in ratios.into_iter().chain([("chore_ratio", &self.chore_ratio)]) {
            if !(ratio.is_empty() || (ratio.len() == 2 && ratio.iter().all(|&v| v > 0))) {
                return Err(Error::config(
                    format!("timing.{key}"),
                    format!("{ratio:?}"),
                    "[] or [background, host], both positive",
                ));
            }
        }
        if self.urgent_gc_pace == Some(UrgentPace::Victim) && !self.urgent_gc_ratio.is_empty() {
            return Err(Error::config(
                "timing.urgent_gc_pace",
                "victim",
                "\"first\" with timing.urgent_gc_ratio set (a fixed pace or the victim's, not both)",
            ));
        }
        if self.policy == QueuePolicy::Fifo {
            // FIFO orders by arrival alone: no class, so no pace.
            if self.urgent_gc_pace == Some(UrgentPace::Victim) {
                return Err(Error::config(
                    "timing.urgent_gc_pace",
                    "victim",
                    "\"first\" with timing.policy = \"fifo\"",
                ));
            }
            if let Some((key, ratio)) = ratios.into_iter().find(|(_, r)| !r.is_empty()) {
                return Err(Error::config(
                    format!("timing.{key}"),
                    format!("{ratio:?}"),
                    "[] with timing.policy = \"fifo\"",
                ));
            }
        }
        if self.suspension && self.max_suspensions == 0 {
            return Err(Error::config("timing.max_suspensions", 0, "at least 1 when timing.suspension is on"));
        }
        if self.suspension && self.reads_per_suspension == 0 {
            return Err(Error::config("timing.reads_per_suspension", 0, "at least 1 when timing.suspension is on"));
        }
        // Every key but the scheduler is the queued scheduler's own.
        if self.scheduler == SchedulerKind::Reservation
            && *self != (TimingConfig { scheduler: SchedulerKind::Reservation, ..TimingConfig::default() })
        {
            return Err(Error::config(
                "timing.scheduler",
                "reservation",
                "\"queued\" (every other [timing] key is the queued scheduler's)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::Suspension;

    /// The configuration's suspension defaults are the engine's (`Suspension::default`).
    #[test]
    fn suspension_defaults_match_the_engine() {
        let (c, s) = (TimingConfig::default(), Suspension::default());
        let ns = |us: f64| (us * 1000.0).round() as u64;
        assert_eq!(ns(c.program_suspend_us), s.program_suspend_ns);
        assert_eq!(ns(c.program_resume_us), s.program_resume_ns);
        assert_eq!(ns(c.erase_suspend_us), s.erase_suspend_ns);
        assert_eq!(ns(c.erase_resume_us), s.erase_resume_ns);
        assert_eq!(ns(c.program_min_remaining_us), s.program_min_remaining_ns);
        assert_eq!(ns(c.erase_min_remaining_us), s.erase_min_remaining_ns);
        assert_eq!(c.max_suspensions, s.max_per_operation);
        assert_eq!(c.reads_per_suspension, s.reads_per_suspension);
    }

    /// `urgent_gc_ratio`: checked like `gc_ratio`, refused with FIFO, and written only when
    /// set, so a queued configuration written before it keeps its text (and hash).
    #[test]
    fn urgent_gc_ratio_is_checked_and_written_only_when_set() {
        let queued = TimingConfig { scheduler: SchedulerKind::Queued, ..TimingConfig::default() };
        let text = toml::to_string(&queued).unwrap();
        assert!(!text.contains("urgent_gc_ratio"), "{text}");
        let paced = TimingConfig { urgent_gc_ratio: vec![16, 1], ..queued.clone() };
        assert!(paced.validate().is_ok());
        assert!(toml::to_string(&paced).unwrap().contains("urgent_gc_ratio = [16, 1]"));
        for bad in [vec![16], vec![0, 1], vec![1, 2, 3]] {
            let e = TimingConfig { urgent_gc_ratio: bad, ..queued.clone() }.validate().unwrap_err().to_string();
            assert!(e.contains("timing.urgent_gc_ratio") && e.contains("both positive"), "{e}");
        }
        let fifo = TimingConfig { policy: QueuePolicy::Fifo, ..paced.clone() };
        let e = fifo.validate().unwrap_err().to_string();
        assert!(e.contains("timing.urgent_gc_ratio") && e.contains("fifo"), "{e}");
        // The victim's pace: written when set, not with a fixed ratio.
        assert!(!text.contains("urgent_gc_pace"), "the default pace is not written: {text}");
        let victim = TimingConfig { urgent_gc_pace: Some(UrgentPace::Victim), ..queued.clone() };
        assert!(victim.validate().is_ok());
        assert!(toml::to_string(&victim).unwrap().contains("urgent_gc_pace = \"victim\""));
        let first = TimingConfig { urgent_gc_pace: Some(UrgentPace::First), ..queued.clone() };
        assert!(toml::to_string(&first).unwrap().contains("urgent_gc_pace = \"first\""));
        let both = TimingConfig { urgent_gc_pace: Some(UrgentPace::Victim), ..paced };
        let e = both.validate().unwrap_err().to_string();
        assert!(e.contains("timing.urgent_gc_pace") && e.contains("urgent_gc_ratio"), "{e}");
    }
}
