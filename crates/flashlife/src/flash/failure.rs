//! Program and erase failure models: where the flash says "status fail".

use rand::Rng;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use std::collections::HashSet;

/// Decides whether an operation fails. Called once per program and per erase.
pub trait FailureModel: Send {
    /// Does programming `page` of `block` (at `cycles` erases) fail?
    fn program_fails(&mut self, block: u32, page: u32, cycles: u32) -> bool;
    /// Does erasing `block` (at `cycles` erases) fail?
    fn erase_fails(&mut self, block: u32, cycles: u32) -> bool;
}

/// Failures injected at a fixed rate and at listed places (each listed place fails once).
pub struct InjectedFailures {
    rng: Pcg64Mcg,
    program_rate: f64,
    erase_rate: f64,
    at: HashSet<(u32, u32)>,
}

impl InjectedFailures {
    pub fn new(seed: u64, program_rate: f64, erase_rate: f64, at: &[[u32; 2]]) -> Self {
        InjectedFailures {
            rng: Pcg64Mcg::seed_from_u64(seed),
            program_rate,
            erase_rate,
            at: at.iter().map(|&[b, p]| (b, p)).collect(),
        }
    }

    /// True when this model can never fail anything (lets the array skip calls).
    pub fn is_inert(&self) -> bool {
        self.program_rate == 0.0 && self.erase_rate == 0.0 && self.at.is_empty()
    }
}

impl FailureModel for InjectedFailures {
    fn program_fails(&mut self, block: u32, page: u32, _cycles: u32) -> bool {
        if !self.at.is_empty() && self.at.remove(&(block, page)) {
            return true;
        }
        self.program_rate > 0.0 && self.rng.gen::<f64>() < self.program_rate
    }

    fn erase_fails(&mut self, _block: u32, _cycles: u32) -> bool {
        self.erase_rate > 0.0 && self.rng.gen::<f64>() < self.erase_rate
    }
}
