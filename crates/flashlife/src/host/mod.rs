//! Host side: the host interface (block device or open-channel device) and what sits in front
//! of it (the DRAM data cache). Requests come from the workload (`workload::request`).

pub mod cache;
pub mod interface;
pub mod open_channel;
pub mod write_buffer;

pub use interface::Drive;
