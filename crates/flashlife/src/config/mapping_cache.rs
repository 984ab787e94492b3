//! `[mapping_cache]`: a demand-based (DFTL-like) cached mapping table in the block FTL
//! (`ftl::mapping_cache`): the map lives on flash in translation pages, DRAM caches entries.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// `[mapping_cache]`. Off (`size_bytes = 0`: the whole map in DRAM, as without it) by
/// default, and then left out of a written configuration, so configurations that predate it
/// keep their text (and hash).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MappingCacheConfig {
    /// DRAM given to cached map entries, bytes; 0 = no cached mapping table (the whole map
    /// in DRAM). Holds `size_bytes / entry_bytes` entries.
    pub size_bytes: u64,
    /// Bytes per map entry, in DRAM and in a translation page (a translation page of one
    /// mapping unit holds `mapping unit / entry_bytes` entries). DFTL's example: 4.
    pub entry_bytes: u64,
}

impl Default for MappingCacheConfig {
    fn default() -> Self {
        MappingCacheConfig { size_bytes: 0, entry_bytes: 4 }
    }
}

impl MappingCacheConfig {
    pub fn is_default(&self) -> bool {
        *self == MappingCacheConfig::default()
    }

    /// Is the map cached (and held on flash)?
    pub fn enabled(&self) -> bool {
        self.size_bytes > 0
    }

    /// Check what needs no drive.
    pub fn validate(&self) -> Result<()> {
        if !self.enabled() && !self.is_default() {
            return Err(Error::config(
                "mapping_cache.size_bytes",
                0,
                "a size > 0 bytes when mapping_cache.entry_bytes is set",
            ));
        }
        if !(1..=64).contains(&self.entry_bytes) {
            return Err(Error::config("mapping_cache.entry_bytes", self.entry_bytes, "1 to 64 bytes"));
        }
        Ok(())
    }

    /// (entries the cache holds, entries per translation page) for a drive of `unit_bytes`
    /// mapping units.
    pub fn entries(&self, unit_bytes: u64) -> Result<(u32, u32)> {
        if !unit_bytes.is_multiple_of(self.entry_bytes) {
            return Err(Error::config(
                "mapping_cache.entry_bytes",
                self.entry_bytes,
                format!("a divisor of the {unit_bytes}-byte mapping unit (a translation page is one unit)"),
            ));
        }
        let n = self.size_bytes / self.entry_bytes;
        if n < 1 {
            return Err(Error::config("mapping_cache.size_bytes", self.size_bytes, "room for at least one entry"));
        }
        let n = u32::try_from(n.min(u32::MAX as u64 - 1)).unwrap_or(u32::MAX - 1);
        Ok((n, (unit_bytes / self.entry_bytes) as u32))
    }
}
