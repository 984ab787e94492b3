//! Against the reservation scheduler: the same per-operation costs.

use rand::{Rng, SeedableRng};

use super::*;
use crate::timing::{Done, Reservation, Scheduler};

/// A drive with per-page-type TLC times, so page types are exercised.
fn config() -> FlashConfig {
    let mut cfg = FlashConfig::default();
    cfg.tlc.read_us_by_page_type = vec![60.0, 90.0, 130.0];
    cfg.tlc.program_us_by_page_type = vec![500.0, 1500.0, 2500.0];
    cfg
}

const DIE_CHANNEL: [u32; 6] = [0, 0, 0, 1, 1, 1];

fn pair(policy: Box<dyn Policy>) -> (Reservation, Queued) {
    let cfg = config();
    let res = Reservation::new(ArrayTimes::new(&cfg), true, 600.0, 5.0, 400.0, 2, DIE_CHANNEL.to_vec());
    let params = QueuedParams {
        link_mb_per_s: 600.0,
        command_overhead_us: 5.0,
        channel_mb_per_s: 400.0,
        channels: 2,
        die_channel: DIE_CHANNEL.to_vec(),
        suspension: None,
        multi_plane: None,
        dram_ns: 0,
    };
    (res, Queued::new(ArrayTimes::new(&cfg), params, policy))
}

fn random_tx(rng: &mut rand_pcg::Pcg64, dies: u32) -> Transaction {
    let die = rng.gen_range(0..dies);
    let mode = BitMode::ALL[rng.gen_range(0..4)];
    let page = rng.gen_range(0..12);
    let bytes = 512 * rng.gen_range(1..33);
    let class = Cause::ALL[rng.gen_range(0..Cause::ALL.len())];
    match rng.gen_range(0..4) {
        0 => Transaction::read(die, 1, page, mode, bytes, class),
        1 => Transaction::program(die, 1, page, mode, bytes, class),
        2 => Transaction::erase(die, 1, mode, class),
        _ => Transaction::host(bytes),
    }
}

#[test]
fn one_transaction_at_a_time_completes_exactly_as_reservation_books_it() {
    // Reference: `Reservation` (the engine the golden results were recorded with). With one
    // transaction in flight nothing queues, so every completion and every busy total must
    // be identical under both policies.
    let mut names = Vec::new();
    for policy in [Box::new(Fifo) as Box<dyn Policy>, Box::new(Priority::default())] {
        let (mut res, mut q) = pair(policy);
        names.push(q.policy());
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        for token in 0..4000 {
            let tx = random_tx(&mut rng, DIE_CHANNEL.len() as u32);
            let ready = q.now() + rng.gen_range(0..20_000);
            let want = res.submit(&tx, Done::at(ready)).0;
            q.submit(&tx, ready, token);
            let out = drain(&mut q);
            assert_eq!(out.len(), 1);
            let c = out[0];
            assert_eq!((c.token, c.ready, c.start, c.finish), (token, ready, ready, want), "{tx:?}");
        }
        let (u, s) = (res.utilisation(), q.stats());
        assert_eq!(s.die_busy_ns.iter().sum::<u64>(), u.die_busy_ns);
        assert_eq!(s.channel_busy_ns.iter().sum::<u64>(), u.channel_busy_ns);
        assert_eq!(s.link_busy_ns, u.link_busy_ns);
    }
    assert_eq!(names, ["fifo", "priority"]);
}

#[test]
fn fifo_equals_reservation_with_many_in_flight_on_dies_with_their_own_channels() {
    // Reference: `Reservation`. When each die has a channel of its own and work becomes
    // ready in submission order, booking order and per-die arrival order are the same
    // schedule, however much queues: every completion must match.
    let cfg = config();
    let mut res = Reservation::new(ArrayTimes::new(&cfg), true, 600.0, 5.0, 400.0, 2, vec![0, 1]);
    let p = QueuedParams { command_overhead_us: 5.0, ..params(2, 2, 400.0, None) };
    let mut q = Queued::new(ArrayTimes::new(&cfg), p, Box::new(Fifo));
    let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
    let mut ready = 0;
    let mut want = Vec::new();
    for token in 0..3000 {
        let tx = random_tx(&mut rng, 2);
        ready += rng.gen_range(0..200_000);
        want.push(res.submit(&tx, Done::at(ready)).0);
        q.submit(&tx, ready, token);
    }
    let out = drain(&mut q);
    assert_eq!(out.len(), want.len());
    for c in &out {
        assert_eq!(c.finish, want[c.token as usize], "token {}", c.token);
    }
    assert!(out.windows(2).all(|w| w[0].finish <= w[1].finish), "completions in time order");
    let queued = out.iter().filter(|c| c.start > c.ready).count();
    assert!(queued > 1000, "the schedule did queue ({queued} waited)");
}
