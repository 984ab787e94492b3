//! FT-PASSD micro-benchmark workloads (Section V-B-1). The generator is the workload kind
//! `periodic` ([`crate::workload::periodic`]); this path keeps older code compiling.

pub use crate::workload::periodic::PeriodicWrites;
