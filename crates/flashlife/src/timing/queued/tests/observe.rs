//! Counters, the caller-facing die queries, urgency, the GC ratio and channel arbitration,
//! each against a hand-computed timeline or an identity with an independent count.

use rand::{Rng, SeedableRng};

use super::*;

fn erase(die: u32) -> Transaction {
    Transaction::erase(die, 0, BitMode::Slc, Cause::Gc)
}

/// Advance through every event due by `t`, then to `t`.
fn advance_to(q: &mut Queued, t: u64, out: &mut Vec<Completion>) {
    while let Some(e) = q.next_event_time().filter(|&e| e <= t) {
        q.advance(e, out);
    }
    q.advance(t, out);
}

fn by_token(out: &[Completion], token: u32) -> Completion {
    *out.iter().find(|c| c.token == token).unwrap()
}

#[test]
fn time_weighted_depth_integrates_the_queue_lengths() {
    // Reference: the definition, integrated here from outside: the queue lengths the engine
    // shows (`queue_len`) are constant between event times, so summing length x time over
    // the steps gives each class's integral. The engine keeps it another way (the waits of
    // dequeued transactions, plus those still open at a snapshot), so both the snapshots
    // taken mid-run, with queues full, and the one at the end are checked against it.
    let dies = 3;
    let mut q = Queued::new(times(50.0, 200.0, 1500.0), params(dies, 1, 400.0, None), Box::new(Priority::default()));
    let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
    let mut arrivals = Poisson::new(4, 1.0 / 80_000.0);
    for token in 0..20_000 {
        let die = rng.gen_range(0..dies);
        let tx = match rng.gen_range(0..4) {
            0 => read(die, 4096, Cause::Host),
            1 => program(die, 4096, Cause::Host),
            2 => read(die, 4096, Cause::Gc),
            _ => program(die, 4096, Cause::Reclaim),
        };
        q.submit(&tx, arrivals.next(), token);
    }
    let mut area = [0u128; CLASSES];
    let (mut out, mut last, mut steps, mut checked) = (Vec::new(), 0u64, 0u64, 0);
    while let Some(e) = q.next_event_time() {
        for c in Class::ALL {
            let len: u64 = (0..dies).map(|d| q.queue_len(d, c) as u64).sum();
            area[c as usize] += (len * (e - last)) as u128;
        }
        q.advance(e, &mut out);
        last = e;
        steps += 1;
        let waiting = (0..dies).any(|d| Class::ALL.iter().all(|&c| q.queue_len(d, c) > 0));
        if steps % 997 == 0 || q.next_event_time().is_none() || (waiting && checked < 20) {
            checked += u32::from(waiting);
            let s = q.stats();
            for c in Class::ALL {
                let got = s.queue_depth[c as usize].mean * s.elapsed_ns as f64;
                let want = area[c as usize] as f64;
                assert!((got - want).abs() <= 1e-9 * want.max(1.0), "{c:?} at {e}: {got} vs {want}");
            }
        }
    }
    assert!(checked > 0, "some snapshot was taken with every class waiting");
    let s = q.stats();
    for c in Class::ALL {
        assert!(s.queue_depth[c as usize].max > 1 && area[c as usize] > 0);
    }
}

#[test]
fn simultaneous_arrivals_are_queued_before_the_die_picks() {
    // Reference: the contract (everything ready at an instant is queued before any pick).
    // A GC read submitted before five host reads for the same instant goes last under the
    // priority policy, and all six were waiting at once.
    let mut q = Queued::new(times(50.0, 200.0, 1500.0), params(1, 1, 4096.0, None), Box::new(Priority::default()));
    q.submit(&read(0, 4096, Cause::Gc), 0, 0);
    for token in 1..=5 {
        q.submit(&read(0, 4096, Cause::Host), 0, token);
    }
    let out = drain(&mut q);
    assert_eq!(out.last().unwrap().token, 0);
    let s = q.stats();
    assert_eq!((s.queue_depth[0].max, s.queue_depth[2].max), (5, 1));
}

