//! Flash operation counters, by cause.

use serde::Serialize;

/// Why a flash operation happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Cause {
    /// Host reads and writes.
    Host = 0,
    /// Garbage collection.
    Gc,
    /// Static wear leveling (cold data moved).
    WearLeveling,
    /// Data moved off a block after a program or erase failure.
    BadBlock,
    /// Read reclaim (read disturb).
    Reclaim,
    /// Device-side migration (FT-PASSD idle-time migration).
    Migration,
    /// Second writes (Reusable SSD).
    SecondWrite,
    /// Translation pages of a cached mapping table (`[mapping_cache]`): read on a miss,
    /// rewritten for dirty entries, moved by GC.
    Mapping,
}

/// Number of causes.
pub const CAUSES: usize = 8;

impl Cause {
    pub const ALL: [Cause; CAUSES] = [
        Cause::Host,
        Cause::Gc,
        Cause::WearLeveling,
        Cause::BadBlock,
        Cause::Reclaim,
        Cause::Migration,
        Cause::SecondWrite,
        Cause::Mapping,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Cause::Host => "host",
            Cause::Gc => "gc",
            Cause::WearLeveling => "wear_leveling",
            Cause::BadBlock => "bad_block",
            Cause::Reclaim => "reclaim",
            Cause::Migration => "migration",
            Cause::SecondWrite => "second_write",
            Cause::Mapping => "mapping",
        }
    }
}

/// Counts per cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByCause(pub [u64; CAUSES]);

impl ByCause {
    #[inline]
    pub fn add(&mut self, cause: Cause, n: u64) {
        self.0[cause as usize] += n;
    }
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
    pub fn get(&self, cause: Cause) -> u64 {
        self.0[cause as usize]
    }
    /// As a name -> count map for the summary. `mapping` is left out while it is 0 (it
    /// exists only with a cached mapping table; summaries without one keep their keys).
    pub fn to_map(&self) -> std::collections::BTreeMap<&'static str, u64> {
        Cause::ALL
            .iter()
            .filter(|&&c| c != Cause::Mapping || self.get(c) != 0)
            .map(|&c| (c.name(), self.get(c)))
            .collect()
    }
}

impl Serialize for ByCause {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_map().serialize(s)
    }
}

/// The inverse of the summary's name -> count map (checkpoints store counters in that form).
impl<'de> serde::Deserialize<'de> for ByCause {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = std::collections::BTreeMap::<String, u64>::deserialize(d)?;
        let mut out = ByCause::default();
        for (name, n) in map {
            let cause = Cause::ALL
                .into_iter()
                .find(|c| c.name() == name)
                .ok_or_else(|| serde::de::Error::custom(format!("unknown cause `{name}`")))?;
            out.0[cause as usize] = n;
        }
        Ok(out)
    }
}

/// Everything the FTL counts about the flash.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct FlashCounters {
    pub page_reads: ByCause,
    pub page_programs: ByCause,
    /// Mapping units programmed (a page holds one or more).
    pub unit_programs: ByCause,
    pub block_erases: ByCause,
    pub program_failures: u64,
    pub erase_failures: u64,
    /// Blocks retired (worn out, failed erase, failed program).
    pub retired_blocks: u64,
    /// Blocks found worn out at erase.
    pub worn_out_blocks: u64,
    /// Worn-out blocks that changed bit mode instead of retiring (ZombieNAND).
    pub mode_switches: u64,
    /// Host reads served from the controller's buffer (an open page).
    pub buffer_hits: u64,
    /// Host reads of never-written units (answered with zeros, no flash access).
    pub unmapped_reads: u64,
    /// Host units written.
    pub host_unit_writes: u64,
    /// GC victims cleaned and the valid units they held.
    pub gc_victims: u64,
    pub gc_valid_moved: u64,
    /// Of those, the units moved by background GC in idle windows (open-loop replay).
    pub gc_valid_moved_idle: u64,
    /// Read-retry steps (extra sensings and transfers), by the cause of the read.
    pub read_retries: ByCause,
    /// Page reads that even the last retry step could not correct.
    pub uncorrectable_reads: u64,
    /// Blocks rewritten by read reclaim.
    pub reclaimed_blocks: u64,
    /// Of those, the reclaims postponed to and done in idle windows.
    #[serde(default)]
    pub reclaims_in_idle: u64,
}
