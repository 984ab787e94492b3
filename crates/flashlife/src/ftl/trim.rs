//! TRIM / deallocate: the host says a range of logical units holds nothing it wants. Their
//! mappings are dropped at once (the old copies become invalid without a program, so GC need
//! not move them) and they read as unmapped (zeroes, no flash read) until written again.
//! No flash work is done: a trim is a change of the map, which lives in the controller.

use super::*;

/// What trims did to the map (`summary.trim` adds the run loop's request counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TrimCounters {
    /// Logical units named by trim requests.
    pub units: u64,
    /// Of those, units that held data: their old copies became invalid without a program.
    pub mapped_units: u64,
}

/// Deallocate `units` mapping units from `first` in either FTL: each mapped unit's old copy
/// becomes invalid (its block's valid count falls), the oracle learns it must read as
/// unmapped. Changes the map only: no transaction.
pub(crate) fn trim_units<F: LogicalSpace + ?Sized>(ftl: &mut F, first: u32, units: u32) {
    for lpn in first..first + units {
        let (map, oracle, trims) = ftl.map_parts();
        let mapped = map.slot(lpn) != UNMAPPED;
        if let Some(o) = oracle {
            // The version being dropped must still be where the map says, as for an
            // overwrite: a unit lost and then trimmed would otherwise go unnoticed.
            o.check_mapped("trim", lpn, map);
            o.trim(lpn);
        }
        if mapped {
            trims.mapped_units += 1;
            ftl.unmap_unit(lpn, true);
        }
    }
    ftl.map_parts().2.units += units as u64;
}

impl Ftl {
    /// Deallocate `units` mapping units from `first`. Changes the map only: no transaction.
    pub fn trim(&mut self, first: u32, units: u32) {
        trim_units(self, first, units);
    }

    /// What trims did so far.
    pub fn trim_counters(&self) -> TrimCounters {
        self.trims
    }

    /// Forget the trim counters (after preconditioning).
    pub(crate) fn reset_trim_counters(&mut self) {
        self.trims = TrimCounters::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: a trimmed unit's copy is invalid at once (its block's valid count drops by
    /// one per mapped unit, counted independently by the block table) and a read of it costs
    /// no flash read; trimming an unmapped unit changes nothing. The oracle accepts the
    /// unmapped reads, and a rewrite maps the unit again.
    #[test]
    fn trimmed_units_are_invalid_and_read_as_unmapped() {
        let mut ftl = super::super::tests::full_tiny_drive_with_oracle();
        let valid_before: u64 = (0..ftl.geo.blocks()).map(|b| ftl.valid_units(b) as u64).sum();
        ftl.trim(10, 8);
        let valid_after: u64 = (0..ftl.geo.blocks()).map(|b| ftl.valid_units(b) as u64).sum();
        assert_eq!(valid_before - valid_after, 8);
        assert_eq!(ftl.trim_counters(), TrimCounters { units: 8, mapped_units: 8 });
        ftl.trim(12, 2); // already trimmed
        assert_eq!(ftl.trim_counters(), TrimCounters { units: 10, mapped_units: 8 });
        let reads = ftl.counters.page_reads.total();
        ftl.read(10, 8, Done::START);
        assert_eq!(ftl.counters.page_reads.total(), reads, "a trimmed unit costs no flash read");
        assert_eq!(ftl.counters.unmapped_reads, 8);
        ftl.write(11, 1, Done::START);
        ftl.read(10, 8, Done::START);
        assert_eq!(ftl.counters.unmapped_reads, 15);
        assert_eq!(ftl.verify_all(), None);
        assert!(ftl.integrity_checks() > 0);
    }
}
