//! Host requests as the workload produces them and the host interface consumes them.

/// Direction of a host request. Two bytes wide so that a [`HostRequest`] has no padding: a
/// request is then copied as two whole 16-byte halves, where a padding byte had the compiler
/// copy it in overlapping pieces that defeat store-to-load forwarding (a stall on every
/// request the run loop takes from its look-ahead queue).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(u16)]
pub enum IoKind {
    Read,
    Write,
    /// Deallocate (TRIM / discard / NVMe deallocate): the units' data is no longer wanted;
    /// they read as unmapped (zeroes) until written again.
    Trim,
}

/// One block-device request from the host. Addresses are in bytes of the logical space the
/// workload sees; the host interface folds them onto the drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HostRequest {
    /// Arrival time in nanoseconds from the start of the workload. Used by open-loop replay;
    /// closed-loop replay ignores it.
    pub arrival_ns: u64,
    pub kind: IoKind,
    /// Byte offset of the first byte.
    pub offset: u64,
    /// Length in bytes (at least 1).
    pub size: u64,
    /// Stream / namespace tag (hint commands, hot/cold separation); 0 when unknown.
    pub stream: u16,
    /// Latency budget the host attached to this read, in microseconds (a per-request hint,
    /// e.g. the flashlife CSV trace's `budget_us` column); 0 = none. The `hinted` read
    /// reclaim policy uses it ahead of the configured hint commands.
    pub budget_us: u32,
}

// The request is copied through every workload adapter: the budget fits in the padding, and
// the kind fills the rest.
const _: () = assert!(std::mem::size_of::<HostRequest>() == 32);
