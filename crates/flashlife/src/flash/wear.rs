//! Wear models: when is a block worn out at its bit mode?

use super::mode::BitMode;
use super::oxide::OxideWear;

/// Decides wear-out from a block's program/erase cycles. Implementations keep any per-block
/// state they need (variation, trapped charge); cycles are counted by the flash array and
/// carry over across bit-mode changes, as the trapped charge belongs to the cells.
#[typetag::serde]
pub trait WearModel: Send {
    /// True when `block`, after `cycles` erases, can no longer hold data at `mode`.
    fn is_worn_out(&self, block: u32, cycles: u32, mode: BitMode) -> bool;
    /// Cycles `block` can still take at `mode` (0 when worn out).
    fn remaining_cycles(&self, block: u32, cycles: u32, mode: BitMode) -> f64;
    /// Rated cycles of a fresh block at `mode`, for progress and normalisation.
    fn rated_cycles(&self, mode: BitMode) -> f64;
}

/// A fixed P/E limit per bit mode, the same for every block.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FixedPeLimit {
    limits: [u32; 4],
}

impl FixedPeLimit {
    pub fn new(limits: [u32; 4]) -> Self {
        FixedPeLimit { limits }
    }
}

#[typetag::serde]
impl WearModel for FixedPeLimit {
    #[inline]
    fn is_worn_out(&self, _block: u32, cycles: u32, mode: BitMode) -> bool {
        cycles >= self.limits[mode.index()]
    }

    fn remaining_cycles(&self, _block: u32, cycles: u32, mode: BitMode) -> f64 {
        self.limits[mode.index()].saturating_sub(cycles) as f64
    }

    fn rated_cycles(&self, mode: BitMode) -> f64 {
        self.limits[mode.index()] as f64
    }
}

/// The oxide-stress model (ZombieNAND's Algorithm 1) as a wear model. The cycle count comes
/// from the flash array (it carries over across a bit-mode change, as the trapped charge
/// belongs to the cells); the per-block, per-mode death limits come from [`OxideWear`].
#[typetag::serde]
impl WearModel for OxideWear {
    #[inline]
    fn is_worn_out(&self, block: u32, cycles: u32, mode: BitMode) -> bool {
        cycles > self.death_limit(block as usize, mode.bits() as u8)
    }

    fn remaining_cycles(&self, block: u32, cycles: u32, mode: BitMode) -> f64 {
        self.death_limit(block as usize, mode.bits() as u8).saturating_sub(cycles) as f64
    }

    fn rated_cycles(&self, mode: BitMode) -> f64 {
        self.params().endurance.for_bits(mode.bits() as u8).unwrap_or(1) as f64
    }
}