#[test]
fn host_wait_behind_background_and_the_die_queries() {
    // Reference: a timeline by hand. A GC erase runs 0..1.5 ms; a host read ready at 0.5 ms
    // waits 1 ms, all of it behind background work; the GC program submitted when the
    // erase completes (the follow-up pattern) starts at that instant, behind the read.
    let mut q = Queued::new(times(50.0, 200.0, 1500.0), params(2, 1, 4096.0, None), Box::new(Priority::default()));
    let mut out = Vec::new();
    q.submit(&erase(0), 0, 0);
    advance_to(&mut q, 500_000, &mut out);
    q.submit(&read(0, 4096, Cause::Host), 500_000, 1);
    advance_to(&mut q, 600_000, &mut out);
    assert!(!q.is_idle(0) && q.is_idle(1));
    assert_eq!((q.queue_len(0, Class::HostRead), q.queue_len(0, Class::Background)), (1, 0));
    advance_to(&mut q, 1_500_000, &mut out);
    assert_eq!(out.iter().map(|c| c.token).collect::<Vec<_>>(), [0]);
    q.submit(&program(0, 4096, Cause::Gc), out[0].finish, 2);
    out.extend(drain(&mut q));
    let (rd, pg) = (by_token(&out, 1), by_token(&out, 2));
    assert_eq!((rd.start, rd.behind_background_ns), (1_500_000, 1_000_000));
    assert_eq!((pg.ready, pg.start), (1_500_000, rd.finish), "the follow-up waited for the read only");
    let s = q.stats();
    assert_eq!(s.host_behind_background_ns, 1_000_000);
    assert_eq!(s.die_background_busy_ns[0], 1_500_000 + 999 + 200_000);
    assert_eq!(s.die_busy_ns[0], 1_500_000 + 50_999 + 999 + 200_000);
    assert_eq!((s.die_busy_ns[1], s.channel_busy_ns[0]), (0, 2 * 999));
    assert!(q.is_idle(0));
}

/// Tokens in the order their operations started.
fn start_order(out: &[Completion]) -> Vec<u32> {
    let mut v: Vec<_> = out.iter().map(|c| (c.start, c.token)).collect();
    v.sort();
    v.into_iter().map(|(_, t)| t).collect()
}

#[test]
fn an_urgent_die_serves_background_first_and_the_ratio_interleaves() {
    // Reference: the policy rules (module docs of `policy`), observed through the engine.
    // Behind an erase: host reads 1-2 and GC reads 3-4. Urgent: GC first; not urgent: host
    // first; with a 1:1 ratio: alternating.
    let cases: [(bool, Option<GcRatio>, [u32; 4]); 3] = [
        (true, None, [3, 4, 1, 2]),
        (false, None, [1, 2, 3, 4]),
        (false, Some(GcRatio { background: 1, host: 1 }), [1, 3, 2, 4]),
    ];
    for (urgent, gc_ratio, want) in cases {
        let mut q = Queued::new(
            times(50.0, 200.0, 1500.0),
            params(1, 1, 4096.0, None),
            Box::new(Priority { gc_ratio, near_reserve: NearReserve::First, chore_ratio: None }),
        );
        q.submit(&erase(0), 0, 0);
        for token in 1..=4 {
            q.submit(&read(0, 4096, if token <= 2 { Cause::Host } else { Cause::Gc }), 1000, token);
        }
        q.set_urgent(0, urgent);
        let out = drain(&mut q);
        assert_eq!(start_order(&out)[1..], want, "urgent {urgent}, ratio {gc_ratio:?}");
    }
}

#[test]
fn a_die_urgent_for_writes_still_serves_host_reads_first() {
    // Reference: `Queued::set_urgent_writes` (a die short of free blocks: background work
    // goes before host writes, which use them, not before host reads). Behind an erase: host
    // read 1, GC read 2, host write 3: read 1, then GC 2 ahead of the write; without the flag
    // the write goes before GC.
    for (urgent_writes, want) in [(true, [1, 2, 3]), (false, [1, 3, 2])] {
        let mut q = Queued::new(times(50.0, 200.0, 1500.0), params(1, 1, 4096.0, None), Box::new(Priority::default()));
        q.submit(&erase(0), 0, 0);
        q.submit(&read(0, 4096, Cause::Host), 1000, 1);
        q.submit(&read(0, 4096, Cause::Gc), 1000, 2);
        q.submit(&program(0, 4096, Cause::Host), 1000, 3);
        q.set_urgent_writes(0, urgent_writes);
        let out = drain(&mut q);
        assert_eq!(start_order(&out)[1..], want, "urgent for writes {urgent_writes}");
    }
}

#[test]
fn the_channel_drains_sensed_data_before_starting_programs() {
    // Reference: the arbitration rule of the module docs, timed by hand. Three dies share a
    // 100 MB/s channel (40,960 ns per 4 KiB). Die 2's program holds the bus until 40,960;
    // die 0's read senses 0..25,000 and waits; die 1 asks for the bus at 30,000 for a
    // program. At 40,960 die 0's data goes first, then die 1's program at 81,920. A host
    // read for die 1 at 35,000 starts at once under the priority policy (a die waiting for
    // the bus is idle; it re-picks on each arrival).
    let mut q = Queued::new(times(25.0, 200.0, 1500.0), params(3, 1, 100.0, None), Box::new(Priority::default()));
    let mut out = Vec::new();
    q.submit(&program(2, 4096, Cause::Host), 0, 0);
    q.submit(&read(0, 4096, Cause::Host), 0, 1);
    advance_to(&mut q, 30_000, &mut out);
    q.submit(&program(1, 4096, Cause::Host), 30_000, 2);
    advance_to(&mut q, 35_000, &mut out);
    q.submit(&read(1, 0, Cause::Host), 35_000, 3);
    out.extend(drain(&mut q));
    assert_eq!(by_token(&out, 1).finish, 81_920);
    assert_eq!(by_token(&out, 3).start, 35_000);
    assert_eq!(by_token(&out, 2).start, 81_920);
    assert_eq!(q.policy(), "priority");
}

