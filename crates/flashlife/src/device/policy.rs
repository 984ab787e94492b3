//! The program-failure policy of an open-channel device: the trait every policy implements,
//! and the baseline's, OCSSD 2.0. Techniques provide others (FT-PASSD's, in
//! `techniques::ftpassd`), built by the technique registry from `open_channel.device_policy`.

use super::memory::MemoryReport;
use super::DeviceCore;
use crate::config::DevicePolicyKind;
use crate::timing::Done;

/// Address translation and program-failure handling inside the device.
#[typetag::serde]
pub trait FailurePolicy: Send {
    fn name(&self) -> &'static str;
    /// Does the policy complete writes from the buffer (write-back)?
    fn write_back(&self) -> bool;
    /// Physical block and page the next write of `lpo` of `lbn` goes to.
    fn translate_write(&self, lbn: u32, lpo: u32) -> (u32, u32);
    /// Physical block and page holding `lpo` of `lbn`: where it was written, unless the policy
    /// moves data after the write (the shift table does).
    fn translate_read(&self, lbn: u32, lpo: u32) -> (u32, u32) {
        self.translate_write(lbn, lpo)
    }
    /// A write of `lbn` succeeded.
    fn programmed(&mut self, _lbn: u32) {}
    /// The program of `lpo` of `lbn` failed, its status known at `detected`. Returns when the
    /// data is safely stored, or `None` to report the failure to the host.
    fn program_failed(&mut self, core: &mut DeviceCore, lbn: u32, lpo: u32, detected: Done) -> Option<Done>;
    /// The host erases (or retires) `lbn`: the physical block concerned. Blocks the policy no
    /// longer needs and that saw failures are retired here.
    fn erase(&mut self, core: &mut DeviceCore, lbn: u32) -> u32;
    /// How long the device must have had no host command before background work starts, ns.
    fn idle_timeout_ns(&self) -> u64 {
        0
    }
    /// The die of the next background step (one page copy), settling any step that needs no
    /// flash work first; `None` when there is no background work. The device decides whether
    /// the step starts; the policy is never told when the next host command comes.
    fn next_background(&mut self, _core: &mut DeviceCore) -> Option<u32> {
        None
    }
    /// Run the step `next_background` named, starting at `start`; returns when it ends.
    fn background_step(&mut self, _core: &mut DeviceCore, start: Done) -> Done {
        start
    }
    /// Metadata the policy keeps, for `physical_blocks` blocks.
    fn memory(&self, physical_blocks: u64) -> Option<MemoryReport>;
}

/// The baseline's policy `kind` names; `home[lbn]` is each logical block's initial physical
/// block.
pub fn baseline(kind: DevicePolicyKind, home: Vec<u32>) -> Box<dyn FailurePolicy> {
    match kind {
        DevicePolicyKind::Ocssd => Box::new(Ocssd::new(home)),
    }
}

/// OCSSD 2.0: write-through, static addresses, failures reported to the host, whose FTL
/// rewrites the data elsewhere.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Ocssd {
    map: Vec<u32>,
}

impl Ocssd {
    /// `home[lbn]` is each logical block's physical block, for good.
    pub fn new(home: Vec<u32>) -> Self {
        Ocssd { map: home }
    }
}

#[typetag::serde]
impl FailurePolicy for Ocssd {
    fn name(&self) -> &'static str {
        "ocssd"
    }
    fn write_back(&self) -> bool {
        false
    }
    #[inline]
    fn translate_write(&self, lbn: u32, lpo: u32) -> (u32, u32) {
        (self.map[lbn as usize], lpo)
    }
    fn program_failed(&mut self, _: &mut DeviceCore, _: u32, _: u32, _: Done) -> Option<Done> {
        None
    }
    fn erase(&mut self, _: &mut DeviceCore, lbn: u32) -> u32 {
        self.map[lbn as usize]
    }
    fn memory(&self, _: u64) -> Option<MemoryReport> {
        None
    }
}
