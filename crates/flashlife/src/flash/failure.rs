//! Program and erase failure models: where the flash says "status fail".

use rand::Rng;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use std::collections::HashSet;

/// Decides whether an operation fails. Called once per program and per erase.
#[typetag::serde]
pub trait FailureModel: Send {
    /// Does programming `page` of `block` (at `cycles` erases) fail?
    fn program_fails(&mut self, block: u32, page: u32, cycles: u32) -> bool;
    /// Does erasing `block` (at `cycles` erases) fail?
    fn erase_fails(&mut self, block: u32, cycles: u32) -> bool;
    /// The measured run starts (after preconditioning): failures counted by program number
    /// count from here.
    fn start_run(&mut self) {}
}

/// Failures injected at a fixed rate, at listed places (each listed place fails once) and at
/// the N-th page program of the run (once).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct InjectedFailures {
    rng: Pcg64Mcg,
    program_rate: f64,
    erase_rate: f64,
    at: HashSet<(u32, u32)>,
    /// The program of the run that fails (1-based; 0: none).
    nth: u64,
    /// Programs since [`FailureModel::start_run`]; `None` before it (preconditioning).
    run_programs: Option<u64>,
}

impl InjectedFailures {
    pub fn new(seed: u64, program_rate: f64, erase_rate: f64, at: &[[u32; 2]]) -> Self {
        InjectedFailures {
            rng: Pcg64Mcg::seed_from_u64(seed),
            program_rate,
            erase_rate,
            at: at.iter().map(|&[b, p]| (b, p)).collect(),
            nth: 0,
            run_programs: None,
        }
    }

    /// Also fail the `n`-th page program (1-based, every cause) after
    /// [`FailureModel::start_run`]; 0 for none. Whatever block and page it lands on.
    pub fn with_nth_program(mut self, n: u64) -> Self {
        self.nth = n;
        self
    }

    /// True when this model can never fail anything (lets the array skip calls).
    pub fn is_inert(&self) -> bool {
        self.program_rate == 0.0 && self.erase_rate == 0.0 && self.at.is_empty() && self.nth == 0
    }
}

#[typetag::serde]
impl FailureModel for InjectedFailures {
    fn program_fails(&mut self, block: u32, page: u32, _cycles: u32) -> bool {
        if !self.at.is_empty() && self.at.remove(&(block, page)) {
            return true;
        }
        if let Some(n) = &mut self.run_programs {
            *n += 1;
            if *n == self.nth {
                return true;
            }
        }
        self.program_rate > 0.0 && self.rng.gen::<f64>() < self.program_rate
    }

    fn erase_fails(&mut self, _block: u32, _cycles: u32) -> bool {
        self.erase_rate > 0.0 && self.rng.gen::<f64>() < self.erase_rate
    }

    fn start_run(&mut self) {
        if self.nth > 0 {
            self.run_programs = Some(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nth_program_of_the_run_fails_once_and_only_after_start() {
        let mut f = InjectedFailures::new(1, 0.0, 0.0, &[]).with_nth_program(3);
        assert!(!f.is_inert());
        // Preconditioning: not counted.
        assert!((0..10).all(|p| !f.program_fails(0, p, 0)));
        f.start_run();
        let fails: Vec<bool> = (0..10).map(|p| f.program_fails(1, p, 0)).collect();
        assert_eq!(fails.iter().position(|&x| x), Some(2));
        assert_eq!(fails.iter().filter(|&&x| x).count(), 1);
    }
}
