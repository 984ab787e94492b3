//! GC moves counted by slices of the logical space: the flows' ranges (`[[flows]]`), so each
//! flow's share of the garbage collection is the units of its own data GC moved.
//!
//! Off (`None` in the FTL) unless the run has flows; the cleaning job then pays one `Option`
//! test per unit it moves.

/// Units GC moved, per range of logical units and outside every range.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GcRegions {
    /// `[first, end)` logical units of each range (ranges may overlap: a unit in two shared
    /// ranges counts for both).
    ranges: Vec<(u32, u32)>,
    /// Units GC moved, per range.
    pub moved: Vec<u64>,
    /// Units GC moved that lie in no range (data preconditioning left outside every flow).
    pub outside: u64,
}

impl GcRegions {
    pub fn new(ranges: Vec<(u32, u32)>) -> Self {
        GcRegions { moved: vec![0; ranges.len()], ranges, outside: 0 }
    }

    /// GC moved logical unit `lpn`.
    #[inline]
    pub fn count(&mut self, lpn: u32) {
        let mut found = false;
        for (i, &(a, b)) in self.ranges.iter().enumerate() {
            if a <= lpn && lpn < b {
                self.moved[i] += 1;
                found = true;
            }
        }
        self.outside += !found as u64;
    }

    /// Forget the counts (after preconditioning).
    pub fn reset(&mut self) {
        self.moved.iter_mut().for_each(|m| *m = 0);
        self.outside = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_count_for_every_range_holding_them_or_as_outside() {
        // Reference: the definition, on hand-picked units at range edges.
        let mut r = GcRegions::new(vec![(0, 10), (10, 20), (15, 30)]);
        for lpn in [0, 9, 10, 15, 19, 29, 30, 99] {
            r.count(lpn);
        }
        assert_eq!(r.moved, [2, 3, 3]);
        assert_eq!(r.outside, 2);
        r.reset();
        assert_eq!((r.moved.as_slice(), r.outside), (&[0u64, 0, 0][..], 0));
    }
}
