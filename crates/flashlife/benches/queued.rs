//! Queued-scheduler benchmark: page operations per wall second through the engine alone
//! (no FTL), on the `bench-16g` drive's resources.
//!
//! `cargo bench -p flashlife --bench queued` runs each policy on 8 channels x 4 dies at the
//! default TLC times (150 / 1000 / 3000 us, 4 KiB pages, 400 MB/s channels), closed loop
//! with 8 operations in flight per die at random dies: 60% host reads, 25% host programs,
//! 7% GC reads, 7% GC programs, 1% GC erases; each completion submits the next operation
//! at its finish, as the run loop will. The target is 5 M page operations per second.

use std::time::Instant;

use flashlife::config::FlashConfig;
use flashlife::flash::{ArrayTimes, BitMode};
use flashlife::stats::Cause;
use flashlife::timing::queued::{Fifo, Policy, Priority};
use flashlife::timing::{Completion, Queued, QueuedParams, Suspension, Transaction};
use rand::{Rng, SeedableRng};

const CHANNELS: u32 = 8;
const DIES: u32 = 32;
const IN_FLIGHT: u32 = 8 * DIES;
const OPS: u64 = 10_000_000;

fn transaction(rng: &mut rand_pcg::Pcg64) -> Transaction {
    let die = rng.gen_range(0..DIES);
    let page = rng.gen_range(0..256);
    let m = BitMode::Tlc;
    match rng.gen_range(0..100) {
        0..60 => Transaction::read(die, 0, page, m, 4096, Cause::Host),
        60..85 => Transaction::program(die, 0, page, m, 4096, Cause::Host),
        85..92 => Transaction::read(die, 0, page, m, 4096, Cause::Gc),
        92..99 => Transaction::program(die, 0, page, m, 4096, Cause::Gc),
        _ => Transaction::erase(die, 0, m, Cause::Gc),
    }
}

fn run(name: &str, policy: Box<dyn Policy>, suspension: Option<Suspension>) {
    let params = QueuedParams {
        link_mb_per_s: 600.0,
        command_overhead_us: 0.0,
        channel_mb_per_s: 400.0,
        channels: CHANNELS,
        die_channel: (0..DIES).map(|d| d % CHANNELS).collect(),
        suspension,
        multi_plane: None,
        dram_ns: 0,
    };
    let mut q = Queued::new(ArrayTimes::new(&FlashConfig::default()), params, policy);
    // Drawn beforehand and cycled, so the random draws are not timed with the engine.
    let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
    let txs: Vec<Transaction> = (0..1 << 16).map(|_| transaction(&mut rng)).collect();
    let mut next = txs.iter().cycle();
    for token in 0..IN_FLIGHT {
        q.submit(next.next().unwrap(), 0, token);
    }
    let (mut done, mut out): (u64, Vec<Completion>) = (0, Vec::new());
    let (t0, cpu0) = (Instant::now(), cpu_seconds());
    while let Some(t) = q.next_event_time() {
        q.advance(t, &mut out);
        for c in out.drain(..) {
            done += 1;
            if done + (IN_FLIGHT as u64) <= OPS {
                q.submit(next.next().unwrap(), c.finish, c.token);
            }
        }
    }
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), cpu_seconds() - cpu0);
    let s = q.stats();
    let busy = s.die_busy_ns.iter().sum::<u64>() as f64 / (DIES as u64 * s.elapsed_ns) as f64;
    println!(
        "{name:<20} {:>5.2} M page ops per CPU s ({:>5.2} M per wall s)  {done} ops in {cpu:.2} CPU s  simulated {:.1} s  dies busy {:.0}%  suspensions {}",
        done as f64 / cpu / 1e6,
        done as f64 / wall / 1e6,
        s.elapsed_ns as f64 * 1e-9,
        busy * 100.0,
        s.program_suspensions + s.erase_suspensions,
    );
}

/// This thread's CPU time: on a shared machine the wall time also counts other processes'
/// turns, so both are reported.
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given and nothing else.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn main() {
    let suspension = Suspension { reads_per_suspension: 4, ..Suspension::default() };
    run("fifo", Box::new(Fifo), None);
    run("priority", Box::new(Priority::default()), None);
    run("priority+suspension", Box::new(Priority::default()), Some(suspension));
}
