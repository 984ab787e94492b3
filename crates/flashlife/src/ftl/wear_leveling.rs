//! Wear leveling policies.

/// What the FTL tells a wear-leveling policy about a pool.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct PoolWear {
    /// Mean erase count of the pool's live blocks.
    pub mean_erases: f64,
}

/// A wear-leveling policy: filters GC victims and asks for cold blocks to be moved.
#[typetag::serde]
pub trait WearLeveling: Send {
    /// May a block with `erases` erases be a GC victim in a pool with `pool` wear?
    fn accept_victim(&self, erases: u32, pool: PoolWear) -> bool;
    /// Should the pool's least-erased full block, with `min_erases`, be moved now so its
    /// (cold) data stops pinning a young block?
    fn migrate_cold(&self, min_erases: u32, pool: PoolWear) -> bool;
    /// How many erases in a pool between two cold-block checks (0: never check).
    fn check_interval(&self) -> u32;
    /// Static levelling by remaining life (`wear_leveling.measure = "remaining_life"`,
    /// `ftl/wear_level.rs`): should the full block with the most cycles left, `most`, be
    /// moved when the pool's most worn levelled block has `least` left? `None`: the policy
    /// levels erase counts ([`WearLeveling::migrate_cold`]).
    fn migrate_young(&self, _most: f64, _least: f64) -> Option<bool> {
        None
    }
}

/// No wear leveling: any victim, no cold-data moves.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct NoWearLeveling;

#[typetag::serde]
impl WearLeveling for NoWearLeveling {
    fn accept_victim(&self, _erases: u32, _pool: PoolWear) -> bool {
        true
    }
    fn migrate_cold(&self, _min: u32, _pool: PoolWear) -> bool {
        false
    }
    fn check_interval(&self) -> u32 {
        0
    }
}

/// Threshold wear leveling: skip victims more than `threshold` erases above the pool mean
/// (dynamic), and move a full block more than `threshold` below it (static).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ThresholdWearLeveling {
    pub threshold: u32,
}

#[typetag::serde]
impl WearLeveling for ThresholdWearLeveling {
    #[inline]
    fn accept_victim(&self, erases: u32, pool: PoolWear) -> bool {
        (erases as f64) <= pool.mean_erases + self.threshold as f64
    }
    fn migrate_cold(&self, min_erases: u32, pool: PoolWear) -> bool {
        (min_erases as f64) + (self.threshold as f64) < pool.mean_erases
    }
    fn check_interval(&self) -> u32 {
        (self.threshold / 2).max(4)
    }
}
