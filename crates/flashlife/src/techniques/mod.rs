//! Self-contained building blocks of the published techniques (design section 3), kept free of
//! FTL state so that they can be tested exhaustively on their own and wired in by the FTL;
//! the techniques' FTL policies (`reusable`), which drive the FTL through its hooks, and
//! device policies (`ftpassd`), which drive an open-channel device through its capabilities;
//! and the registry that builds whichever the configuration names.

pub mod bpht;
pub mod ftpassd;
pub mod ftpassd_bench;
pub mod hot_cold;
pub mod readrelax;
pub mod reusable;
pub mod salvage;
pub mod wom;
pub mod zombie;

use std::collections::BTreeMap;

use crate::config::{
    Config, EndOfLife, FtPassdConfig, OnProgramFailure, PairLayout, PolicyName, VictimName, ZombieConfig,
};
use crate::device::policy::{self, FailurePolicy};
use crate::error::Result;
use crate::flash::{BitMode, FlashArray, Geometry};
use crate::ftl::{Ftl, Layout, Plugins};
use crate::seeds::stream_seed;

/// The registry's first part: the policies the configured techniques put into the block FTL
/// in place of the baseline's, before it is built (ZombieNAND's wear-unleveling victim choice
/// and bit drop, salvage's bad-page skipping).
pub fn ftl_plugins(cfg: &Config, flash: &FlashArray) -> Result<Plugins> {
    let mut plugins = Plugins::default();
    if cfg.gc.victim == VictimName::Technique(ZombieConfig::VICTIM) {
        let unit = Layout::of(cfg)?.unit_bytes;
        let units_by_mode = BitMode::ALL.map(|m| (flash.page_bytes(m) / unit) as u32 * flash.geo.pages_per_block);
        plugins.victim = Some(Box::new(zombie::ZombieVictim::new(cfg, flash, units_by_mode)));
    }
    if cfg.flash.end_of_life == EndOfLife::DropBit {
        plugins.end_of_life = Some(Box::new(zombie::DropBit));
    }
    if cfg.failures.on_program_failure == OnProgramFailure::SkipPage {
        plugins.bad_blocks = Some(Box::new(salvage::SkipBadPages::new(flash.geo.blocks(), flash.geo.pages_per_block)));
    }
    Ok(plugins)
}

/// The registry's third part: each configured technique's section of `summary.json`
/// (`techniques.<name>`), from the drive's state at the end of the run.
pub fn summaries(cfg: &Config, ftl: Option<&Ftl>) -> BTreeMap<&'static str, serde_json::Value> {
    let mut out = BTreeMap::new();
    let Some(ftl) = ftl else { return out };
    let mut add = |name: &'static str, section: serde_json::Result<serde_json::Value>| {
        out.insert(name, section.expect("a summary section serialises"));
    };
    if let Some(c) = ftl.second_write_counters() {
        add("reusable", serde_json::to_value(c));
    }
    if cfg.failures.on_program_failure == OnProgramFailure::SkipPage {
        let policy = ftl.bad_block_policy().as_any().downcast_ref::<salvage::SkipBadPages>();
        let policy = policy.expect("the registry puts salvage's policy in with skip_page");
        add("salvage", serde_json::to_value(salvage::SalvageSummary::of(&ftl.bad_block_stats(), policy)));
    }
    out
}

/// The registry's second part: the techniques that hook into a built FTL (Reusable SSD's
/// second writes, which size themselves from the FTL's layout).
pub fn install(cfg: &Config, ftl: &mut Ftl) -> Result<()> {
    if cfg.reusable.enabled {
        let technique = reusable::ReusableSsd::new(cfg, ftl, stream_seed(cfg.seed, "wom"))?;
        ftl.set_second_writes(Box::new(technique), cfg.reusable.layout == PairLayout::Sequential);
    }
    Ok(())
}

/// The registry's fourth part: the open-channel device's failure policy that
/// `open_channel.device_policy` names (the baseline's is the device's own); `home[lbn]` is each
/// logical block's initial physical block.
pub fn device_policy(cfg: &Config, home: Vec<u32>, geo: Geometry) -> Box<dyn FailurePolicy> {
    match cfg.open_channel.device_policy {
        PolicyName::Baseline(kind) => policy::baseline(kind, home),
        PolicyName::Technique(name) if FtPassdConfig::POLICIES.contains(&name) => {
            ftpassd::policy::build(name, &cfg.ftpassd, home, geo)
        }
        PolicyName::Technique(name) => {
            unreachable!("open_channel.device_policy = {name:?}: no technique registered it")
        }
    }
}
