//! Runtime bad-block salvage (paper `002`, Moon et al.; design section 3, technique 3): a page
//! whose program fails is recorded in the bad-page history table ([`BadPageTable`]) and
//! skipped, instead of retiring its whole block.
//!
//! [`SkipBadPages`] is a [`BadBlockPolicy`] (`failures.on_program_failure = "skip_page"`): it
//! answers a failed program with [`FailureAction::SkipPage`] (the FTL retries the write at the
//! block's next usable page, `ftl/bad_block.rs`) and tells allocation which pages to skip on
//! every later use of the block (the table survives erases). A block's capacity shrinks by its
//! bad pages. [`SalvageSummary`] is the technique's section of `summary.json`.

use std::any::Any;

use crate::ftl::bad_block::{BadBlockPolicy, BadBlockStats, FailureAction};
use crate::techniques::bpht::{BadPageTable, BphtStats};

/// Runtime bad-block salvage: skip bad pages recorded in the bad-page history table.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct SkipBadPages {
    table: BadPageTable,
    pages_per_block: u32,
    /// Blocks that ever had a bad page (the table forgets retired blocks).
    bad_blocks: u64,
    bad_pages: u64,
    peak_memory: u64,
}

impl SkipBadPages {
    pub fn new(blocks: u32, pages_per_block: u32) -> Self {
        let table = BadPageTable::with_blocks(blocks);
        let peak_memory = table.memory_bytes() as u64;
        SkipBadPages { table, pages_per_block, bad_blocks: 0, bad_pages: 0, peak_memory }
    }

    /// The table (inspection, tests).
    pub fn table(&self) -> &BadPageTable {
        &self.table
    }
}

#[typetag::serde]
impl BadBlockPolicy for SkipBadPages {
    fn on_program_failure(&mut self, block: u32, page: u32) -> FailureAction {
        let first = !self.table.has_bad_pages(block);
        match self.table.mark_bad(block, page) {
            Ok(o) if o.newly_bad => {
                self.bad_pages += 1;
                self.bad_blocks += first as u64;
                self.peak_memory = self.peak_memory.max(self.table.memory_bytes() as u64);
                FailureAction::SkipPage
            }
            // Already bad (cannot happen: bad pages are never programmed) or out of range.
            _ => FailureAction::RetireBlock,
        }
    }

    #[inline]
    fn next_usable_page(&self, block: u32, page: u32) -> Option<u32> {
        self.table.next_good_page(block, page, self.pages_per_block)
    }

    fn bad_pages(&self, block: u32) -> u32 {
        self.table.bad_pages_in_block(block)
    }

    fn on_retire(&mut self, block: u32) {
        self.table.retire_block(block);
    }

    fn stats(&self) -> BadBlockStats {
        BadBlockStats { bad_pages: self.bad_pages, bad_blocks: self.bad_blocks, ..Default::default() }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Salvage's section of the summary (`techniques.salvage`).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SalvageSummary {
    /// Blocks in service with bad pages.
    pub salvaged_blocks: u64,
    /// Failed writes retried at the next good page of the same block.
    pub skip_retries: u64,
    /// Units of failed pages whose block had no good page left, placed in another block.
    pub rehomed_units: u64,
    /// The bad-page history table: entries, peak entries, lookups, memory.
    pub bad_page_table: BphtStats,
    /// Largest memory of the bad-page table over the run, in bytes.
    pub bad_page_table_peak_memory_bytes: u64,
}

impl SalvageSummary {
    /// The section from the FTL's bad-block counters and the policy's table.
    pub fn of(s: &BadBlockStats, policy: &SkipBadPages) -> Self {
        let table = policy.table.stats();
        SalvageSummary {
            salvaged_blocks: table.blocks_with_bad_pages,
            skip_retries: s.skip_retries,
            rehomed_units: s.rehomed_units,
            bad_page_table: table,
            bad_page_table_peak_memory_bytes: policy.peak_memory,
        }
    }
}
