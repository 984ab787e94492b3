//! Against resource bounds: a saturated drive completes work at the rate of its bottleneck.

use rand::{Rng, SeedableRng};

use super::*;

/// Closed loop: `qd` transactions in flight from time 0; each completion submits the next
/// (from `next(i)`) at its finish, as a closed-loop host will, until `total` completed.
/// Returns the completions in time order.
fn closed_loop(q: &mut Queued, qd: u32, total: u32, mut next: impl FnMut(u32) -> Transaction) -> Vec<Completion> {
    for i in 0..qd {
        q.submit(&next(i), 0, i);
    }
    let mut submitted = qd;
    let mut all = Vec::with_capacity(total as usize);
    let mut out = Vec::new();
    while let Some(t) = q.next_event_time() {
        q.advance(t, &mut out);
        for c in out.drain(..) {
            assert_eq!(c.finish, t, "advancing to the next event returns completions at that instant");
            if submitted < total {
                q.submit(&next(submitted), c.finish, submitted);
                submitted += 1;
            }
            all.push(c);
        }
    }
    assert_eq!(q.records(), qd as usize, "records are reused: never more than in flight");
    all
}

/// Completions per second after the first tenth (the start-up transient).
fn rate(done: &[Completion]) -> f64 {
    let from = done.len() / 10;
    let (a, b) = (done[from].finish, done[done.len() - 1].finish);
    (done.len() - 1 - from) as f64 / ((b - a) as f64 * 1e-9)
}

/// Channel time of 4096 bytes at `mb_per_s`, as the engine rounds it.
fn xfer_ns(mb_per_s: f64) -> f64 {
    (4096 * (1e6 / mb_per_s).round() as u64 / 1000) as f64
}

#[test]
fn random_reads_reach_the_die_or_channel_bound() {
    // Reference: a read holds its die for sense + transfer and its channel for the transfer,
    // so N dies on C channels complete at most min(N / (tR + x), C / x) reads per second.
    // One case is die-bound (fast bus), one channel-bound (8 dies on a slow bus). 16 reads
    // in flight per die at random dies leave a die idle with probability (7/8)^128 ~ 1e-7,
    // so the bound must be met within 3%.
    for (channels, mb_per_s) in [(2, 800.0), (1, 200.0)] {
        let dies = 8;
        let mut q = Queued::new(
            times(50.0, 200.0, 1500.0),
            params(dies, channels, mb_per_s, None),
            Box::new(Priority::default()),
        );
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let done = closed_loop(&mut q, 16 * dies, 60_000, |_| read(rng.gen_range(0..dies), 4096, Cause::Host));
        let x = xfer_ns(mb_per_s);
        let bound = (dies as f64 / (50_000.0 + x)).min(channels as f64 / x) * 1e9;
        let got = rate(&done);
        assert!((got / bound - 1.0).abs() < 0.03, "{channels} channels: {got:.0}/s, bound {bound:.0}/s");
        let s = q.stats();
        let bus = s.channel_busy_ns.iter().sum::<u64>() as f64 / (channels as u64 * s.elapsed_ns) as f64;
        let die = s.die_busy_ns.iter().sum::<u64>() as f64 / (dies as u64 * s.elapsed_ns) as f64;
        assert!(bus.max(die) > 0.97, "the bottleneck is busy: channels {bus:.3}, dies {die:.3}");
    }
}

#[test]
fn sequential_programs_reach_the_die_or_channel_bound() {
    // Reference: a program holds its channel for the transfer and its die for transfer +
    // tPROG, so pages striped over N dies complete at most min(N / (tPROG + x), C / x) per
    // second (with x << tPROG the die bound is the familiar N x page / tPROG, 2.5% higher
    // here). Four pages in flight per die, striped in die order.
    for (channels, mb_per_s) in [(2, 800.0), (1, 100.0)] {
        let dies = 8;
        let mut q = Queued::new(
            times(50.0, 200.0, 1500.0),
            params(dies, channels, mb_per_s, None),
            Box::new(Priority::default()),
        );
        let done = closed_loop(&mut q, 4 * dies, 30_000, |i| program(i % dies, 4096, Cause::Host));
        let x = xfer_ns(mb_per_s);
        let bound = (dies as f64 / (200_000.0 + x)).min(channels as f64 / x) * 1e9;
        let got = rate(&done);
        assert!((got / bound - 1.0).abs() < 0.03, "{channels} channels: {got:.0}/s, bound {bound:.0}/s");
    }
}
