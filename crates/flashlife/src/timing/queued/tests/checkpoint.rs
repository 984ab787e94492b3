//! Checkpoints: an engine serialised mid-run (work queued, running and suspended, events
//! pending, arrivals not yet handled) and restored goes on exactly as the original does.
//! Reference: the original engine itself, advanced through the same submissions.

use rand::{Rng, SeedableRng};

use super::*;

/// Submit one random transaction (host reads and writes, GC work, host transfers), ready
/// now or a little later, then advance to the next event or a little later, whichever first.
fn step(q: &mut Queued, rng: &mut rand_pcg::Pcg64, token: u32, out: &mut Vec<Completion>) {
    let die = rng.gen_range(0..4);
    let class = if rng.gen_bool(0.6) { Cause::Host } else { Cause::Gc };
    let tx = match rng.gen_range(0..10) {
        0..=3 => Transaction::read(die, 0, 0, BitMode::Slc, 4096, class),
        4..=6 => Transaction::program(die, 0, 0, BitMode::Slc, 4096, class),
        7 => Transaction::erase(die, 0, BitMode::Slc, class),
        _ => Transaction::host(4096),
    };
    let ready = if rng.gen_bool(0.5) { q.now() } else { q.now() + rng.gen_range(0..200_000) };
    q.submit(&tx, ready, token);
    let until = q.now() + rng.gen_range(0..150_000);
    match q.next_event_time() {
        Some(e) if e <= until => q.advance(e, out),
        _ => q.advance(until, out),
    }
    // Leave arrivals at the clock unhandled now and then, as the run loop does between steps.
    if rng.gen_bool(0.3) {
        q.submit(&Transaction::read(die, 0, 0, BitMode::Slc, 4096, Cause::Host), q.now(), token | 1 << 31);
    }
}

fn engine(policy: Box<dyn Policy>) -> Queued {
    Queued::new(times(50.0, 1000.0, 3000.0), params(4, 2, 400.0, Some(Suspension::default())), policy)
}

#[test]
fn an_engine_restored_mid_run_completes_exactly_as_the_original() {
    let policies: [fn() -> Box<dyn Policy>; 2] = [
        || Box::new(Fifo),
        || {
            Box::new(Priority {
                gc_ratio: Some(GcRatio { background: 1, host: 3 }),
                near_reserve: NearReserve::First,
                chore_ratio: None,
            })
        },
    ];
    for policy in policies {
        let mut q = engine(policy());
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        let mut before = Vec::new();
        // Run until the engine holds every kind of state at once, then checkpoint it there.
        let mut token = 0;
        loop {
            step(&mut q, &mut rng, token, &mut before);
            token += 1;
            let suspended = q.dies.iter().any(|d| d.suspended != slab::NONE);
            let queued = (0..4).any(|d| q.queues.mask(d) != 0);
            if token >= 300 && suspended && queued && !q.ready_now.is_empty() && q.link.cur != slab::NONE {
                break;
            }
            assert!(token < 100_000, "the engine never held work of every kind at once");
        }
        let bytes = postcard::to_stdvec(&q).unwrap();
        let mut restored: Queued = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(restored.policy(), q.policy());
        assert_eq!(restored.now(), q.now());
        assert_eq!(restored.next_event_time(), q.next_event_time());
        assert_eq!(restored.stats(), q.stats());

        // Both go on through the same submissions, then drain.
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let (mut ra, mut rb) = (rng.clone(), rng);
        for t in token..token + 3000 {
            step(&mut q, &mut ra, t, &mut a);
            step(&mut restored, &mut rb, t, &mut b);
        }
        a.extend(drain(&mut q));
        b.extend(drain(&mut restored));
        assert!(a.len() > 3000, "{} completions", a.len());
        assert_eq!(a, b, "{}: completions differ after the restore", q.policy());
        assert_eq!(q.stats(), restored.stats());
        assert!(q.stats().program_suspensions + q.stats().erase_suspensions > 0);
        assert_eq!(q.records(), restored.records());
    }
}
