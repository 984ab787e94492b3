//! Read disturb, read retry, read reclaim and read latency relaxation by host hints
//! (`[reliability]`, docs/techniques/read-relaxation.md).

mod common;

use flashlife::flash::rber::{EccParams, PowerLawParams, PowerLawRber, ReadRetry, ReadRetryParams};
use flashlife::sim::stream_seed;
use flashlife::stats::Cause;
use flashlife::techniques::readrelax::{PoissonRandom, PoissonSpec};
use flashlife::workload::{HostRequest, IoKind, Workload};
use flashlife::{Result, RunOutput, Simulator};

/// Each simulated read stands for this many reads (the disturb coefficient is scaled by it).
const SAMPLING: f64 = 100.0;

fn drive(extra: &[String]) -> Vec<String> {
    let gamma = PowerLawParams::tlc_3d().gamma * SAMPLING;
    let p = PowerLawParams::tlc_3d();
    let mut v: Vec<String> = vec![
        "geometry.channels=1".into(),
        "geometry.ways=1".into(),
        "geometry.planes=2".into(),
        "geometry.blocks_per_plane=32".into(),
        "geometry.pages_per_block=32".into(),
        "flash.page_size=16384".into(),
        "flash.tlc.read_us=70".into(),
        "flash.tlc.program_us=700".into(),
        "flash.tlc.pe_limit=3000".into(),
        "capacity.overprovisioning=0.3".into(),
        "reliability.model=\"power_law\"".into(),
        "reliability.rber_set=\"custom\"".into(),
        format!(
            "reliability.power_law={{epsilon={:e}, alpha={:e}, k={}, beta={:e}, m={}, n={}, gamma={:e}, p={}, q={}}}",
            p.epsilon, p.alpha, p.k, p.beta, p.m, p.n, gamma, p.p, p.q
        ),
        "reliability.base_cycles=1500".into(),
        "run.progress=\"off\"".into(),
        // The figures of docs/techniques/read-relaxation.md and the pins here were measured
        // under the reservation scheduler, which runs a reclaim at once.
        "timing.scheduler=\"reservation\"".into(),
    ];
    v.extend(extra.iter().cloned());
    v
}

fn run_with(sets: &[String], spec: PoissonSpec) -> RunOutput {
    run_wrapped(sets, spec, |wl, _| Box::new(wl))
}

/// Open-loop Poisson `spec` over the whole logical space (its bytes given to `wrap`), through
/// `wrap` (a workload that changes some of its requests).
fn run_wrapped(
    sets: &[String],
    spec: PoissonSpec,
    wrap: impl FnOnce(PoissonRandom, u64) -> Box<dyn Workload>,
) -> RunOutput {
    let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
    let cfg = common::config(&refs);
    let layout = flashlife::ftl::Layout::of(&cfg).unwrap();
    let bytes = layout.logical_units as u64 * layout.unit_bytes;
    let wl = PoissonRandom::new(spec, bytes, stream_seed(cfg.seed, "workload")).unwrap();
    let mut sim = Simulator::with_workload(cfg, wrap(wl, bytes)).unwrap();
    sim.set_open_loop(true);
    sim.run().unwrap_or_else(|e| panic!("{e}"))
}

/// Low-rate reads (sampled), 80% of them on a hot fifth, and a trickle of writes.
fn file_server() -> PoissonSpec {
    PoissonSpec {
        rate_per_s: 1.0,
        read_ratio: 0.999,
        request_size: 16384,
        hot_fraction: 0.2,
        hot_share: 0.8,
        write_fraction: 1.0,
        stream: 0,
    }
}

