//! The adapter's own checks: dependencies recovered from values, a program waiting for its
//! block's erase, requests finishing with their work, and values that stay near real time.

use super::*;
use crate::config::FlashConfig;
use crate::flash::{ArrayTimes, BitMode};
use crate::stats::Cause;
use crate::timing::queued::{Priority, QueuedParams};

/// Two dies on two channels, SLC 50 / 1000 / 3000 us, 4096 B pages at 4096 MB/s (999 ns).
fn sched() -> QueuedScheduler {
    let mut cfg = FlashConfig::default();
    (cfg.slc.read_us, cfg.slc.program_us, cfg.slc.erase_us) = (50.0, 1000.0, 3000.0);
    let params = QueuedParams {
        link_mb_per_s: 4096.0,
        command_overhead_us: 0.0,
        channel_mb_per_s: 4096.0,
        channels: 2,
        die_channel: vec![0, 1],
        suspension: None,
        multi_plane: None,
        dram_ns: 0,
    };
    let engine = Queued::new(ArrayTimes::new(&cfg), params, Box::new(Priority::default()));
    QueuedScheduler::new(engine, 16, 2, true, false, 1)
}

fn read(die: u32, class: Cause) -> Transaction {
    Transaction::read(die, die * 8, 0, BitMode::Slc, 4096, class)
}

/// Advance event by event until nothing is in flight; the requests finished.
fn drain(s: &mut QueuedScheduler) -> Vec<Finished> {
    let mut out = Vec::new();
    while let Some(t) = s.next_event_time() {
        s.advance(t, &mut out);
    }
    out
}

#[test]
fn a_value_passed_back_is_a_dependency_and_a_time_is_not() {
    let mut s = sched();
    s.begin_request(0);
    let r = s.submit(&read(0, Cause::Host), Done::at(0));
    // The program of what was read waits for the read, on the other die.
    s.submit(&Transaction::program(1, 9, 0, BitMode::Slc, 4096, Cause::Host), r);
    let mut out = Vec::new();
    s.end_request(0, &mut out);
    let done = drain(&mut s);
    let x = 999;
    assert_eq!(
        done,
        vec![Finished {
            request: 0,
            finish: 50_000 + x + x + 1_000_000,
            behind_background_ns: 0,
            hard_threshold: false
        }]
    );
}

#[test]
fn a_program_waits_for_its_blocks_erase_and_its_die_goes_urgent() {
    let mut s = sched();
    s.submit(&Transaction::erase(0, 3, BitMode::Slc, Cause::Gc), Done::at(0));
    s.begin_request(0);
    s.submit(&Transaction::program(0, 3, 0, BitMode::Slc, 4096, Cause::Host), Done::at(0));
    let mut out = Vec::new();
    s.end_request(0, &mut out);
    let done = drain(&mut s);
    assert_eq!(done[0].finish, 3_000_000 + 999 + 1_000_000, "the program started before its block was erased");
    assert!(s.counts.hard_threshold_episodes >= 1);
}

/// A long chain of dependent work on one die does not drag the values of unrelated work
/// ahead with it: an unrelated read's value is its own estimate, and read back later as a
/// time (once forgotten) it holds nothing back.
#[test]
fn values_of_unrelated_work_stay_near_real_time() {
    let mut s = sched();
    let mut d = Done::START;
    for _ in 0..1000 {
        d = s.submit(&read(0, Cause::Gc), d);
    }
    let v = d.0;
    assert!(v > 1000 * 50_000, "the chain's estimate covers its length: {v}");
    let other = s.submit(&read(1, Cause::Gc), Done::at(0)).0;
    assert!(other < 100_000, "an unrelated read's value {other} ns was dragged ahead");
}

/// A request that waits for work not its own (`wait_for`) finishes only when that has.
#[test]
fn wait_for_holds_a_request_until_the_named_work_finishes() {
    let mut s = sched();
    s.set_detached(true);
    s.begin_request(0);
    let buffered = s.submit(&Transaction::program(0, 1, 0, BitMode::Slc, 4096, Cause::Host), Done::at(0));
    s.set_detached(false);
    let mut out = Vec::new();
    s.end_request(0, &mut out);
    assert_eq!(out.len(), 1, "a detached program is not the request's: it finished at once");
    s.begin_request(1);
    s.wait_for(buffered);
    s.end_request(0, &mut out);
    assert_eq!(out.len(), 1);
    let done = drain(&mut s);
    assert_eq!(
        done,
        vec![Finished { request: 1, finish: 999 + 1_000_000, behind_background_ns: 0, hard_threshold: false }]
    );
}

