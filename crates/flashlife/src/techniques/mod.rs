//! Self-contained building blocks of the published techniques (design section 3), kept free of
//! FTL state so that they can be tested exhaustively on their own and wired in by the FTL;
//! and the techniques' FTL policies (`reusable`), which drive the FTL through its hooks.

pub mod bpht;
pub mod ftpassd;
pub mod ftpassd_bench;
pub mod hot_cold;
pub mod readrelax;
pub mod reusable;
pub mod wom;
pub mod zombie;

use crate::config::{Config, EndOfLife, PairLayout, VictimKind};
use crate::error::Result;
use crate::flash::{BitMode, FlashArray};
use crate::ftl::{Ftl, Layout, Plugins};
use crate::seeds::stream_seed;

/// The registry's first half: the policies the configured techniques put into the block FTL
/// in place of the baseline's, before it is built (ZombieNAND's wear-unleveling victim choice
/// and bit drop).
pub fn ftl_plugins(cfg: &Config, flash: &FlashArray) -> Result<Plugins> {
    let mut plugins = Plugins::default();
    if cfg.gc.victim == VictimKind::Zombie {
        let unit = Layout::of(cfg)?.unit_bytes;
        let units_by_mode = BitMode::ALL.map(|m| (flash.page_bytes(m) / unit) as u32 * flash.geo.pages_per_block);
        plugins.victim = Some(Box::new(zombie::ZombieVictim::new(cfg, flash, units_by_mode)));
    }
    if cfg.flash.end_of_life == EndOfLife::DropBit {
        plugins.end_of_life = Some(Box::new(zombie::DropBit));
    }
    Ok(plugins)
}

/// The registry's second half: the techniques that hook into a built FTL (Reusable SSD's
/// second writes, which size themselves from the FTL's layout).
pub fn install(cfg: &Config, ftl: &mut Ftl) -> Result<()> {
    if cfg.reusable.enabled {
        let technique = reusable::ReusableSsd::new(cfg, ftl, stream_seed(cfg.seed, "wom"))?;
        ftl.set_second_writes(Box::new(technique), cfg.reusable.layout == PairLayout::Sequential);
    }
    Ok(())
}