#[test]
fn hints_halve_read_induced_spent_lifetime_at_a_small_latency_cost() {
    let until = "run.until=\"time:10d\"".to_string();
    let run = |extra: &[&str]| {
        let mut sets: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        sets.push(until.clone());
        run_with(&drive(&sets), file_server())
    };
    let none = run(&["reliability.read_reclaim=\"none\""]);
    let aggressive = run(&["reliability.read_reclaim=\"error_based\""]);
    // The application accepts one retry (2 attempts of 70 + 41 us), its budget compared with
    // the page's flash time alone (`hint_latency = "page"`: at the request level, the host
    // transfer on top leaves no retry in 250 us; that comparison is tested below).
    let hinted = run(&[
        "reliability.read_reclaim=\"hinted\"",
        "reliability.hint_latency=\"page\"",
        "reliability.hints=[{lba_start=0, budget_us=250}]",
    ]);
    let (n, a, h) = (&none.summary, &aggressive.summary, &hinted.summary);
    eprintln!(
        "no reclaim: {} uncorrectable reads, long-read share {:.4}",
        n.reliability.uncorrectable_reads, n.reliability.long_read_share
    );
    // Reclaim is needed: without it, a tenth of the reads take more than the one retry the
    // hint allows (up to 8 steps, the last the ECC corrects); with hints none does.
    let over_budget = |s: &flashlife::sim::summary::Summary| {
        let hist = &s.reliability.retry_steps_histogram;
        hist[2..].iter().sum::<u64>() as f64 / hist.iter().sum::<u64>() as f64
    };
    assert!(over_budget(n) > 0.05, "without reclaim: {:?}", n.reliability.retry_steps_histogram);
    assert_eq!(over_budget(h), 0.0, "hinted: {:?}", h.reliability.retry_steps_histogram);
    assert_eq!(n.reliability.reclaim_erases, 0);
    let (ea, eh) = (a.reliability.reclaim_erases as f64, h.reliability.reclaim_erases as f64);
    assert!(ea > 100.0, "aggressive reclaim must be exercised: {ea}");
    for s in [a, h] {
        // Each reclaimed block (counted where reclaim picks it) is erased once under the
        // reclaim cause, and the flash array's own erase count matches the FTL's sum.
        assert_eq!(s.reliability.reclaim_erases, s.reliability.reclaimed_blocks);
        assert_eq!(s.integrity.physical_block_erases, s.flash.block_erases);
    }
    let saved = 1.0 - eh / ea;
    let pe = a.reliability.reclaim_share_of_pe_budget;
    assert!((pe - ea / (64.0 * 3000.0)).abs() < 1e-12, "spent lifetime = reclaim erases / P/E budget");
    // Paper: 2% performance overhead.
    let cost = h.latency_us.read.mean / a.latency_us.read.mean - 1.0;
    eprintln!("hints: {:.1}% fewer reclaim erases ({eh} vs {ea}), read latency {:+.2}%", 100.0 * saved, 100.0 * cost);
    // Reference: the paper's file server spent 56% less lifetime on read-induced rewrites;
    // "halve" is read as 50% +- 10 points, which holds the paper's figure.
    assert!((saved - 0.5).abs() <= 0.1, "saved {:.1}% ({eh} vs {ea} reclaim erases)", 100.0 * saved);
    assert!(cost < 0.03, "read latency cost {:.2}%", 100.0 * cost);
    // Regression pin (deterministic; docs/techniques/read-relaxation.md quotes 45.6%).
    assert_eq!((a.reliability.reclaim_erases, h.reliability.reclaim_erases), (PIN_ERASES.0, PIN_ERASES.1));
    assert!(h.reliability.hinted_reads > 0);
    for s in [a, h] {
        assert_eq!(s.reliability.uncorrectable_reads, 0);
        assert_eq!(s.failures.uncorrectable_reads, 0);
    }
}

/// Reclaim erases of `hints_halve_...` (error_based, hinted): the project's own output.
const PIN_ERASES: (u64, u64) = (553, 301);

