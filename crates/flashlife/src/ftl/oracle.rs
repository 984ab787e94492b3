//! The integrity oracle: for every mapping unit, the version the host last wrote; for every
//! physical unit slot, the version it holds. Every read and every relocation is checked.
//! The first violation is kept (the run stops with it); checks are counted. A trimmed unit
//! (deallocated by the host) must read as unmapped until it is written again.

use super::{Mapping, UNMAPPED};

/// Version bookkeeping for the integrity oracle.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Oracle {
    version: Vec<u32>,
    slot_version: Vec<u32>,
    pub checks: u64,
    pub violation: Option<String>,
    /// One bit per unit: trimmed since its last write (empty until the first trim).
    #[serde(default)]
    trimmed: Vec<u64>,
}

impl Oracle {
    pub fn new(logical_units: u32, slots: u64) -> Self {
        Oracle {
            version: vec![0; logical_units as usize],
            slot_version: vec![0; slots as usize],
            checks: 0,
            violation: None,
            trimmed: Vec::new(),
        }
    }

    fn fail(&mut self, msg: String) {
        if self.violation.is_none() {
            self.violation = Some(msg);
        }
    }

    /// The host wrote a new version of `lpn` into `slot`.
    #[inline]
    pub fn write(&mut self, lpn: u32, slot: u32) {
        let v = &mut self.version[lpn as usize];
        *v = v.wrapping_add(1);
        self.slot_version[slot as usize] = *v;
        if let Some(w) = self.trimmed.get_mut((lpn >> 6) as usize) {
            *w &= !(1 << (lpn & 63));
        }
    }

    /// The host trimmed `lpn`: from now until its next write it must read as unmapped.
    pub fn trim(&mut self, lpn: u32) {
        if self.trimmed.is_empty() {
            self.trimmed = vec![0; self.version.len().div_ceil(64)];
        }
        self.trimmed[(lpn >> 6) as usize] |= 1 << (lpn & 63);
    }

    #[inline]
    fn is_trimmed(&self, lpn: u32) -> bool {
        self.trimmed.get((lpn >> 6) as usize).is_some_and(|w| w & (1 << (lpn & 63)) != 0)
    }

    /// `lpn` is read from `slot`, whose reverse map says `owner`.
    #[inline]
    pub fn check(&mut self, what: &str, lpn: u32, slot: u32, owner: u32) {
        self.checks += 1;
        let want = self.version[lpn as usize];
        let trimmed = self.is_trimmed(lpn);
        if owner == u32::MAX {
            // Unmapped: fine only for a unit never written, or trimmed since its last write.
            if want != 0 && !trimmed {
                self.fail(format!("{what} of unit {lpn}: unmapped, but version {want} was written"));
            }
            return;
        }
        if trimmed {
            self.fail(format!("{what} of unit {lpn}: trimmed, but mapped to slot {slot} (owner {owner})"));
            return;
        }
        let got = self.slot_version[slot as usize];
        if owner != lpn || got != want {
            self.fail(format!(
                "{what} of unit {lpn} from slot {slot}: slot belongs to unit {owner} at version {got}, expected version {want}"
            ));
        }
    }

    /// Check `lpn` where `map` says it is (or that it is unmapped as it should be).
    #[inline]
    pub fn check_mapped(&mut self, what: &str, lpn: u32, map: &Mapping) {
        let slot = map.slot(lpn);
        let owner = if slot == UNMAPPED { UNMAPPED } else { map.owner(slot) };
        self.check(what, lpn, slot, owner);
    }

    /// The final check of a run: every unit below `units` where `map` says it is.
    pub fn check_all(&mut self, map: &Mapping, units: u32) {
        for lpn in 0..units {
            self.check_mapped("final check", lpn, map);
        }
    }

    /// The data of `lpn` moved from `from` (owned by `owner`) to `to`.
    #[inline]
    pub fn relocate(&mut self, lpn: u32, from: u32, owner: u32, to: u32) {
        self.check("relocation", lpn, from, owner);
        self.slot_version[to as usize] = self.slot_version[from as usize];
    }

    /// Data of `lpn` is lost (uncorrectable): the next read of it must fail the oracle.
    pub fn lose(&mut self, slot: u32) {
        self.slot_version[slot as usize] = self.slot_version[slot as usize].wrapping_add(0x8000_0000);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: a trimmed unit must read as unmapped until it is written again; data found
    /// for it, or an unmapped unit written after its trim, is a violation.
    #[test]
    fn trimmed_units_must_read_unmapped() {
        let mut o = Oracle::new(4, 8);
        o.write(1, 3);
        o.trim(1);
        o.check("read", 1, 0, u32::MAX);
        assert_eq!(o.violation, None);
        o.check("read", 1, 3, 1);
        assert!(o.violation.as_deref().is_some_and(|v| v.contains("trimmed")), "{:?}", o.violation);
        let mut o = Oracle::new(4, 8);
        o.write(1, 3);
        o.trim(1);
        o.write(1, 5);
        o.check("read", 1, 5, 1);
        assert_eq!(o.violation, None);
        o.check("read", 1, 0, u32::MAX);
        assert!(o.violation.as_deref().is_some_and(|v| v.contains("unmapped")), "{:?}", o.violation);
    }
}
