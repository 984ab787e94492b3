//! Progress reports: the core says how far a run is; drawing it (a bar on a terminal, log
//! lines in a batch job, a notebook widget) is the caller's business.

use crate::config::StopCondition;

/// How far a run is, reported every few thousand requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Share of the stop condition reached, in [0, 1] (for `death`: the drive's life used;
    /// 0 for `end`, where the length of the workload is not known).
    pub fraction: f64,
    /// Requests served so far (over every segment of a resumed run).
    pub requests: u64,
    /// What `fraction` measures: "done" or "life used".
    pub label: &'static str,
}

/// Where progress reports go.
pub type ProgressSink = Box<dyn FnMut(Progress) + Send>;

/// What `fraction` measures for a stop condition.
pub(super) fn label(stop: StopCondition) -> &'static str {
    match stop {
        StopCondition::Death => "life used",
        _ => "done",
    }
}