#[test]
fn without_reclaim_long_reads_grow_and_reads_fail_while_every_reclaim_policy_keeps_data() {
    let read_only = PoissonSpec { rate_per_s: 1.0, request_size: 16384, ..Default::default() };
    let long = |extra: &[&str]| {
        let mut sets: Vec<String> =
            vec!["run.until=\"time:40d\"".into(), "stats.interval=\"5d\"".into(), "ftl.integrity_oracle=true".into()];
        sets.extend(extra.iter().map(|s| s.to_string()));
        sets
    };
    // No reclaim: the share of long reads per interval grows as reads accumulate, until data
    // is lost (the oracle sees it).
    let cfg = long(&["reliability.read_reclaim=\"none\"", "ftl.integrity_oracle=false"]);
    let slow = PoissonSpec { rate_per_s: 0.3, ..read_only.clone() };
    let out = run_with(&drive(&cfg), slow);
    let shares: Vec<f64> = out.timeseries.rows.iter().map(|r| r.long_read_share).collect();
    assert!(shares[0] < 0.001, "{shares:?}");
    assert!(shares[shares.len() - 2] > 0.05, "{shares:?}");
    assert!(shares.windows(2).take(shares.len() - 2).all(|w| w[1] >= w[0]), "{shares:?}");
    let out = run_with(&drive(&cfg), read_only.clone());
    assert!(out.summary.reliability.uncorrectable_reads > 0, "the run must reach uncorrectable data");
    let h = &out.summary.reliability.retry_steps_histogram;
    assert_eq!(h.len(), 10, "0..=8 retries and uncorrectable");
    assert_eq!(*h.last().unwrap(), out.summary.reliability.uncorrectable_reads);
    let cfg = common::config(
        &drive(&long(&["reliability.read_reclaim=\"none\""])).iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let layout = flashlife::ftl::Layout::of(&cfg).unwrap();
    let wl = PoissonRandom::new(read_only.clone(), layout.logical_units as u64 * layout.unit_bytes, 9).unwrap();
    let mut sim = Simulator::with_workload(cfg, Box::new(wl)).unwrap();
    sim.set_open_loop(true);
    let err = sim.run().err().expect("lost data must fail the oracle");
    assert!(err.to_string().starts_with("integrity oracle:"), "{err}");
    // Every reclaim policy: the same reads, nothing uncorrectable, nothing lost. Retry-only
    // firmware among them: on this run, which loses data without reclaim, its last resort
    // must fire, later than error-based reclaim does (fewer rewrites, more retries).
    let mut seen = Vec::new();
    for policy in ["read_count", "error_based", "hinted", "retry_only"] {
        let p = format!("reliability.read_reclaim=\"{policy}\"");
        let out = run_with(
            &drive(&long(&[&p, "reliability.read_count_threshold=1500", "reliability.hints=[{budget_us=100000}]"])),
            read_only.clone(),
        );
        let r = &out.summary.reliability;
        assert_eq!(r.uncorrectable_reads, 0, "{policy}");
        assert!(r.reclaimed_blocks > 0, "{policy}");
        assert!(out.summary.integrity.checks > 100_000, "{policy}");
        seen.push((policy, r.reclaimed_blocks, r.mean_retry_steps));
    }
    println!("{seen:?}");
    let (_, eb_blocks, eb_retries) = seen[1];
    let (_, ro_blocks, ro_retries) = seen[3];
    assert!(ro_blocks < eb_blocks, "retry-only reclaimed {ro_blocks} blocks, error-based {eb_blocks}");
    assert!(ro_retries > eb_retries, "retry-only retried {ro_retries} times, error-based {eb_retries}");
    // A hint whose budget (100 ms) allows every retry promises no more than retry-only firmware.
    assert_eq!(seen[2].1, ro_blocks, "hinted with an unbounded budget against retry-only");
}

#[test]
fn read_count_reclaims_at_its_threshold() {
    // Closed form: a block is reclaimed when its reads reach T, so with n host page reads
    // over B blocks, n/T - B <= reclaims <= n/T.
    let t = 400u64;
    let sets: Vec<String> = vec![
        "geometry.channels=1".into(),
        "geometry.ways=1".into(),
        "geometry.planes=2".into(),
        "geometry.blocks_per_plane=32".into(),
        "geometry.pages_per_block=32".into(),
        "flash.page_size=16384".into(),
        "capacity.overprovisioning=0.3".into(),
        "reliability.read_reclaim=\"read_count\"".into(),
        format!("reliability.read_count_threshold={t}"),
        "ftl.integrity_oracle=true".into(),
        "workload.read_ratio=1.0".into(),
        "run.until=\"requests:200000\"".into(),
    ];
    let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
    // Under both schedulers: the queued one steps a reclaim's moves as background work, which
    // a saturating read stream starved (58 reclaims here) until it had its share of the die
    // (`timing.chore_ratio`).
    for scheduler in ["queued", "reservation"] {
        let mut sets = refs.clone();
        let s = format!("timing.scheduler=\"{scheduler}\"");
        sets.push(&s);
        let s = common::run(&sets).summary;
        let n = s.flash.page_reads_by_cause.get(Cause::Host);
        let reclaims = s.reliability.reclaimed_blocks;
        assert!(reclaims <= n / t && reclaims + 64 >= n / t, "{scheduler}: {reclaims} reclaims for {n} reads");
        assert_eq!(s.reliability.model, "none");
        assert_eq!(s.reliability.uncorrectable_reads, 0);
        assert!(s.flash.page_programs_by_cause.get(Cause::Reclaim) > 0);
    }
}

/// One read of one page, then nothing.
struct OneRead(bool);

impl Workload for OneRead {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        if std::mem::replace(&mut self.0, true) {
            return Ok(None);
        }
        Ok(Some(HostRequest { arrival_ns: 0, kind: IoKind::Read, offset: 0, size: 16384, stream: 0, budget_us: 0 }))
    }
}

