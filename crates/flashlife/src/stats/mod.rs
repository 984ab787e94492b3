//! Statistics: counters, latency histograms, time series, wear histograms, and the plain
//! sections of the summary (`summary.json` itself is assembled by `sim::summary`).

pub mod counters;
pub mod latency;
pub mod provenance;
pub mod reliability;
pub mod sampling;
pub mod timeseries;

pub use counters::{ByCause, Cause, FlashCounters};
