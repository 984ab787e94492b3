//! Program/erase suspension: the die state machine by hand-computed timelines, and the
//! effect on read latency (Wu & He, FAST'12: suspension cuts read latency under writes).

use super::*;

/// One die, 1 ms programs, 3 ms erases, 50 us reads, a 999 ns transfer (4096 B at 4096 MB/s).
fn die(suspension: Option<Suspension>) -> Queued {
    Queued::new(times(50.0, 1000.0, 3000.0), params(1, 1, 4096.0, suspension), Box::new(Priority::default()))
}

/// Advance to `t`, then submit a host read at `t` with `token`.
fn read_at(q: &mut Queued, t: u64, token: u32, out: &mut Vec<Completion>) {
    while let Some(e) = q.next_event_time().filter(|&e| e <= t) {
        q.advance(e, out);
    }
    q.advance(t, out);
    q.submit(&read(0, 4096, Cause::Host), t, token);
}

#[test]
fn reads_suspend_a_program_up_to_the_cap_then_wait() {
    // Reference: the suspension rule, timed by hand. The program's data is in at 999 ns and
    // its array ends at 1,000,999. Each of the first two reads (at 100 us, 300 us) costs the
    // program suspend (20 us) + read (50,999) + resume (20 us) = 90,999 ns; the third (at
    // 500 us) finds the cap reached and waits for the program, which ends at 1,000,999 +
    // 2 x 90,999 = 1,182,997. A read 50 us before the end of another program finds less
    // than the minimum remaining and waits too.
    let mut q = die(Some(Suspension::default()));
    let mut out = Vec::new();
    q.submit(&program(0, 4096, Cause::Gc), 0, 9);
    read_at(&mut q, 100_000, 1, &mut out);
    read_at(&mut q, 300_000, 2, &mut out);
    read_at(&mut q, 500_000, 3, &mut out);
    out.extend(drain(&mut q));
    let finish = |t: u32| out.iter().find(|c| c.token == t).unwrap().finish;
    assert_eq!(finish(1), 100_000 + 20_000 + 50_999);
    assert_eq!(finish(2), 300_000 + 20_000 + 50_999);
    assert_eq!(finish(9), 1_182_997);
    assert_eq!(finish(3), 1_182_997 + 50_999);
    assert_eq!(q.stats().program_suspensions, 2);

    let end = q.now() + 999 + 1_000_000;
    q.submit(&program(0, 4096, Cause::Gc), q.now(), 10);
    read_at(&mut q, end - 50_000, 4, &mut out);
    out.extend(drain(&mut q));
    assert_eq!(out.last().unwrap().finish, end + 50_999, "too little left to suspend");
    assert_eq!(q.stats().program_suspensions, 2);
}

#[test]
fn one_suspension_serves_at_most_its_reads_and_erases_suspend_too() {
    // Reference: the suspension rule, timed by hand. Three reads at once during an erase
    // (3 ms, from 0): the erase suspends at 1 ms (30 us), two reads run back to back
    // (50,999 each), the erase resumes (30 us) with 2 ms left; with a cap of one suspension
    // per operation the third read waits for the erase.
    let one = Suspension { max_per_operation: 1, ..Suspension::default() };
    let mut q = die(Some(one));
    let mut out = Vec::new();
    q.submit(&Transaction::erase(0, 0, BitMode::Slc, Cause::Gc), 0, 9);
    for token in 1..=3 {
        read_at(&mut q, 1_000_000, token, &mut out);
    }
    out.extend(drain(&mut q));
    let finish = |t: u32| out.iter().find(|c| c.token == t).unwrap().finish;
    let resumed_end = 1_000_000 + 30_000 + 2 * 50_999 + 30_000 + 2_000_000;
    assert_eq!((finish(1), finish(2)), (1_030_000 + 50_999, 1_030_000 + 2 * 50_999));
    assert_eq!(finish(9), resumed_end);
    assert_eq!(finish(3), resumed_end + 50_999);
    assert_eq!(q.stats().erase_suspensions, 1);
}

/// Mean host-read latency (arrival to finish) under a background stream that keeps the die
/// busy (two GC operations always queued: programs, every eighth an erase), and the
/// engine's counters.
fn reads_under_writes(suspension: Option<Suspension>) -> (f64, QueuedStats) {
    const READS: u32 = 5_000;
    let mut q = die(suspension);
    let bg = |i: u32| {
        if i % 8 == 7 {
            Transaction::erase(0, 0, BitMode::Slc, Cause::Gc)
        } else {
            program(0, 4096, Cause::Gc)
        }
    };
    let mut bg_next = READS;
    for _ in 0..2 {
        q.submit(&bg(bg_next), 0, bg_next);
        bg_next += 1;
    }
    // Reads at one per 2 ms on average, well below what the die could serve alone.
    let mut arrivals = Poisson::new(17, 1.0 / 2_000_000.0);
    let (mut next_read, mut reads) = (arrivals.next(), 0);
    let (mut total, mut out) = (0u64, Vec::new());
    while reads < READS || q.next_event_time().is_some() {
        let t = q.next_event_time().map_or(next_read, |e| if reads < READS { e.min(next_read) } else { e });
        q.advance(t, &mut out);
        for c in out.drain(..) {
            if c.token < READS {
                total += c.finish - c.ready;
            } else if reads < READS {
                q.submit(&bg(bg_next), c.finish, bg_next);
                bg_next += 1;
            }
        }
        if reads < READS && t == next_read {
            q.submit(&read(0, 4096, Cause::Host), t, reads);
            reads += 1;
            next_read = arrivals.next();
        }
    }
    (total as f64 / READS as f64, q.stats())
}

#[test]
fn suspension_fires_under_writes_and_cuts_read_latency() {
    // Reference: Wu & He (FAST'12) -- reads stuck behind programs and erases wait for most
    // of their array time, and suspension cuts that wait. Without it a read waits about the
    // residual of a 1-3 ms operation (hundreds of us); with it, a suspend overhead plus
    // whatever reads are ahead. The counts must be non-zero (MQSim shipped suspension
    // unreachable) and zero with it off.
    let (off, s_off) = reads_under_writes(None);
    let (on, s_on) = reads_under_writes(Some(Suspension::default()));
    assert_eq!(s_off.program_suspensions + s_off.erase_suspensions, 0);
    assert!(s_on.program_suspensions > 0 && s_on.erase_suspensions > 0, "{s_on:?}");
    assert!(on < 0.5 * off, "mean read latency {on:.0} ns with suspension, {off:.0} ns without");
    assert!(s_on.host_behind_background_ns < s_off.host_behind_background_ns);
}