#[test]
fn a_read_costs_one_sensing_and_transfer_per_retry_step() {
    // Latency of a read on an idle drive: (steps + 1) * (tR + transfer) + command + host
    // transfer, with the steps from the ECC tail at the model's RBER (page factor 1).
    let p = PowerLawParams::tlc_3d();
    let retry = ReadRetry::new(ReadRetryParams::default(), EccParams::default().for_page(16384)).unwrap();
    for base_cycles in [1000u32, 6000, 9000, 14000] {
        let rber = PowerLawRber::new(p.clone()).unwrap().terms(base_cycles as f64, 0.0, 0.0).total();
        let steps = retry.steps_needed(rber).expect("correctable");
        let sets: Vec<String> = vec![
            "geometry.channels=1".into(),
            "geometry.ways=1".into(),
            "geometry.blocks_per_plane=32".into(),
            "geometry.pages_per_block=32".into(),
            "flash.page_size=16384".into(),
            "capacity.overprovisioning=0.3".into(),
            "ftl.precondition=\"full\"".into(),
            "reliability.model=\"power_law\"".into(),
            "reliability.page_sigma=0".into(),
            format!("reliability.base_cycles={base_cycles}"),
            "run.until=\"end\"".into(),
        ];
        let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
        let mut sim = Simulator::with_workload(common::config(&refs), Box::new(OneRead(false))).unwrap();
        sim.set_open_loop(true);
        let s = sim.run().unwrap().summary;
        // Defaults: TLC tR 150 us, 400 MB/s channel (40,960 ns), 600 MB/s link + 2 us.
        let attempt = 150_000 + 16384 * 2500 / 1000;
        let host = 2_000 + 16384 * 1667 / 1000;
        let want = ((steps as u64 + 1) * attempt + host) as f64 / 1000.0;
        assert!(
            (s.latency_us.read.max - want).abs() / want < 0.002,
            "{base_cycles}: {} vs {want}",
            s.latency_us.read.max
        );
        assert_eq!(s.reliability.retry_steps_histogram[steps as usize], 1);
        assert_eq!(s.reliability.read_retries_by_cause.get(Cause::Host), steps as u64);
    }
}

/// A workload whose reads carry their own latency budget (a per-request hint).
struct Budgeted(Box<dyn Workload>, u32);

impl Workload for Budgeted {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        Ok(self
            .0
            .next_request()?
            .map(|r| HostRequest { budget_us: if r.kind == IoKind::Read { self.1 } else { 0 }, ..r }))
    }
}