/// An encoder run (`Op::Encode`) waits for the work it is given the value of, lasts half a
/// read time, and holds no die: a read on the same die runs beside it.
#[test]
fn an_encoder_run_is_a_dependency_that_occupies_no_die() {
    let mut s = sched();
    s.begin_request(0);
    let r = s.submit(&read(0, Cause::SecondWrite), Done::at(0));
    let e = s.submit(&Transaction::encode(0, 0, 0, BitMode::Slc, Cause::SecondWrite), r);
    s.submit(&Transaction::program(1, 9, 0, BitMode::Slc, 4096, Cause::SecondWrite), e);
    let mut out = Vec::new();
    s.end_request(0, &mut out);
    let x = 999;
    let read_done = 50_000 + x;
    s.begin_request(1);
    // A host read on die 0, ready (a plain, even time) just after the first read: were the
    // encoder the die's, it would wait for it.
    s.submit(&read(0, Cause::Host), Done::at(read_done + 1));
    s.end_request(1, &mut out);
    let done = drain(&mut s);
    let finish = |req: u32| done.iter().find(|f| f.request == req).expect("finished").finish;
    assert_eq!(finish(0), read_done + 25_000 + x + 1_000_000, "read, then encode, then program");
    assert_eq!(finish(1), read_done + 1 + 50_000 + x, "the encoder held die 0 for no time");
}

/// A pool one block from its reserve puts its die's cleaning first: a hard-threshold episode
/// in which no host work is held yet. A host program waiting for its block's erase is one in
/// which host work is held, counted apart; each is counted once per rise, however long.
#[test]
fn host_blocked_episodes_are_counted_among_the_hard_thresholds() {
    let mut s = sched();
    s.cleaning_urgent(0, true);
    s.cleaning_urgent(0, true); // no change: the same episode
    s.cleaning_urgent(0, false);
    s.cleaning_urgent(0, true);
    s.cleaning_urgent(1, true);
    assert_eq!((s.counts.hard_threshold_episodes, s.counts.host_blocked_episodes), (3, 0));
    // Die 1 is no longer urgent; a host program there now waits for its block's erase.
    s.cleaning_urgent(1, false);
    s.submit(&Transaction::erase(1, 3, BitMode::Slc, Cause::Gc), Done::at(0));
    s.begin_request(0);
    s.submit(&Transaction::program(1, 3, 0, BitMode::Slc, 4096, Cause::Host), Done::at(0));
    let mut out = Vec::new();
    s.end_request(0, &mut out);
    drain(&mut s);
    assert_eq!((s.counts.hard_threshold_episodes, s.counts.host_blocked_episodes), (4, 1));
}

/// Invariant: `advance_quiet` goes from event to event exactly as a loop of `advance`s to
/// each event time would, and hands control back at the first event at which a request
/// finishes, a die is listed for background work, or the next event is past its limit.
#[test]
fn advancing_quietly_stops_where_the_run_loop_has_something_to_answer() {
    // Two requests of chained work (a read, then a program of its data on the other die)
    // and a background read on a die that owes cleaning.
    let setup = || {
        let mut s = sched();
        let mut out = Vec::new();
        for slot in 0..2 {
            s.begin_request(slot);
            let r = s.submit(&read(slot, Cause::Host), Done::at(0));
            s.submit(&Transaction::program(1 - slot, 9 + slot, 0, BitMode::Slc, 4096, Cause::Host), r);
            s.end_request(0, &mut out);
        }
        s.cleaning_owed(0);
        assert_eq!(s.background_wanted(), Some(0), "die 0 owes cleaning and has no stock");
        s.submit(&read(0, Cause::Gc), Done::at(0));
        s.background_stepped(0, true);
        s
    };
    // Reference: event by event, noting the clock at each stop the loop would answer.
    // The run loop answers a listed die by having the FTL step it (here: it owes no more).
    let answer = |s: &mut QueuedScheduler| {
        while let Some(die) = s.background_wanted() {
            s.background_stepped(die, false);
        }
    };
    let mut s = setup();
    let mut events = Vec::new();
    while let Some(t) = s.next_event_time() {
        let mut out = Vec::new();
        s.advance(t, &mut out);
        events.push((t, out.len(), s.stock.any_listed()));
        answer(&mut s);
    }
    let stops: Vec<u64> = events.iter().filter(|&&(_, n, listed)| n > 0 || listed).map(|e| e.0).collect();
    assert!(events.len() > stops.len() + 2, "most events need no answer: {events:?}");
    // Quietly, with no limit: control comes back exactly at those stops.
    let mut q = setup();
    let (mut got, mut finished) = (Vec::new(), Vec::new());
    while q.next_event_time().is_some() {
        let mut out = Vec::new();
        q.advance_quiet(u64::MAX, &mut out);
        got.push(q.now());
        finished.extend(out);
        answer(&mut q);
    }
    assert_eq!(got, stops);
    let mut reference = setup();
    assert_eq!(finished, drain(&mut reference), "the same requests finish at the same times");
    // A limit before the next event but one: one event, then back.
    let mut l = setup();
    let first = l.next_event_time().unwrap();
    let mut out = Vec::new();
    l.advance_quiet(first, &mut out);
    assert_eq!(l.now(), first);
}

