//! `[ftpassd]`: the settings of FT-PASSD's device policies (`techniques::ftpassd`), chosen by
//! `open_channel.device_policy`.

use serde::{Deserialize, Serialize};

/// `[ftpassd]`. Left out of a written configuration at its default, so configurations that
/// predate it keep their text (and hash).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FtPassdConfig {}

impl FtPassdConfig {
    /// `open_channel.device_policy` for FT-PASSD without shift (a block map; a failed
    /// program copies the block to a reserved one in the foreground, then retries).
    pub const NO_SHIFT: &'static str = "ft_passd_no_shift";
    /// `open_channel.device_policy` for FT-PASSD with shift (the proposal: retry at once on a
    /// reserved block, migrate in idle time, a shift table records the offset).
    pub const SHIFT: &'static str = "ft_passd";
    /// The device policies FT-PASSD provides, in the order `open_channel.device_policy` lists them.
    pub const POLICIES: &'static [&'static str] = &[Self::NO_SHIFT, Self::SHIFT];

    pub fn is_default(&self) -> bool {
        *self == FtPassdConfig::default()
    }
}