fn run_budgeted(sets: &[String], spec: PoissonSpec, budget_us: u32) -> RunOutput {
    let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
    let cfg = common::config(&refs);
    let layout = flashlife::ftl::Layout::of(&cfg).unwrap();
    let wl =
        PoissonRandom::new(spec, layout.logical_units as u64 * layout.unit_bytes, stream_seed(cfg.seed, "workload"))
            .unwrap();
    let mut sim = Simulator::with_workload(cfg, Box::new(Budgeted(Box::new(wl), budget_us))).unwrap();
    sim.set_open_loop(true);
    sim.run().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_requests_own_budget_acts_like_a_hint_command_and_wins_over_them() {
    let sets = |extra: &[&str]| {
        let mut v: Vec<String> = vec!["reliability.read_reclaim=\"hinted\"".into(), "run.until=\"time:6d\"".into()];
        v.extend(extra.iter().map(|s| s.to_string()));
        drive(&v)
    };
    // The same reads and budgets, once from a hint command and once carried by every read.
    let by_command = run_with(&sets(&["reliability.hints=[{lba_start=0, budget_us=250}]"]), file_server());
    let by_request = run_budgeted(&sets(&[]), file_server(), 250);
    // The request's budget wins over a hint command and the default, both unlimited here.
    let over = run_budgeted(
        &sets(&["reliability.hints=[{lba_start=0, budget_us=100000}]", "reliability.default_budget_us=100000"]),
        file_server(),
        250,
    );
    let unlimited = run_with(
        &sets(&["reliability.hints=[{lba_start=0, budget_us=100000}]", "reliability.default_budget_us=100000"]),
        file_server(),
    );
    let key = |o: &RunOutput| {
        let r = &o.summary.reliability;
        (r.reclaim_erases, r.reclaim_page_programs, r.hinted_reads, o.summary.latency_us.read.mean.to_bits())
    };
    assert!(by_command.summary.reliability.reclaim_erases > 20, "reclaim must be exercised");
    assert_eq!(key(&by_request), key(&by_command));
    assert_eq!(key(&over), key(&by_command));
    assert_eq!(by_request.summary.reliability.hinted_reads, by_request.summary.host.read_requests);
    // An unlimited budget reclaims less than 250 us (only before data would be lost).
    assert!(
        unlimited.summary.reliability.reclaim_erases < by_command.summary.reliability.reclaim_erases,
        "{} vs {}",
        unlimited.summary.reliability.reclaim_erases,
        by_command.summary.reliability.reclaim_erases
    );
    for o in [&by_command, &by_request, &over, &unlimited] {
        assert_eq!(o.summary.reliability.uncorrectable_reads, 0);
    }
}

#[test]
fn budgets_from_the_trace_column_reach_the_reclaim_policy() {
    use std::io::Write;
    // Every third read carries a budget in the flashlife CSV's budget_us column; the hinted
    // reads the policy saw must be exactly those (hint commands would match none of them).
    let mut text = String::from("time_ns,op,offset,size,stream,budget_us\n");
    let mut budgeted = 0u64;
    for i in 0..3000u64 {
        let (op, budget) = if i % 10 == 9 {
            ("W", String::new())
        } else if i % 3 == 0 {
            budgeted += 1;
            ("R", "400".to_string())
        } else {
            ("R", if i % 2 == 0 { "0".to_string() } else { String::new() })
        };
        text.push_str(&format!("{},{op},{},16384,7,{budget}\n", i * 50_000_000, (i * 7919 % 4096) * 16384));
    }
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    let path = format!("workload.trace.path=\"{}\"", f.path().display());
    let s = common::run(
        &drive(&[
            "workload.kind=\"trace\"".into(),
            path,
            "reliability.read_reclaim=\"hinted\"".into(),
            "reliability.hints=[{stream=3, budget_us=100}]".into(),
            "run.until=\"end\"".into(),
        ])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>(),
    )
    .summary;
    assert_eq!(s.host.read_requests, 2700);
    assert_eq!(s.reliability.hinted_reads, budgeted);
}

/// Every other read twice as long (two pages): hints must then count the request's pages,
/// not one page's flash time.
struct AlternateSizes {
    inner: PoissonRandom,
    last_slot: u64,
    reads: u64,
}

impl Workload for AlternateSizes {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        let mut r = self.inner.next_request()?.expect("endless");
        if r.kind == IoKind::Read {
            self.reads += 1;
            if self.reads.is_multiple_of(2) && r.offset / r.size < self.last_slot {
                r.size *= 2;
            }
        }
        Ok(Some(r))
    }
}

/// The file server with every other read two pages long, for `days`; long reads are those
/// over 600 us, the budget of the hints below (one-page reads may then retry 4 times, two-page
/// reads once).
fn budget_run(days: u32, extra: &[&str]) -> RunOutput {
    let mut sets: Vec<String> = vec![format!("run.until=\"time:{days}d\""), "reliability.long_read_us=600".into()];
    sets.extend(extra.iter().map(|s| s.to_string()));
    let spec = PoissonSpec { rate_per_s: 2.0, ..file_server() };
    run_wrapped(&drive(&sets), spec, |inner, bytes| {
        Box::new(AlternateSizes { inner, last_slot: bytes / 16384 - 1, reads: 0 })
    })
}