/// A join waits for both inputs, whichever really finishes later: here the program whose
/// estimate is the earlier (made without its die's queue: ten programs ahead of it) ends at
/// about 11 ms, the erase estimated later at 3 ms. `Done::later` of the values would take the
/// erase and start the dependant 8 ms early, as a write-back buffer's pages did (every page
/// admitted at once, hundreds of programs queued a die).
#[test]
fn a_join_waits_for_the_input_that_really_finishes_later() {
    let mut s = sched();
    let program = |page| Transaction::program(0, 1, page, BitMode::Slc, 4096, Cause::Host);
    for page in 0..10 {
        s.submit(&program(page), Done::at(0));
    }
    let late = s.submit(&program(10), Done::at(0));
    let erase = s.submit(&Transaction::erase(1, 12, BitMode::Slc, Cause::Host), Done::at(0));
    assert!(late.as_time() < erase.as_time(), "the premise: the later estimate is the erase's");
    let both = s.join(late, erase);
    assert_ne!(both, late);
    assert_ne!(both, erase);
    s.begin_request(0);
    s.submit(&read(1, Cause::Host), both);
    let mut out = Vec::new();
    s.end_request(0, &mut out);
    let done = drain(&mut s);
    // Eleven programs of 1 ms, each after its 999 ns transfer, then the read: sense and out.
    let program_end = 11 * (999 + 1_000_000);
    assert_eq!(done[0].finish, program_end + 50_000 + 999);
    // Nothing to join: a time already past and a pending program is the program; two
    // finished transactions, the one that finished later.
    let next = s.submit(&program(11), Done::at(0));
    assert_eq!(s.join(Done::at(0), next), next);
    drain(&mut s);
    assert_eq!(s.join(late, erase), late, "both finished: the program, at 11 ms");
    assert_eq!(s.join(erase, late), late);
}

/// A host page joined with background work on a die (a write-back buffer's space held by a
/// failed page's retry) waits on background work there: the die goes urgent, so the
/// background work is not left behind the host's own queue.
#[test]
fn a_join_with_background_work_holds_its_die_urgent() {
    let mut s = sched();
    let host = |die, page| Transaction::program(die, die * 8 + 1, page, BitMode::Slc, 4096, Cause::Host);
    for page in 0..4 {
        s.submit(&host(0, page), Done::at(0));
    }
    let retry = s.submit(&Transaction::program(0, 2, 0, BitMode::Slc, 4096, Cause::BadBlock), Done::at(0));
    let data = s.submit(&Transaction::host(4096), Done::at(0));
    let room = s.join(data, retry);
    let before = s.counts.host_blocked_episodes;
    s.begin_request(0);
    // The page waiting for that room goes to the other die.
    s.submit(&host(1, 0), room);
    s.wait_for(room);
    let mut out = Vec::new();
    s.end_request(0, &mut out);
    assert!(s.counts.host_blocked_episodes > before, "the host program waits on background work");
    let done = drain(&mut s);
    // The die picks once everything is queued, urgent by then: the retry first (not after
    // the four host programs queued before it, 5 steps), then the waiting program on the
    // other die.
    let step = 999 + 1_000_000;
    assert_eq!(done[0].finish, 2 * step, "{done:?}");
}
