//! flashlife: a fast, physics-aware, trace-driven SSD simulator.
//!
//! Data flows one way: workload -> host interface -> write buffer -> FTL -> flash model ->
//! engine -> stats. See `docs/architecture.md`.

pub mod error;
pub mod flash;
pub mod host;
pub mod workload;

pub use error::{Error, Result};
