//! Against queueing theory: one die under Poisson arrivals is an M/D/1 queue (deterministic
//! service: sense + transfer for a read, transfer + program for a program).

use super::*;

/// 4096 bytes at 4096 MB/s: 244 ps per byte, 999 ns; negligible but counted in the service.
const BYTES: u64 = 4096;
const CHANNEL_MB_PER_S: f64 = 4096.0;
const XFER_NS: f64 = 999.0;

/// Drive one die open loop: `n` arrivals from `arrival(i) -> (time, tx)` (times increasing),
/// each submitted at its time as the run loop will; returns every completion.
fn open_loop(q: &mut Queued, n: u32, mut arrival: impl FnMut(u32) -> (u64, Transaction)) -> Vec<Completion> {
    let mut out = Vec::with_capacity(n as usize);
    let mut next = Some(arrival(0));
    let mut i = 0;
    while let Some((at, tx)) = next {
        let t = q.next_event_time().map_or(at, |e| e.min(at));
        q.advance(t, &mut out);
        if t == at {
            q.submit(&tx, at, i);
            i += 1;
            next = (i < n).then(|| arrival(i));
        }
    }
    out.extend(drain(q));
    out
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (s, k) = xs.fold((0.0, 0u64), |(s, k), x| (s + x, k + 1));
    s / k as f64
}

#[test]
fn md1_mean_wait_matches_pollaczek_khinchine() {
    // Reference: M/D/1 mean wait rho / (2 mu (1 - rho)) (Pollaczek-Khinchine with zero
    // service variance). Sample sizes: the relative standard error of a mean over n
    // customers, measured by Lindley's recursion over 12 seeds at n = 200,000, is 0.85% at
    // rho 0.5 and 1.9% at rho 0.8; at 400,000 and 1,000,000 customers these are 0.6% and
    // 0.85%, so 3% is more than 3.5 standard errors. Every waiting time is also checked
    // exactly against Lindley's recursion W' = max(0, W + S - A), an independent path.
    let s_ns = 50_000.0 + XFER_NS;
    for (rho, n, seed) in [(0.5, 400_000, 1), (0.8, 1_000_000, 2)] {
        let mut q = Queued::new(times(50.0, 200.0, 1500.0), params(1, 1, CHANNEL_MB_PER_S, None), Box::new(Fifo));
        let mut arrivals = Poisson::new(seed, rho / s_ns);
        let mut at = Vec::with_capacity(n as usize);
        let out = open_loop(&mut q, n, |_| {
            let t = arrivals.next();
            at.push(t);
            (t, read(0, BYTES, Cause::Host))
        });
        assert_eq!(out.len(), n as usize);
        let mut lindley = vec![0u64; n as usize];
        for i in 1..n as usize {
            lindley[i] = (lindley[i - 1] + s_ns as u64).saturating_sub(at[i] - at[i - 1]);
        }
        for c in &out {
            assert_eq!(c.start - c.ready, lindley[c.token as usize], "customer {}", c.token);
        }
        let w = mean(out.iter().map(|c| (c.start - c.ready) as f64));
        let theory = rho * s_ns / (2.0 * (1.0 - rho));
        assert!((w / theory - 1.0).abs() < 0.03, "rho {rho}: mean wait {w:.0} ns, M/D/1 {theory:.0} ns");
    }
}

#[test]
fn two_classes_under_strict_priority_match_cobham() {
    // Reference: Cobham's non-preemptive priority M/G/1 formula, W_k = W0 / ((1 -
    // sigma_{k-1}) (1 - sigma_k)) with W0 = sum lambda_i E[S_i^2] / 2; here host reads
    // (S1 = 50 us sense + transfer) over host programs (S2 = transfer + 200 us), loads 0.2
    // and 0.4. Sample size: over 8 seeds at n = 800,000 the standard deviation of the
    // relative error of the class means was 0.3% (reads) and 0.85% (programs), so 3% is
    // more than 3.5 of them (at a total load of 0.7 it was 1.5% for programs: too noisy).
    let s1 = 50_000.0 + XFER_NS;
    let s2 = XFER_NS + 200_000.0;
    let (l1, l2) = (0.2 / s1, 0.4 / s2);
    let w0 = (l1 * s1 * s1 + l2 * s2 * s2) / 2.0;
    let w1 = w0 / (1.0 - 0.2);
    let w2 = w0 / ((1.0 - 0.2) * (1.0 - 0.6));
    let n = 800_000;
    let mut q =
        Queued::new(times(50.0, 200.0, 1500.0), params(1, 1, CHANNEL_MB_PER_S, None), Box::new(Priority::default()));
    let mut arrivals = Poisson::new(5, l1 + l2);
    let mut class = rand_pcg::Pcg64::new(0xcafe, 0xf00d);
    let mut is_read = Vec::with_capacity(n as usize);
    let out = open_loop(&mut q, n, |_| {
        use rand::Rng;
        let r = class.gen_bool(l1 / (l1 + l2));
        is_read.push(r);
        (arrivals.next(), if r { read(0, BYTES, Cause::Host) } else { program(0, BYTES, Cause::Host) })
    });
    let wait =
        |want: bool| mean(out.iter().filter(|c| is_read[c.token as usize] == want).map(|c| (c.start - c.ready) as f64));
    let (m1, m2) = (wait(true), wait(false));
    assert!((m1 / w1 - 1.0).abs() < 0.03, "reads: {m1:.0} ns, Cobham {w1:.0} ns");
    assert!((m2 / w2 - 1.0).abs() < 0.03, "programs: {m2:.0} ns, Cobham {w2:.0} ns");
}
