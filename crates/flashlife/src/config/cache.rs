//! `[cache]`: a write-back DRAM data cache in front of the drive's FTL (`host::cache`).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// `[cache]`. Off (`size_bytes = 0`) by default, and then left out of a written
/// configuration, so configurations that predate it keep their text (and hash).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    /// DRAM given to cached data, bytes; 0 = no cache. A whole number of lines.
    pub size_bytes: u64,
    /// Bytes per cache line (the unit of LRU replacement); 0 = one mapping unit. A multiple of
    /// the mapping unit, at most 64 of them.
    pub line_bytes: u64,
    /// Time to move a request's data between the controller and its DRAM, ns: a read hit
    /// is served after it, a write is in the cache after it. A modelling parameter, not a
    /// calibration: set it to the controller being modelled.
    pub dram_latency_ns: u64,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig { size_bytes: 0, line_bytes: 0, dram_latency_ns: 1000 }
    }
}

impl CacheConfig {
    pub fn is_default(&self) -> bool {
        *self == CacheConfig::default()
    }

    /// Is there a cache?
    pub fn enabled(&self) -> bool {
        self.size_bytes > 0
    }

    /// Check what needs no drive; the line against the mapping unit is checked with the
    /// drive's layout ([`CacheConfig::lines`]).
    pub fn validate(&self) -> Result<()> {
        if !self.enabled() && !self.is_default() {
            let set = if self.line_bytes != 0 { "cache.line_bytes" } else { "cache.dram_latency_ns" };
            return Err(Error::config("cache.size_bytes", 0, format!("a size > 0 bytes when {set} is set")));
        }
        if self.dram_latency_ns > 1_000_000_000 {
            return Err(Error::config("cache.dram_latency_ns", self.dram_latency_ns, "at most 1 s (1e9 ns)"));
        }
        Ok(())
    }

    /// (lines, units per line) for a drive of `unit_bytes` mapping units.
    pub fn lines(&self, unit_bytes: u64) -> Result<(u32, u32)> {
        let line = if self.line_bytes == 0 { unit_bytes } else { self.line_bytes };
        if !line.is_multiple_of(unit_bytes) || line / unit_bytes > 64 {
            return Err(Error::config(
                "cache.line_bytes",
                self.line_bytes,
                format!("0 or a multiple of the {unit_bytes}-byte mapping unit, at most 64 of them"),
            ));
        }
        if !self.size_bytes.is_multiple_of(line) || self.size_bytes / line < 2 {
            return Err(Error::config(
                "cache.size_bytes",
                self.size_bytes,
                format!("a whole number of {line}-byte lines, at least 2"),
            ));
        }
        let lines = u32::try_from(self.size_bytes / line)
            .map_err(|_| Error::config("cache.size_bytes", self.size_bytes, "at most 2^32 - 1 lines"))?;
        Ok((lines, (line / unit_bytes) as u32))
    }
}
