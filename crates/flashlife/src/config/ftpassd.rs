//! `[ftpassd]`: the settings of FT-PASSD's device policies (`techniques::ftpassd`), chosen by
//! `open_channel.device_policy`.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// `[ftpassd]`. Left out of a written configuration at its default, so configurations that
/// predate it keep their text (and hash).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FtPassdConfig {
    /// How long, in us, the device must have had no host command before migration (with
    /// shift) starts. The device does not know when the next command comes; one that arrives
    /// during a copy waits for that copy to end. Default 2000 us: about one migration copy
    /// on the paper's flash (read 100 us + program 1,500 us + two 16 KiB transfers at
    /// 500 MB/s, 1.67 ms), rounded up. It is the rent-or-buy rule: wait as long as a wrong
    /// start can cost (a command may wait up to one copy), so that gaps shorter than a copy
    /// never start one and the delay migration can add to a command is no larger than the
    /// idle time spent waiting. 0 starts at once.
    pub idle_timeout_us: u64,
}

impl Default for FtPassdConfig {
    fn default() -> Self {
        FtPassdConfig { idle_timeout_us: 2000 }
    }
}

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

    /// The idle timeout in ns.
    pub fn idle_timeout_ns(&self) -> u64 {
        self.idle_timeout_us.saturating_mul(1000)
    }

    /// Check ranges; errors name the dotted key under `ftpassd.`.
    pub fn validate(&self) -> Result<()> {
        // An hour of simulated time: far beyond any idle gap, far below the clock's limit.
        if self.idle_timeout_us > 3_600_000_000 {
            return Err(Error::config(
                "ftpassd.idle_timeout_us",
                self.idle_timeout_us,
                "at most 3,600,000,000 (an hour)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, ConfigBuilder};

    /// The section is read from `--set` though the default configuration leaves it out, a
    /// misspelt key is refused, and `config.toml` carries it only when it is not the default.
    #[test]
    fn the_section_is_optional_and_checked() {
        let cfg = ConfigBuilder::new().set("ftpassd.idle_timeout_us=0").unwrap().build().unwrap();
        assert_eq!(cfg.ftpassd.idle_timeout_ns(), 0);
        assert!(cfg.to_toml().contains("[ftpassd]"));
        assert!(!Config::default().to_toml().contains("ftpassd]"));
        let bad = ConfigBuilder::new().set("ftpassd.idle_timeout=0").and_then(|b| b.build());
        assert!(bad.is_err());
        let big = ConfigBuilder::new().set("ftpassd.idle_timeout_us=3600000001").unwrap().build();
        assert!(big.err().unwrap().to_string().contains("ftpassd.idle_timeout_us"));
    }
}
