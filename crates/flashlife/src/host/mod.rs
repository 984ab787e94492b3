//! Host side: requests and the host interface (block device or open-channel device).

pub mod cache;
pub mod interface;
pub mod open_channel;
pub mod request;

pub use interface::Drive;