/// Invariant: `advance_to_completion` is a loop of `advance(next_event_time())` that stops
/// at the first event time with completions, or before an event past its limit. Reference:
/// the same work advanced event by event, with the same follow-ups (a program submitted on
/// another die as each read completes, at its finish) made at the same stops.
#[test]
fn advancing_to_a_completion_skips_only_the_event_times_that_complete_nothing() {
    let setup = || {
        let mut q = Queued::new(
            times(50.0, 600.0, 2000.0),
            params(4, 2, 400.0, Some(Suspension::default())),
            Box::new(Priority::default()),
        );
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        for token in 0..400 {
            let die = rng.gen_range(0..4);
            let tx = match rng.gen_range(0..4) {
                0 => read(die, 4096, Cause::Host),
                1 => read(die, 4096, Cause::Gc),
                2 => program(die, 4096, Cause::Gc),
                _ => erase(die),
            };
            q.submit(&tx, rng.gen_range(0..20_000_000), token);
        }
        q
    };
    // Reads (tokens below 400 are the set-up's) are followed by a program on the next die.
    let react = |q: &mut Queued, out: &[Completion], next: &mut u32| {
        for c in out.iter().filter(|c| c.token < 400 && c.token % 4 < 2) {
            q.submit(&program((c.token + 1) % 4, 4096, Cause::Gc), c.finish, *next);
            *next += 1;
        }
    };
    for limit in [u64::MAX, 5_000_000] {
        let (mut r, mut next) = (setup(), 400);
        let mut stops = Vec::new();
        let mut steps = 0;
        while let Some(t) = r.next_event_time() {
            let mut out = Vec::new();
            r.advance(t, &mut out);
            steps += 1;
            let past = r.next_event_time().is_some_and(|n| n > limit);
            if !out.is_empty() || past {
                stops.push((r.now(), out.clone()));
                react(&mut r, &out, &mut next);
            }
            if past {
                break;
            }
        }
        let (mut q, mut next) = (setup(), 400);
        let mut got = Vec::new();
        while got.len() < stops.len() {
            let mut out = Vec::new();
            assert!(q.advance_to_completion(limit, &mut out), "more to advance to");
            got.push((q.now(), out.clone()));
            react(&mut q, &out, &mut next);
        }
        assert!(steps > stops.len() + 100, "many event times complete nothing: {steps} steps, {} stops", stops.len());
        assert_eq!(got, stops, "limit {limit}");
        assert_eq!(q.next_event_time(), r.next_event_time());
    }
}

#[test]
fn host_waits_behind_the_watched_cause_are_counted_one_by_one() {
    // Reference: a timeline by hand. Die 0: a migration read (the watched cause) senses
    // 0..50 us and crosses the channel until 50.999 us; a host read ready at 10 us waits
    // 40.999 us for it. Die 1: a GC erase runs 0..1.5 ms; a host read ready at 0.1 ms waits
    // 1.4 ms behind it, background work but not the watched cause. A last host read finds
    // die 0 free. Unwatched, the same runs count no wait.
    for watch in [true, false] {
        let mut q = Queued::new(times(50.0, 200.0, 1500.0), params(2, 1, 4096.0, None), Box::new(Priority::default()));
        if watch {
            q.watch(Cause::Migration);
        }
        q.submit(&read(0, 4096, Cause::Migration), 0, 0);
        q.submit(&read(0, 4096, Cause::Host), 10_000, 1);
        q.submit(&erase(1), 0, 2);
        q.submit(&read(1, 4096, Cause::Host), 100_000, 3);
        q.submit(&read(0, 4096, Cause::Host), 300_000, 4);
        let out = drain(&mut q);
        assert_eq!(by_token(&out, 1).start, 50_999);
        assert_eq!(by_token(&out, 3).start, 1_500_000);
        let s = q.stats();
        assert_eq!(s.host_behind_background_ns, 40_999 + 1_400_000);
        let expect = if watch { (1, 40_999) } else { (0, 0) };
        assert_eq!(q.waits_behind_watched(), expect);
        assert_eq!((s.host_waits_behind_watched, s.max_host_wait_behind_watched_ns), expect);
    }
}
