//! Periodic write commands (`workload.kind = "periodic"`): the FT-PASSD micro-benchmarks'
//! workload (Lee et al. 2020, section V-B-1): write-only commands of a fixed size at a fixed
//! interval (one a second in the paper), at consecutive addresses over the logical space,
//! wrapping at its end. "Sequential" (16 MiB commands, the buffer stays full) and "partial"
//! (1 MiB commands, the buffer drains between commands) are two sizes of it. Requests carry
//! their arrival times: the run honours them (open loop).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::workload::{HostRequest, IoKind, Workload};

/// `[workload.periodic]`: the timing of `kind = "periodic"` (the size is
/// `workload.request_size`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PeriodicConfig {
    /// Time between the arrivals of two commands, ns (> 0); the first arrives at 0.
    pub interval_ns: u64,
}

impl Default for PeriodicConfig {
    fn default() -> Self {
        PeriodicConfig { interval_ns: 1_000_000_000 }
    }
}

impl PeriodicConfig {
    /// True for the defaults (the section is then left out of a resolved configuration, so
    /// configurations that do not use it keep their text and hash).
    pub fn is_default(&self) -> bool {
        *self == PeriodicConfig::default()
    }
}

/// Write commands of `size` bytes every `interval_ns`, at consecutive addresses, wrapping at
/// the end of the logical space (the last partial command's room is left out).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct PeriodicWrites {
    size: u64,
    interval_ns: u64,
    span: u64,
    offset: u64,
    next_arrival: u64,
}

impl PeriodicWrites {
    /// Commands of `size` bytes over a logical space of `logical_bytes`.
    pub fn new(size: u64, interval_ns: u64, logical_bytes: u64) -> Result<Self> {
        if size == 0 || size > logical_bytes {
            return Err(Error::config("workload.request_size", size, "between 1 byte and the logical capacity"));
        }
        Ok(PeriodicWrites { size, interval_ns, span: logical_bytes / size * size, offset: 0, next_arrival: 0 })
    }
}

impl Workload for PeriodicWrites {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        if self.next_arrival > super::MAX_ARRIVAL_NS {
            return Err(Error::Run(format!(
                "workload.periodic.interval_ns = {}: the next command would arrive after {} ns, past the \
                 latest arrival time flashlife simulates (2^62 ns); stop the run earlier (run.until)",
                self.interval_ns,
                super::MAX_ARRIVAL_NS
            )));
        }
        let r = HostRequest {
            arrival_ns: self.next_arrival,
            kind: IoKind::Write,
            offset: self.offset,
            size: self.size,
            stream: 0,
            budget_us: 0,
        };
        self.offset = (self.offset + self.size) % self.span;
        self.next_arrival = self.next_arrival.saturating_add(self.interval_ns);
        Ok(Some(r))
    }
}
