//! The flash model's parts made from their configuration sections. The flash layer sits
//! below the configuration and takes plain values (`Geometry`'s fields,
//! `FlashArray::from_parts`, `ArrayTimes::from_modes`); these constructors read them from
//! `[geometry]` and `[flash]`.

use super::{FlashConfig, GeometryConfig};
use crate::flash::failure::FailureModel;
use crate::flash::wear::WearModel;
use crate::flash::{ArrayTimes, BitMode, FlashArray, Geometry};

impl Geometry {
    /// The geometry `[geometry]` describes.
    pub fn new(c: &GeometryConfig) -> Self {
        Geometry {
            channels: c.channels,
            ways: c.ways,
            dies_per_chip: c.dies,
            planes_per_die: c.planes,
            blocks_per_plane: c.blocks_per_plane,
            pages_per_block: c.pages_per_block,
        }
    }
}

impl ArrayTimes {
    /// The operation times a flash configuration gives.
    pub fn new(cfg: &FlashConfig) -> Self {
        ArrayTimes::from_modes(BitMode::ALL.map(|m| cfg.mode(m)))
    }
}

impl FlashArray {
    /// A pristine array over `geo`: every block erased, at the configured mode.
    pub fn new(
        geo: Geometry,
        cfg: &FlashConfig,
        wear: Box<dyn WearModel>,
        failures: Option<Box<dyn FailureModel>>,
    ) -> Self {
        let page_bytes = BitMode::ALL.map(|m| cfg.page_bytes(m));
        FlashArray::from_parts(geo, cfg.bit_mode, page_bytes, ArrayTimes::new(cfg), wear, failures)
    }
}