/// One run's `reads_over_us` gives, at each threshold, the long-read share of a run that
/// counted that threshold alone (the threshold changes no decision), and falls as it rises.
#[test]
fn shares_over_extra_thresholds_are_the_long_reads_of_each_threshold() {
    let agg = "reliability.read_reclaim=\"error_based\"";
    let all = budget_run(2, &[agg, "reliability.read_thresholds_us=[100, 600, 1000]"]);
    let r = &all.summary.reliability;
    let over = r.reads_over_us.as_ref().expect("thresholds set");
    assert_eq!(over.keys().copied().collect::<Vec<_>>(), [100, 600, 1000]);
    assert_eq!(over[&600], r.long_read_share, "600 us is also the run's long-read threshold");
    assert!(over[&100] > over[&600] && over[&600] > over[&1000], "{over:?}");
    assert!(over[&1000] > 0.0, "{over:?}: two-page reads retry past 1000 us");
    for t in [100u32, 1000] {
        let alone = budget_run(2, &[agg, &format!("reliability.long_read_us={t}")]);
        assert_eq!(alone.summary.reliability.long_read_share, over[&t], "{t} us");
        assert_eq!(alone.summary.flash, all.summary.flash, "a threshold decides nothing");
    }
    assert!(budget_run(2, &[agg]).summary.reliability.reads_over_us.is_none());
}

const HINT_600: &str = "reliability.hints=[{budget_us=600}]";
const HINT_400: &str = "reliability.hints=[{budget_us=400}]";

#[test]
fn request_level_hints_keep_their_budget_and_postponed_reclaim_erases_no_more() {
    let aggressive = budget_run(10, &["reliability.read_reclaim=\"error_based\""]);
    let hinted = |extra: &[&str]| {
        let mut v = vec!["reliability.read_reclaim=\"hinted\"", HINT_600];
        v.extend_from_slice(extra);
        budget_run(10, &v)
    };
    let page = hinted(&["reliability.hint_latency=\"page\""]);
    let request = hinted(&[]);
    let postponed = hinted(&["reliability.reclaim_when=\"idle\""]);
    let aggressive_postponed =
        budget_run(10, &["reliability.read_reclaim=\"error_based\"", "reliability.reclaim_when=\"idle\""]);
    let r = |o: &RunOutput| o.summary.reliability.clone();
    for (name, o) in [
        ("aggressive", &aggressive),
        ("aggressive, postponed", &aggressive_postponed),
        ("hints, page time", &page),
        ("hints, request", &request),
        ("hints, request, postponed", &postponed),
    ] {
        let s = r(o);
        eprintln!(
            "{name}: reclaim erases {}, over 600 us {} ({:.4}%), in idle {:?}, read mean {:.1} us",
            s.reclaim_erases,
            s.long_reads,
            100.0 * s.long_read_share,
            s.reclaims_in_idle,
            o.summary.latency_us.read.mean
        );
        assert_eq!(s.uncorrectable_reads, 0, "{name}");
    }
    // Every read is hinted; the page-time comparison breaks the promise on two-page reads.
    assert_eq!(request.summary.reliability.hinted_reads, request.summary.host.read_requests);
    assert!(r(&page).long_reads > r(&aggressive).long_reads, "the old comparison must show the broken promise");
    // Hinted reads exceed their budget no more often than under aggressive reclaim ...
    for o in [&request, &postponed] {
        assert!(r(o).long_read_share <= r(&aggressive).long_read_share, "{:?}", r(o));
    }
    // ... while still saving reclaim erases.
    assert!(r(&request).reclaim_erases < r(&aggressive).reclaim_erases);
    // Postponed to idle windows, reclaim is done there (the rest at its deadline) and erases
    // no more than when done at once (measured: 982 and 982 with hints, 1703 and 1703
    // aggressive: the same blocks become due).
    for (p, i) in [(&postponed, &request), (&aggressive_postponed, &aggressive)] {
        assert!(r(p).reclaim_erases <= r(i).reclaim_erases, "postponed {:?} against immediate {:?}", r(p), r(i));
    }
    assert!(r(&postponed).reclaims_in_idle.unwrap() > 0);
    assert_eq!(r(&request).reclaims_in_idle, None, "reported only when reclaim is postponed");
}

// Placement by budget class (`reliability.budget_placement`, issue 19 item 3): relocated data
// whose reads allow a retry gets blocks of its own, so per-request hints on part of the reads
// save reclaim erases (docs/techniques/read-relaxation.md, "Placement by budget class").

