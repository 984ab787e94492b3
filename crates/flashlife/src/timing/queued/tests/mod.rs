//! The queued engine's checks, each against a reference outside this engine: the
//! reservation scheduler's costs, queueing theory's closed forms, resource bounds.

mod checkpoint;
mod multi_plane;
mod observe;
mod queueing;
mod reference;
mod saturation;
mod suspension;

use super::*;
use crate::config::FlashConfig;
use crate::flash::BitMode;
use crate::stats::Cause;

/// Array times with SLC set to `read_us` / `program_us` / `erase_us` (other modes default).
fn times(read_us: f64, program_us: f64, erase_us: f64) -> ArrayTimes {
    let mut cfg = FlashConfig::default();
    cfg.slc.read_us = read_us;
    cfg.slc.program_us = program_us;
    cfg.slc.erase_us = erase_us;
    ArrayTimes::new(&cfg)
}

/// `dies` dies spread over `channels` channels (die d on channel d % channels).
fn params(dies: u32, channels: u32, channel_mb_per_s: f64, suspension: Option<Suspension>) -> QueuedParams {
    QueuedParams {
        link_mb_per_s: 600.0,
        command_overhead_us: 0.0,
        channel_mb_per_s,
        channels,
        die_channel: (0..dies).map(|d| d % channels).collect(),
        suspension,
        multi_plane: None,
        dram_ns: 0,
    }
}

fn read(die: u32, bytes: u64, class: Cause) -> Transaction {
    Transaction::read(die, 0, 0, BitMode::Slc, bytes, class)
}

fn program(die: u32, bytes: u64, class: Cause) -> Transaction {
    Transaction::program(die, 0, 0, BitMode::Slc, bytes, class)
}

/// Advance event by event until nothing is in flight, as the run loop will.
fn drain(q: &mut Queued) -> Vec<Completion> {
    let mut out = Vec::new();
    while let Some(t) = q.next_event_time() {
        q.advance(t, &mut out);
    }
    out
}

/// Exponential inter-arrival gaps (ns) at `rate_per_ns`, from a seeded stream.
struct Poisson {
    rng: rand_pcg::Pcg64,
    mean_ns: f64,
    t: f64,
}

impl Poisson {
    fn new(seed: u64, rate_per_ns: f64) -> Self {
        use rand::SeedableRng;
        Poisson { rng: rand_pcg::Pcg64::seed_from_u64(seed), mean_ns: 1.0 / rate_per_ns, t: 0.0 }
    }

    /// The next arrival time (ns, rounded).
    fn next(&mut self) -> u64 {
        use rand::Rng;
        let u: f64 = self.rng.gen();
        self.t += -(1.0 - u).ln() * self.mean_ns;
        self.t.round() as u64
    }
}
