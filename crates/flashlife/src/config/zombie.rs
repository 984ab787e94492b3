//! `[zombie]`: the settings of the ZombieNAND technique (`techniques::zombie`).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// `[zombie]`: ZombieNAND's early-switch pool and wear-unleveling GC (`gc.victim = "zombie"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZombieConfig {
    /// Keep an early-switch pool in each element (pool), sized by the paper's Equation 1.
    /// `false` (the default) leaves the usage-table GC with its life-based skip rule and no
    /// pool, the paper's baseline wear leveling (Section III-A). Off by default because in
    /// our model, against the levelled baseline, the pool's early capacity loss costs
    /// lifetime at most points of the CI grid (down to 0.91x), against the paper's "never
    /// below the baseline", and never beats the drive without it
    /// (docs/techniques/zombienand.md, "The early-switch pool").
    pub early_switch: bool,
    /// LIFE_THRESHOLD of Algorithm 3: a normal block whose remaining life is below this times
    /// the average remaining life of the pool's normal blocks is not chosen for cleaning.
    /// The paper gives no value; 0.8 is `SSD_LIFETIME_THRESHOLD_X` of the DiskSim SSD
    /// extension (Agrawal et al., USENIX ATC'08) on which the paper's simulator was built.
    pub life_threshold: f64,
    /// With bit drops (`flash.end_of_life = "drop_bit"`): GC's victim choice and static wear
    /// leveling pass over a block whose next erase would be a bit drop (or, from SLC, a
    /// retirement) costing more capacity than the drive has to spare beyond its logical
    /// space and GC's reserve, while another block can be taken; when none can, the drop
    /// happens and the drive dies as before. The paper is silent on it; without it a drive
    /// whose TLC blocks all sit at their TLC end dies at the first such erase, however much
    /// life its SLC zombies have left (docs/techniques/zombienand.md, "Drops the capacity can
    /// afford"). No effect on a drive that retires worn blocks (the levelled baseline).
    /// Written to TOML only when off (configurations from before the key hash alike).
    #[serde(skip_serializing_if = "is_true")]
    pub affordable_drops: bool,
}

fn is_true(v: &bool) -> bool {
    *v
}

impl Default for ZombieConfig {
    fn default() -> Self {
        ZombieConfig { early_switch: false, life_threshold: 0.8, affordable_drops: true }
    }
}

impl ZombieConfig {
    /// The name `gc.victim` takes for ZombieNAND's usage-table victim policy (Algorithms 2
    /// and 3, `techniques::zombie::ZombieVictim`), which the paper's baseline drives use too.
    pub const VICTIM: &'static str = "zombie";

    /// Check ranges; errors name the dotted key under `zombie.`.
    pub fn validate(&self) -> Result<()> {
        if !(self.life_threshold.is_finite() && (0.0..=1.0).contains(&self.life_threshold)) {
            return Err(Error::config("zombie.life_threshold", self.life_threshold, "a fraction between 0 and 1"));
        }
        Ok(())
    }
}