/// Reads of the first `half` bytes carry their own budget of `budget_us` (per-request hints,
/// as the flashlife CSV trace's `budget_us` column gives them); the others none.
struct HalfHinted {
    inner: PoissonRandom,
    half: u64,
    budget_us: u32,
}

impl Workload for HalfHinted {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        Ok(self.inner.next_request()?.map(|mut r| {
            if r.kind == IoKind::Read && r.offset < self.half {
                r.budget_us = self.budget_us;
            }
            r
        }))
    }
}

/// Uniform sampled reads (1 for 100) at 1 read/s with a trickle of writes, for `days`, with
/// 400 us on the reads of the first half of the space.
fn half_hinted_run(days: u32, extra: &[&str]) -> RunOutput {
    let mut sets = vec![format!("run.until=\"time:{days}d\""), "ftl.integrity_oracle=true".to_string()];
    sets.extend(extra.iter().map(|s| s.to_string()));
    let spec = PoissonSpec { rate_per_s: 1.0, read_ratio: 0.999, request_size: 16384, ..Default::default() };
    run_wrapped(&drive(&sets), spec, |inner, bytes| Box::new(HalfHinted { inner, half: bytes / 2, budget_us: 400 }))
}

const HINTED: &str = "reliability.read_reclaim=\"hinted\"";
const PLACED: &str = "reliability.budget_placement=true";

/// Half-hinted reads save reclaim erases only with placement by budget class.
///
/// Uniform reads, 400 us on those of the first half of the space, 10 days. Without placement
/// the drive reclaims exactly as aggressive firmware does (measured 548 erases both, 0.0%
/// saved): the steady-state fill leaves both halves in every block, relocated data of both
/// halves shares the GC stream's blocks, and any strict read of a block reclaims it. With
/// placement the tolerant half is relocated into blocks of its own: 379 erases, **30.8%**
/// saved, against 69.0% when every read carries 400 us (170 erases), so the half-hinted drive
/// gets 89% of the half it should (2026-11-24; 30.6% / 31.5% after 30 / 90 days).
/// Asserted, with margin: placement saves at least 20% and at least 0.35 of what hints on every
/// read save, and more than the drive without placement by 15 points; it cannot beat hints on
/// every read. The promise holds: no more long reads than the aggressive drive, no
/// uncorrectable read, and nothing lost (oracle on throughout).
#[test]
fn placement_by_budget_class_lets_half_hinted_reads_save_reclaim_erases() {
    let aggressive = half_hinted_run(10, &["reliability.read_reclaim=\"error_based\""]);
    let mixed = half_hinted_run(10, &[HINTED]);
    let placed = half_hinted_run(10, &[HINTED, PLACED]);
    let all = half_hinted_run(10, &[HINTED, "reliability.hints=[{budget_us=400}]"]);
    let erases = |o: &RunOutput| o.summary.reliability.reclaim_erases as f64;
    let saved = |o: &RunOutput| 1.0 - erases(o) / erases(&aggressive);
    for (name, o) in [("aggressive", &aggressive), ("mixed", &mixed), ("placed", &placed), ("all", &all)] {
        let s = &o.summary;
        eprintln!(
            "{name}: reclaim erases {} ({:+.1}%), read mean {:.1} us, p99 {:.1} us, long reads {:.4}%",
            s.reliability.reclaim_erases,
            -100.0 * saved(o),
            s.latency_us.read.mean,
            s.latency_us.read.p99,
            100.0 * s.reliability.long_read_share,
        );
        assert!(s.integrity.oracle && s.integrity.checks > 100_000, "{name}: oracle on");
        assert_eq!(s.reliability.uncorrectable_reads, 0, "{name}");
    }
    assert!(erases(&aggressive) > 300.0, "reclaim must be exercised: {}", erases(&aggressive));
    let (sm, sp, sa) = (saved(&mixed), saved(&placed), saved(&all));
    assert!(sp >= 0.20, "placement saves {:.1}% (measured 30.8%)", 100.0 * sp);
    assert!(sp >= 0.35 * sa, "placement saves {:.1}%, hints on every read {:.1}%", 100.0 * sp, 100.0 * sa);
    assert!(sp >= sm + 0.15, "placement {:.1}% vs without {:.1}%", 100.0 * sp, 100.0 * sm);
    assert!(sp <= sa, "half the reads hinted cannot save more than all of them");
    assert!(
        placed.summary.reliability.long_read_share <= aggressive.summary.reliability.long_read_share,
        "the promise: long reads {} vs aggressive {}",
        placed.summary.reliability.long_read_share,
        aggressive.summary.reliability.long_read_share
    );
    // Same requests, same hints: placement changes where data goes, not what is read.
    assert_eq!(placed.summary.reliability.hinted_reads, mixed.summary.reliability.hinted_reads);
}

