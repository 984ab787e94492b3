//! `[reliability]`: error-aware reads (bit errors, ECC, read retry), read reclaim and read
//! latency hints. See `docs/techniques/read-relaxation.md` and `docs/models/bit-errors.md`.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::flash::rber::{EccParams, PowerLawParams, ReadRetryParams};

use super::{HintLatency, RberSet, ReadReclaim, ReclaimWhen, ReliabilityModel};

/// `[reliability]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReliabilityConfig {
    /// Bit-error model of page reads: `none` (every read decodes at once; the baseline) or
    /// `power_law` (RBER from wear, retention and read disturb; ECC; read retry).
    pub model: ReliabilityModel,
    /// RBER coefficients for `power_law`: `tlc-3d` (ours, calibrated to anchor points),
    /// `tlc-3d-relaxation` (`tlc-3d` with its read disturb fitted to the read-relaxation
    /// paper's characterisation),
    /// `mlc-2d` (published 2y-nm MLC fit) or `custom` (`reliability.power_law`).
    pub rber_set: RberSet,
    /// Coefficients used when `rber_set = "custom"` (defaults: the `mlc-2d` set).
    pub power_law: PowerLawParams,
    /// Error-correcting code: data and parity bits per codeword and correctable bits (t).
    pub ecc: EccParams,
    /// Read retry: retry-table entries, RBER reduction per entry, per-step success threshold.
    pub read_retry: ReadRetryParams,
    /// Sigma of the lognormal per-page RBER factor (median 1), derived from a hash of the
    /// page's address (no per-page state); clamped at 4 sigma, which bounds the worst page.
    pub page_sigma: f64,
    /// P/E cycles added to every block's erase count in the RBER model: starts the study on
    /// an aged drive without simulating the writes that aged it.
    pub base_cycles: u32,
    /// Read reclaim policy: `none`, `read_count` (reclaim at `read_count_threshold` reads since
    /// erase), `error_based` (reclaim before any read of the block needs a retry), `hinted`
    /// (postpone reclaim while the predicted read latency fits the hint budget of the data read)
    /// or `retry_only` (reclaim only as a last resort, before the worst page would be
    /// uncorrectable).
    pub read_reclaim: ReadReclaim,
    /// Reads since erase at which `read_count` reclaims a block.
    pub read_count_threshold: u32,
    /// `error_based` and `hinted` reclaim when the predicted worst-page RBER reaches this
    /// fraction of the limit they keep (no retry; the hint's retries; the last retry step).
    pub reclaim_margin: f64,
    /// When a reclaim is done: `immediate` (after the triggering read) or `idle` (postponed to
    /// an idle window of the block's die, with a deadline before the limit).
    #[serde(skip_serializing_if = "ReclaimWhen::is_immediate")]
    pub reclaim_when: ReclaimWhen,
    /// What a budget is compared with: `request` (the request's predicted latency: pages x
    /// attempts x attempt time + the die's queue + the host transfer) or `page` (one page's
    /// flash attempts).
    #[serde(skip_serializing_if = "HintLatency::is_request")]
    pub hint_latency: HintLatency,
    /// Read latency budget in microseconds for reads no hint covers; 0 allows no retry.
    pub default_budget_us: f64,
    /// Hint commands: read latency budgets by LBA range and/or stream (namespace).
    pub hints: Vec<ReadHint>,
    /// Host read latency above which a read counts as long (the paper's 400 us).
    pub long_read_us: f64,
    /// More read latency thresholds (whole microseconds) whose share of host reads the summary
    /// reports (`reliability.reads_over_us`), so one run answers "how many reads exceeded each
    /// budget" for a sweep of budgets. Written to TOML only when set.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub read_thresholds_us: Vec<u32>,
    /// Place relocated data by budget class (`hinted` reclaim only): GC and reclaim moves
    /// write data whose last host read allowed a retry into a write stream of its own in each
    /// pool, apart from strict data, so a block's reclaim is not set off by a stricter reader
    /// of data sharing it. One byte per logical unit. Written to TOML only when on.
    #[serde(skip_serializing_if = "is_false")]
    pub budget_placement: bool,
}

fn is_false(v: &bool) -> bool {
    !*v
}

impl Default for ReliabilityConfig {
    fn default() -> Self {
        ReliabilityConfig {
            model: ReliabilityModel::None,
            rber_set: RberSet::Tlc3d,
            power_law: PowerLawParams::default(),
            ecc: EccParams::default(),
            read_retry: ReadRetryParams::default(),
            page_sigma: 0.3,
            base_cycles: 0,
            read_reclaim: ReadReclaim::None,
            read_count_threshold: 100_000,
            reclaim_margin: 0.9,
            reclaim_when: ReclaimWhen::Immediate,
            hint_latency: HintLatency::Request,
            default_budget_us: 0.0,
            hints: Vec::new(),
            long_read_us: 400.0,
            read_thresholds_us: Vec::new(),
            budget_placement: false,
        }
    }
}

/// One hint command (`[[reliability.hints]]`): reads of the LBA range `[lba_start, lba_end)`
/// (512-byte sectors), and/or of `stream`, accept up to `budget_us` of flash read latency.
/// A read matches a hint when it overlaps the range (if given) and carries the stream (if
/// given); a read matching several hints gets the smallest budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadHint {
    /// First 512-byte sector of the range (inclusive); omitted: from sector 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lba_start: Option<u64>,
    /// End of the range (exclusive); omitted: to the end of the drive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lba_end: Option<u64>,
    /// Stream or namespace id (`HostRequest.stream`); omitted: any stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<u16>,
    /// Flash read latency the application accepts, in microseconds.
    pub budget_us: f64,
}

