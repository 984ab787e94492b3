//! Statistics: counters, latency histograms, time series, wear histograms and the summary.

pub mod counters;
pub mod latency;
pub mod provenance;
pub mod reliability;
pub mod sampling;
pub mod summary;
pub mod timeseries;

pub use counters::{ByCause, Cause, FlashCounters};
