//! The integrity oracle: for every mapping unit, the version the host last wrote; for every
//! physical unit slot, the version it holds. Every read and every relocation is checked.
//! The first violation is kept (the run stops with it); checks are counted.

/// Version bookkeeping for the integrity oracle.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Oracle {
    version: Vec<u32>,
    slot_version: Vec<u32>,
    pub checks: u64,
    pub violation: Option<String>,
}

impl Oracle {
    pub fn new(logical_units: u32, slots: u64) -> Self {
        Oracle {
            version: vec![0; logical_units as usize],
            slot_version: vec![0; slots as usize],
            checks: 0,
            violation: None,
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
    }

    /// `lpn` is read from `slot`, whose reverse map says `owner`.
    #[inline]
    pub fn check(&mut self, what: &str, lpn: u32, slot: u32, owner: u32) {
        self.checks += 1;
        let want = self.version[lpn as usize];
        if owner == u32::MAX {
            // Unmapped: fine only for a unit never written.
            if want != 0 {
                self.fail(format!("{what} of unit {lpn}: unmapped, but version {want} was written"));
            }
            return;
        }
        let got = self.slot_version[slot as usize];
        if owner != lpn || got != want {
            self.fail(format!(
                "{what} of unit {lpn} from slot {slot}: slot belongs to unit {owner} at version {got}, expected version {want}"
            ));
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