/// Re-key an error from the `flash.*` names of the rber module to `reliability.*`.
fn rekey(e: Error, from: &str, to: &str) -> Error {
    match e {
        Error::Config { key, value, expected, suggestion } => {
            Error::Config { key: key.replacen(from, to, 1), value, expected, suggestion }
        }
        other => other,
    }
}

impl ReliabilityConfig {
    /// Check ranges; errors name the dotted key under `reliability.`.
    pub fn validate(&self) -> Result<()> {
        self.power_law.validate().map_err(|e| rekey(e, "flash.errors.", "reliability.power_law."))?;
        self.ecc.validate().map_err(|e| rekey(e, "flash.ecc.", "reliability.ecc."))?;
        self.read_retry.validate().map_err(|e| rekey(e, "flash.read_retry.", "reliability.read_retry."))?;
        if !(self.page_sigma.is_finite() && (0.0..=2.0).contains(&self.page_sigma)) {
            return Err(Error::config("reliability.page_sigma", self.page_sigma, "a sigma in [0, 2]"));
        }
        if matches!(self.read_reclaim, ReadReclaim::ErrorBased | ReadReclaim::Hinted | ReadReclaim::RetryOnly)
            && self.model == ReliabilityModel::None
        {
            return Err(Error::config(
                "reliability.read_reclaim",
                format!("\"{}\"", self.read_reclaim),
                "none or read_count when reliability.model is none (error-based policies need an error model)",
            ));
        }
        if self.budget_placement && self.read_reclaim != ReadReclaim::Hinted {
            return Err(Error::config(
                "reliability.budget_placement",
                true,
                format!(
                    "false unless reliability.read_reclaim is \"hinted\" (it is \"{}\": budgets do not decide its reclaim)",
                    self.read_reclaim
                ),
            ));
        }
        if self.read_count_threshold == 0 {
            return Err(Error::config("reliability.read_count_threshold", 0, "a positive number of reads"));
        }
        if !(self.reclaim_margin > 0.0 && self.reclaim_margin <= 1.0) {
            return Err(Error::config("reliability.reclaim_margin", self.reclaim_margin, "a fraction in (0, 1]"));
        }
        for (key, v) in
            [("reliability.default_budget_us", self.default_budget_us), ("reliability.long_read_us", self.long_read_us)]
        {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::config(key, v, "a non-negative number of microseconds"));
            }
        }
        for (i, &t) in self.read_thresholds_us.iter().enumerate() {
            if t == 0 || self.read_thresholds_us[..i].contains(&t) {
                return Err(Error::config(
                    format!("reliability.read_thresholds_us[{i}]"),
                    t,
                    "a positive whole number of microseconds, each given once",
                ));
            }
        }
        for (i, h) in self.hints.iter().enumerate() {
            if !(h.budget_us.is_finite() && h.budget_us >= 0.0) {
                return Err(Error::config(
                    format!("reliability.hints[{i}].budget_us"),
                    h.budget_us,
                    "a non-negative number of microseconds",
                ));
            }
            if let (Some(s), Some(e)) = (h.lba_start, h.lba_end) {
                if e <= s {
                    return Err(Error::config(
                        format!("reliability.hints[{i}].lba_end"),
                        e,
                        format!("above lba_start ({s})"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The RBER coefficients in use.
    pub fn rber_params(&self) -> Result<PowerLawParams> {
        match self.rber_set {
            RberSet::Custom => Ok(self.power_law.clone()),
            set => {
                PowerLawParams::preset(set.name()).map_err(|e| rekey(e, "flash.errors.preset", "reliability.rber_set"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::ConfigBuilder;

    #[test]
    fn hints_parse_and_bad_values_name_the_key() {
        let c = ConfigBuilder::new()
            .toml_str(
                "[reliability]\nmodel = \"power_law\"\nread_reclaim = \"hinted\"\n\
                 [[reliability.hints]]\nlba_start = 0\nlba_end = 2048\nbudget_us = 500\n\
                 [[reliability.hints]]\nstream = 3\nbudget_us = 1000\n",
                "test",
            )
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(c.reliability.hints.len(), 2);
        assert_eq!(c.reliability.hints[1].stream, Some(3));
        // The resolved config round-trips through TOML.
        let again = ConfigBuilder::new().toml_str(&c.to_toml(), "round trip").unwrap().build().unwrap();
        assert_eq!(again, c);
        for (set, key) in [
            ("reliability.model=\"powerlaw\"", "reliability.model"),
            ("reliability.read_reclaim=\"error_based\"", "reliability.read_reclaim"),
            ("reliability.ecc.correctable_bits=100000", "reliability.ecc.correctable_bits"),
            ("reliability.read_retry.rber_reduction_per_step=1.0", "reliability.read_retry.rber_reduction_per_step"),
            ("reliability.reclaim_margin=0", "reliability.reclaim_margin"),
            ("reliability.hints=[{budget_us=-1}]", "reliability.hints[0].budget_us"),
            ("reliability.hints=[{budget_us=1, lba_start=5, lba_end=5}]", "reliability.hints[0].lba_end"),
            ("reliability.budget_placement=true", "reliability.budget_placement"),
            ("reliability.read_thresholds_us=[0]", "reliability.read_thresholds_us[0]"),
            ("reliability.read_thresholds_us=[300, 200, 300]", "reliability.read_thresholds_us[2]"),
        ] {
            let e = ConfigBuilder::new().set(set).and_then(|b| b.build()).unwrap_err().to_string();
            assert!(e.contains(key), "{set}: {e}");
        }
        let e = ConfigBuilder::new().set("reliability.hints=[{budget=1}]").and_then(|b| b.build()).unwrap_err();
        assert!(e.to_string().contains("budget"), "{e}");
    }
}
