//! The memory a run will need, estimated from its configuration before anything is
//! allocated, and checked against `run.memory_limit`: a drive too large for the machine is
//! refused with a message instead of aborting the process (and the Python interpreter
//! around it) on a failed allocation.
//!
//! The estimate counts the structures that grow with the drive: the maps (4 bytes per logical
//! and per physical mapping unit), the integrity oracle's versions, the per-block tables of
//! the FTL, flash array and policies, the open-channel write buffer, the address folding of
//! `remap_first`, and the host queue. It is an upper bound of the dense state (measured at
//! 7.9 bytes per physical 4 KiB page on `bench-16g`, `docs/performance.md`), not of
//! allocator overheads, so the limit keeps a margin.

use crate::config::{Config, HotColdKind, Interface, MemoryLimit};
use crate::error::{Error, Result};
use crate::ftl::Layout;
use crate::workload::{Fold, WorkloadKind};

/// Generous bytes per block of every per-block table together (FTL valid/capacity/state/
/// sequence, flash array wear and write pointer, victim lists, technique tables).
const PER_BLOCK: u64 = 192;
/// What every run holds whatever its drive: histograms, time series rows, code, buffers.
const FIXED: u64 = 64 << 20;

/// The memory a run of `cfg` needs, in bytes (an upper estimate; see the module notes).
pub fn estimate(cfg: &Config) -> Result<u64> {
    let layout = if cfg.host.interface == Interface::OpenChannel {
        crate::host::open_channel::layout(cfg)?
    } else {
        Layout::of(cfg)?
    };
    let g = &cfg.geometry;
    let blocks = [g.channels, g.ways, g.dies, g.planes, g.blocks_per_plane]
        .iter()
        .try_fold(1u64, |acc, &x| acc.checked_mul(x as u64))
        .ok_or_else(|| overflow("geometry"))?;
    let logical = layout.logical_units as u64;
    let slots = layout.physical_units;
    let mut per_unit = 4 * logical + 4 * slots;
    if cfg.ftl.integrity_oracle {
        per_unit += 4 * logical + 4 * slots;
    }
    if cfg.reusable.enabled && cfg.reusable.hot_cold == HotColdKind::Recency {
        per_unit += 4 * logical;
    }
    if cfg.reliability.budget_placement {
        per_unit += logical; // a placement class per logical unit
    }
    if cfg.workload.kind == WorkloadKind::Trace && cfg.workload.trace.fold == Fold::RemapFirst {
        // A hash map entry (key, value, control byte, load factor) per folded unit at most.
        per_unit += 24 * logical;
    }
    let buffer =
        if cfg.host.interface == Interface::OpenChannel { cfg.open_channel.write_buffer_kib * 1024 } else { 0 };
    let queue = 16 * cfg.host.queue_depth as u64;
    Ok(FIXED + per_unit + PER_BLOCK * blocks + buffer + queue)
}

/// The limit `run.memory_limit` sets, in bytes: `auto` is the memory the machine has
/// available now, `off` none.
pub fn limit(cfg: &Config) -> Result<Option<u64>> {
    Ok(match cfg.run.memory_limit()? {
        MemoryLimit::Off => None,
        MemoryLimit::Auto => available_memory(),
        MemoryLimit::Bytes(b) => Some(b),
    })
}

/// Refuse a configuration whose estimate exceeds the limit, naming both.
pub fn check(cfg: &Config) -> Result<()> {
    let Some(limit) = limit(cfg)? else { return Ok(()) };
    let need = estimate(cfg)?;
    if need > limit {
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        let source = if cfg.run.memory_limit()? == MemoryLimit::Auto { "available on this machine" } else { "allowed" };
        return Err(Error::config(
            "run.memory_limit",
            &cfg.run.memory_limit,
            format!(
                "room for this drive: it needs about {:.2} GiB of simulator state, {:.2} GiB is {source} (shrink the geometry, turn off ftl.integrity_oracle, or raise run.memory_limit)",
                gib(need),
                gib(limit)
            ),
        ));
    }
    Ok(())
}

/// `MemAvailable` of `/proc/meminfo` (Linux); `None` elsewhere.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

fn overflow(key: &str) -> Error {
    Error::config(key, "", "sizes whose product fits in 64 bits")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ConfigBuilder;

    #[test]
    fn estimate_counts_the_maps() {
        // tiny: the maps are 8 bytes per unit, the oracle doubles them.
        let cfg = ConfigBuilder::new().preset("tiny").unwrap().build().unwrap();
        let lay = Layout::of(&cfg).unwrap();
        let base = estimate(&cfg).unwrap();
        assert!(base >= FIXED + 4 * (lay.logical_units as u64 + lay.physical_units));
        let with = ConfigBuilder::new().preset("tiny").unwrap().set("ftl.integrity_oracle=true").unwrap().build();
        let with = estimate(&with.unwrap()).unwrap();
        assert_eq!(with - base, 4 * (lay.logical_units as u64 + lay.physical_units));
    }

    #[test]
    fn the_machine_reports_available_memory() {
        if cfg!(target_os = "linux") {
            assert!(available_memory().is_some_and(|b| b > 1 << 20));
        }
    }
}
