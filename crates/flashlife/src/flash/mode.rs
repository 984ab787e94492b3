//! Bit modes (bits per cell) and their per-mode parameters.

use serde::{Deserialize, Serialize};

/// Bits stored per cell. A block's mode may drop over its life (ZombieNAND); its cells and
/// pages per block stay, the bytes a page holds scale with the bits per cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BitMode {
    Slc = 1,
    Mlc = 2,
    Tlc = 3,
    Qlc = 4,
}

impl BitMode {
    /// All modes, fewest bits first.
    pub const ALL: [BitMode; 4] = [BitMode::Slc, BitMode::Mlc, BitMode::Tlc, BitMode::Qlc];

    /// Bits per cell.
    #[inline]
    pub fn bits(self) -> u32 {
        self as u32
    }

    /// The mode with `bits` bits per cell.
    pub fn from_bits(bits: u32) -> Option<BitMode> {
        match bits {
            1 => Some(BitMode::Slc),
            2 => Some(BitMode::Mlc),
            3 => Some(BitMode::Tlc),
            4 => Some(BitMode::Qlc),
            _ => None,
        }
    }

    /// Index into per-mode tables (0 for SLC).
    #[inline]
    pub fn index(self) -> usize {
        self as usize - 1
    }

    /// Lower-case name, as in configuration files.
    pub fn name(self) -> &'static str {
        match self {
            BitMode::Slc => "slc",
            BitMode::Mlc => "mlc",
            BitMode::Tlc => "tlc",
            BitMode::Qlc => "qlc",
        }
    }

    /// One bit fewer per cell, `None` for SLC.
    pub fn lower(self) -> Option<BitMode> {
        BitMode::from_bits(self.bits() - 1)
    }
}

/// Latencies and endurance of one bit mode (`[flash.slc]`, `[flash.mlc]`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModeParams {
    /// Page read (array sensing) time in microseconds.
    pub read_us: f64,
    /// Page program time in microseconds.
    pub program_us: f64,
    /// Block erase time in microseconds.
    pub erase_us: f64,
    /// Program/erase cycles a block endures at this mode (fixed P/E-limit wear model).
    pub pe_limit: u32,
    /// Optional read times by page type (LSB, CSB, MSB, ...), one per bit; page `p` has type
    /// `p % bits`. Empty: every page reads in `read_us`.
    pub read_us_by_page_type: Vec<f64>,
    /// Optional program times by page type, as `read_us_by_page_type`.
    pub program_us_by_page_type: Vec<f64>,
    /// Bytes a page holds at this mode; 0 (the default) scales `flash.page_size` by bits per
    /// cell. ZombieNAND's Table I uses SLC 2048, MLC 4096, TLC 8192 (from three datasheets).
    pub page_size: u64,
}

impl ModeParams {
    /// Defaults for a mode: ZombieNAND's Table I latencies and typical endurance.
    pub fn default_for(mode: BitMode) -> ModeParams {
        let (read_us, program_us, erase_us, pe_limit) = match mode {
            BitMode::Slc => (25.0, 200.0, 1500.0, 75_000),
            BitMode::Mlc => (50.0, 500.0, 1500.0, 6_000),
            BitMode::Tlc => (150.0, 1000.0, 3000.0, 1_000),
            BitMode::Qlc => (250.0, 2500.0, 5000.0, 300),
        };
        ModeParams {
            read_us,
            program_us,
            erase_us,
            pe_limit,
            read_us_by_page_type: Vec::new(),
            program_us_by_page_type: Vec::new(),
            page_size: 0,
        }
    }
}

impl Default for ModeParams {
    fn default() -> Self {
        ModeParams::default_for(BitMode::Tlc)
    }
}