/// `reliability.budget_placement` is refused, naming the key and the policy, unless reclaim
/// is `hinted` (budgets decide no other policy's reclaim).
#[test]
fn budget_placement_needs_hinted_reclaim() {
    let sets = drive(&["reliability.read_reclaim=\"error_based\"".to_string(), PLACED.to_string()]);
    let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
    let e = common::config_error(&refs);
    assert!(e.contains("reliability.budget_placement") && e.contains("error_based"), "{e}");
}

mod shared_traces {
    use super::*;

    /// The web-search trace (MQSim format) at its own rate, one simulated read for 100, on the
    /// test drive filled sequentially, for `days`.
    fn wsrch(days: u32, extra: &[&str]) -> RunOutput {
        let trace =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/mqsim/wsrch-small.trace");
        assert!(trace.exists(), "needs ../shared/traces: {} not found", trace.display());
        let p = PowerLawParams::tlc_3d();
        let mut sets: Vec<String> =
            drive(&[]).into_iter().filter(|s| !s.starts_with("reliability.power_law=")).collect();
        sets.extend([
            format!(
                "reliability.power_law={{epsilon={:e}, alpha={:e}, k={}, beta={:e}, m={}, n={}, gamma={:e}, p={}, q={}}}",
                p.epsilon, p.alpha, p.k, p.beta, p.m, p.n, p.gamma * 100.0, p.p, p.q
            ),
            "workload.kind=\"trace\"".into(),
            format!("workload.trace.path={:?}", trace.display().to_string()),
            "workload.trace.format=\"mqsim\"".into(),
            "workload.trace.loops=0".into(),
            "workload.trace.time_scale=100".into(),
            "workload.trace.fold=\"modulo\"".into(),
            "ftl.precondition=\"full\"".into(),
            "reliability.long_read_us=400".into(),
            format!("run.until=\"time:{days}d\""),
        ]);
        sets.extend(extra.iter().map(|s| s.to_string()));
        let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
        let mut sim = Simulator::new(common::config(&refs)).unwrap();
        sim.set_open_loop(true);
        sim.run().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    #[ignore = "needs ../shared/traces"]
    fn web_search_hints_keep_their_budget() {
        let aggressive = wsrch(3, &["reliability.read_reclaim=\"error_based\""]);
        let hinted = |extra: &[&str]| {
            let mut v = vec!["reliability.read_reclaim=\"hinted\"", HINT_400];
            v.extend_from_slice(extra);
            wsrch(3, &v)
        };
        let page = hinted(&["reliability.hint_latency=\"page\""]);
        let request = hinted(&[]);
        let postponed = hinted(&["reliability.reclaim_when=\"idle\""]);
        let r = |o: &RunOutput| o.summary.reliability.clone();
        for (name, o) in
            [("aggressive", &aggressive), ("page", &page), ("request", &request), ("request, postponed", &postponed)]
        {
            let s = r(o);
            eprintln!(
                "wsrch {name}: reclaim erases {}, over 400 us {:.4}%, in idle {:?}",
                s.reclaim_erases,
                100.0 * s.long_read_share,
                s.reclaims_in_idle
            );
        }
        // The page-time comparison breaks the promise (issue 19: 0.049% -> 0.186%); the
        // request-level one keeps it. Measured (3 days): aggressive 0.0460%, page 0.1872%,
        // request 0.0460%, request postponed 0.0461% (one read more: an idle-window reclaim
        // runs into the next arrival as an immediate one would), so the postponed run within 1%.
        assert!(r(&page).long_read_share > 2.0 * r(&aggressive).long_read_share);
        assert!(r(&request).long_read_share <= r(&aggressive).long_read_share, "{:?}", r(&request));
        assert!(r(&postponed).long_read_share <= 1.01 * r(&aggressive).long_read_share, "{:?}", r(&postponed));
        assert!(r(&postponed).reclaim_erases <= r(&request).reclaim_erases);
    }
}
