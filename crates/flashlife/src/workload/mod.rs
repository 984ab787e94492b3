//! Workloads: streams of host requests, from synthetic generators or trace files.
//!
//! A workload is an iterator of [`HostRequest`]s that may fail with a precise error
//! (`file:line: field: message`). Workloads never know the drive's internals: they are
//! told the logical capacity and produce byte addresses within it (trace readers produce
//! the trace's own addresses; the shaping layer folds them onto the drive).

mod synthetic;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
pub use crate::host::request::{HostRequest, IoKind};

/// A stream of host requests.
pub trait Workload: Send {
    /// The next request, `Ok(None)` at the end of a finite workload.
    fn next_request(&mut self) -> Result<Option<HostRequest>>;
}

/// What a workload builder is told about the drive and the run.
#[derive(Debug, Clone, Copy)]
pub struct WorkloadContext {
    /// Logical capacity exported to the host, in bytes.
    pub logical_bytes: u64,
    /// Mapping unit in bytes: the natural alignment of generated requests.
    pub unit_bytes: u64,
    /// Seed of the workload's own random stream.
    pub seed: u64,
}

/// `[workload]` section of the configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadConfig {
    /// Generator or source: `uniform` (uniform random addresses).
    pub kind: String,
    /// Fraction of requests that are reads, 0..=1.
    pub read_ratio: f64,
    /// Fraction of the logical space the requests touch, (0, 1].
    pub working_set: f64,
    /// Request size in bytes; 0 means one mapping unit.
    pub request_size: u64,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig { kind: "uniform".into(), read_ratio: 0.0, working_set: 1.0, request_size: 0 }
    }
}

impl WorkloadConfig {
    /// True when request arrival times must be honoured (open-loop replay).
    pub fn open_loop(&self) -> bool {
        false
    }

    /// Check ranges; errors name the dotted key under `workload.`.
    pub fn validate(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.read_ratio) {
            return Err(Error::config("workload.read_ratio", self.read_ratio, "a fraction between 0 and 1"));
        }
        if !(self.working_set > 0.0 && self.working_set <= 1.0) {
            return Err(Error::config("workload.working_set", self.working_set, "a fraction in (0, 1]"));
        }
        match self.kind.as_str() {
            "uniform" => Ok(()),
            other => Err(Error::config("workload.kind", other, "one of: uniform")),
        }
    }
}

/// Build the workload a configuration describes.
pub fn build(cfg: &WorkloadConfig, ctx: &WorkloadContext) -> Result<Box<dyn Workload>> {
    cfg.validate()?;
    match cfg.kind.as_str() {
        "uniform" => Ok(Box::new(synthetic::UniformRandom::new(cfg, ctx)?)),
        other => Err(Error::config("workload.kind", other, "one of: uniform")),
    }
}
