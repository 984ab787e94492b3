//! Host side: requests and the host interface (block device or open-channel device).

pub mod request;
