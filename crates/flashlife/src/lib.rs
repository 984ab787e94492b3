//! flashlife: a fast, physics-aware, trace-driven SSD simulator.
//!
//! Data flows one way: workload -> host interface -> FTL (decides) -> flash transactions ->
//! timing (schedules) -> flash model -> stats.
//! See `docs/architecture.md`.

#[macro_use]
mod choice;

mod cache_hint;
pub mod checkpoint;
pub mod config;
pub mod device;
pub mod error;
pub mod flash;
pub mod ftl;
pub mod host;
mod lru;
pub mod run_dir;
pub mod seeds;
pub mod sim;
pub mod stats;
pub mod techniques;
pub mod timing;
pub mod workload;

pub use config::{Config, ConfigBuilder};
pub use error::{Error, Result};
pub use run_dir::{resume_dir, run_to_dir};
pub use sim::{RunOutput, Simulator};
