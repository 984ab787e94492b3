//! FT-PASSD micro-benchmark workloads (Section V-B-1): write-only commands at a fixed
//! interval (one a second in the paper), sequential over the logical space; "sequential"
//! (16 MiB commands, the buffer stays full) or "partial" (1 MiB commands, the buffer drains
//! between commands). Requests carry arrival times: run them with `host.arrivals =
//! "timestamps"`.

use crate::error::{Error, Result};
use crate::workload::{HostRequest, IoKind, Workload};

/// Write commands of `size` bytes every `interval_ns`, at consecutive addresses, wrapping at
/// the end of the logical space.
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
        let r = HostRequest {
            arrival_ns: self.next_arrival,
            kind: IoKind::Write,
            offset: self.offset,
            size: self.size,
            stream: 0,
            budget_us: 0,
        };
        self.offset = (self.offset + self.size) % self.span;
        self.next_arrival += self.interval_ns;
        Ok(Some(r))
    }
}
