//! Multiple host flows (`[[flows]]`, issue 22 item 1): each flow's own workload, queue depth,
//! slice of the logical space and priority, checked against references the simulator does
//! not compute: Little's law per closed-loop flow, the symmetry of identical flows, counters
//! the drive keeps on its own, today's single-workload run, strict priority queueing.

mod common;

use flashlife::{Config, ConfigBuilder, RunOutput, Simulator};

/// Preset `preset` with `toml` (its `[[flows]]` tables) and `sets` on top.
fn flows_config(preset: &str, toml: &str, sets: &[&str]) -> Config {
    let mut b = ConfigBuilder::new().preset(preset).unwrap().toml_str(toml, "test").unwrap_or_else(|e| panic!("{e}"));
    for s in sets {
        b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    b.build().unwrap_or_else(|e| panic!("{e}"))
}

fn run(cfg: Config) -> RunOutput {
    Simulator::new(cfg).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{e}"))
}

fn error(preset: &str, toml: &str, sets: &[&str]) -> String {
    let built = ConfigBuilder::new().preset(preset).unwrap().toml_str(toml, "test").and_then(|mut b| {
        for s in sets {
            b = b.set(s)?;
        }
        b.build()
    });
    match built.and_then(Simulator::new).and_then(|s| s.run()) {
        Ok(_) => panic!("{toml} should be refused"),
        Err(e) => e.to_string(),
    }
}

/// `n` flows, each `[[flows]]` table with `body` (after `name`), over `ranges`.
fn flows(tables: &[(&str, &str, [f64; 2], &str)]) -> String {
    let mut s = String::new();
    for (name, head, [a, b], workload) in tables {
        s += &format!("[[flows]]\nname = \"{name}\"\nrange = [{a}, {b}]\n{head}\n[flows.workload]\n{workload}\n\n");
    }
    s
}

/// The summary as JSON without what differs by construction between a run with one flow and
/// the single-workload run: the flows section, the configuration's hash, wall-time fields.
fn comparable(out: &RunOutput) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(&out.summary.to_json()).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("flows");
    o["gc"].as_object_mut().unwrap().remove("valid_units_moved_outside_flows");
    o["provenance"].as_object_mut().unwrap().remove("config_sha256");
    let run = o["run"].as_object_mut().unwrap();
    for k in ["wall_seconds", "page_ops_per_second", "peak_rss_bytes"] {
        run.remove(k);
    }
    v
}

/// The time series' first `n` columns.
fn columns(csv: &str, n: usize) -> String {
    csv.lines().map(|l| l.split(',').take(n).collect::<Vec<_>>().join(",")).collect::<Vec<_>>().join("\n")
}

#[test]
fn one_flow_is_the_single_workload_run_byte_for_byte() {
    // Reference: today's single-workload run (a different code path: the run loop's own
    // batch-drawn workload, its queue and issue logic); flow 0 draws from the same random
    // stream, so with the whole range and host.queue_depth it must be the same run.
    let workloads = [
        ("closed loop", "kind = \"uniform\"\nread_ratio = 0.3", vec!["workload.read_ratio=0.3"]),
        (
            "poisson",
            "kind = \"zipf\"\n[flows.workload.arrival]\nprocess = \"poisson\"\nrate_iops = 4000.0",
            vec!["workload.kind=\"zipf\"", "workload.arrival.process=\"poisson\"", "workload.arrival.rate_iops=4000.0"],
        ),
    ];
    for scheduler in ["reservation", "queued"] {
        for (what, flow, single) in &workloads {
            let mut sets = vec!["run.until=\"writes:1dw\"", "ftl.integrity_oracle=true"];
            let sched = format!("timing.scheduler=\"{scheduler}\"");
            sets.push(&sched);
            let table = flows(&[("only", "", [0.0, 1.0], flow)]);
            let with_flow = run(flows_config("tiny", &table, &sets));
            let single_sets: Vec<&str> = sets.iter().copied().chain(single.iter().map(|s| s.as_ref())).collect();
            let single = common::run_preset("tiny", &single_sets);
            let what = format!("{scheduler}, {what}");
            assert!(single.summary.run.requests > 5_000, "{what}: {}", single.summary.run.requests);
            assert_eq!(comparable(&with_flow), comparable(&single), "{what}: summaries differ");
            let n = single.timeseries.to_csv().lines().next().unwrap().split(',').count();
            assert_eq!(
                columns(&with_flow.timeseries.to_csv(), n),
                columns(&single.timeseries.to_csv(), n),
                "{what}: time series differ"
            );
            let f = &with_flow.summary.flows[0];
            assert_eq!(f.write_requests, single.summary.host.write_requests, "{what}");
            assert_eq!(f.latency_us.write, single.summary.latency_us.write, "{what}");
        }
    }
}

#[test]
fn littles_law_holds_for_each_closed_loop_flow() {
    // Reference: Little's law, L = lambda W. A closed-loop flow has exactly its queue depth in
    // flight from the start until its last issue, then drains; over the run's T seconds the
    // sum of its latencies is qd x T less the drain, at most qd x 2 W_max (its last issue is
    // within one latency of the stop, which is within one latency of the end). So
    // |iops x mean / qd - 1| <= 2 W_max / T, plus 0.1% for the histogram's 3 digits.
    let table = flows(&[
        ("shallow", "queue_depth = 4", [0.0, 0.3], "kind = \"uniform\"\nread_ratio = 0.5"),
        ("deep", "queue_depth = 12", [0.3, 1.0], "kind = \"hotcold\""),
    ]);
    for scheduler in ["reservation", "queued"] {
        let sched = format!("timing.scheduler=\"{scheduler}\"");
        let out = run(flows_config("tiny", &table, &["run.until=\"writes:2dw\"", &sched]));
        let t = out.summary.run.simulated_ns as f64 / 1e9;
        for f in &out.summary.flows {
            let n = (f.read_requests + f.write_requests) as f64;
            let l = &f.latency_us;
            let mean_s = (l.read.mean * l.read.count as f64 + l.write.mean * l.write.count as f64) / n / 1e6;
            let w_max = l.read.max.max(l.write.max) / 1e6;
            let ratio = f.iops * mean_s / f.queue_depth as f64;
            let bound = 2.0 * w_max / t + 1e-3;
            assert!(n > 2_000.0, "{scheduler} {}: {n} requests", f.name);
            assert!((ratio - 1.0).abs() <= bound, "{scheduler} {}: L/qd = {ratio}, bound {bound}", f.name);
        }
    }
}

#[test]
fn identical_flows_on_disjoint_halves_get_equal_throughput() {
    // Reference: symmetry. Two flows alike but for their random streams and halves of the
    // drive differ by noise only. The noise is heavy-tailed (a write that pays for a GC
    // episode holds its slot for seconds), so its size is measured, not assumed: the
    // difference of the flows' requests over 10 batches of 0.4 drive writes each (batch
    // means), whose mean must lie within Student's t (9 degrees of freedom, two-sided 99.9%:
    // 4.781) standard errors of 0. Over seeds 1-8 under both schedulers |t| was at most 4.1.
    let table = flows(&[
        ("left", "queue_depth = 8", [0.0, 0.5], "kind = \"uniform\""),
        ("right", "queue_depth = 8", [0.5, 1.0], "kind = \"uniform\""),
    ]);
    for scheduler in ["reservation", "queued"] {
        let sched = format!("timing.scheduler=\"{scheduler}\"");
        let out = run(flows_config("tiny", &table, &["run.until=\"writes:4dw\"", "stats.interval=\"0.4dw\"", &sched]));
        let rows = &out.timeseries.rows;
        assert_eq!(rows.len(), 10, "{scheduler}: one row per batch");
        let mut last = 0.0;
        let d: Vec<f64> = rows
            .iter()
            .map(|r| {
                let dt = r.time_s - last;
                last = r.time_s;
                (r.flows[0].iops - r.flows[1].iops) * dt
            })
            .collect();
        let k = d.len() as f64;
        let mean = d.iter().sum::<f64>() / k;
        let sd = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt();
        let t = mean / (sd / k.sqrt());
        assert!(t.abs() <= 4.781, "{scheduler}: t = {t} (batch differences {d:?})");
        // The batches hold every request the flows finished.
        let [a, b] = &out.summary.flows[..] else { panic!("two flows") };
        let total = d.iter().sum::<f64>();
        let want = a.write_requests as f64 - b.write_requests as f64;
        assert!((total - want).abs() <= 10.0, "{scheduler}: batches {total}, summary {want}");
    }
}

#[test]
fn per_flow_counts_add_up_to_the_drives_own_counters() {
    // Reference: counts kept elsewhere. Host units programmed are the FTL's (by cause), GC
    // units moved are counted per victim when it is chosen (not per unit moved, where flows'
    // ranges are counted), and the latency histograms' counts are the run loop's. A third of
    // the drive lies outside every flow: GC moves of it are the preconditioning's data.
    let table = flows(&[
        ("reader", "queue_depth = 4", [0.0, 0.2], "kind = \"uniform\"\nread_ratio = 0.9"),
        ("writer", "queue_depth = 16", [0.2, 0.7], "kind = \"zipf\""),
    ]);
    for scheduler in ["reservation", "queued"] {
        let sched = format!("timing.scheduler=\"{scheduler}\"");
        let out = run(flows_config("tiny", &table, &["run.until=\"writes:2dw\"", "ftl.integrity_oracle=true", &sched]));
        let s = &out.summary;
        let sum = |f: fn(&flashlife::sim::FlowSummary) -> u64| s.flows.iter().map(f).sum::<u64>();
        assert_eq!(sum(|f| f.host_units_written), s.flash.unit_programs_by_cause.0[0], "{scheduler}: host units");
        let outside = s.gc.valid_units_moved_outside_flows.unwrap();
        assert_eq!(sum(|f| f.gc_units_moved.unwrap()) + outside, s.gc.valid_units_moved, "{scheduler}: GC units");
        assert!(outside > 0, "{scheduler}: GC moved none of the data outside the flows");
        assert_eq!(sum(|f| f.latency_us.read.count), s.latency_us.read.count, "{scheduler}: reads");
        assert_eq!(sum(|f| f.latency_us.write.count), s.latency_us.write.count, "{scheduler}: writes");
        assert_eq!(sum(|f| f.read_bytes + f.write_bytes), s.host.read_bytes + s.host.write_bytes);
        let share: f64 = s.flows.iter().map(|f| f.host_write_share).sum();
        assert!((share - 1.0).abs() < 1e-12, "{scheduler}: write shares sum to {share}");
    }
}

/// Two flows alike but for priority, each half reads, on the queued scheduler's drive.
fn priority_mix(scheduler: &str, high: &str) -> RunOutput {
    let table = flows(&[
        (
            "first",
            &format!("queue_depth = 16\npriority = \"{high}\""),
            [0.0, 0.5],
            "kind = \"uniform\"\nread_ratio = 0.5",
        ),
        ("second", "queue_depth = 16", [0.5, 1.0], "kind = \"uniform\"\nread_ratio = 0.5"),
    ]);
    let mut b = ConfigBuilder::new();
    for s in common::PEER {
        b = b.set(s).unwrap();
    }
    let cfg = b
        .toml_str(&table, "test")
        .unwrap()
        .set(&format!("timing.scheduler=\"{scheduler}\""))
        .unwrap()
        .set("run.until=\"writes:1dw\"")
        .unwrap()
        .build()
        .unwrap();
    run(cfg)
}

#[test]
fn the_queued_scheduler_serves_a_high_priority_flow_first() {
    // Reference: strict priority queueing (e.g. Kleinrock, Queueing Systems vol. 2, 3.6): at
    // each die the higher class waits only behind its own class and the operation in service,
    // so its waits, and its response times, are below the lower class's under a saturating
    // load; and with both flows of one class, the symmetry test's equality instead.
    // Compared where the flows' work queues together: host writes (about 30 deep per die
    // here). Host reads already go before every write and background operation on a die and
    // their queue is about half a read deep, so priority has little to reorder among them: a
    // read waits for the operation in service, which both flows' reads meet alike, and which
    // flow's reads measure lower then follows when each closed-loop flow issues, not priority
    // (measured after cleaning was stepped: read means 441 / 364 us, high / normal).
    let out = priority_mix("queued", "high");
    let [hi, lo] = &out.summary.flows[..] else { panic!("two flows") };
    // At saturation the lower class bears nearly all the queueing: measured 10.7 against
    // 235 ms. The factor 2 asked is far outside the two flows' difference without priority
    // (20.6 against 21.0 ms, equal p99s), so a broken priority cannot pass by chance.
    for (what, h, l) in [
        ("write mean", hi.latency_us.write.mean, lo.latency_us.write.mean),
        ("write p99", hi.latency_us.write.p99, lo.latency_us.write.p99),
    ] {
        assert!(2.0 * h < l, "{what}: high {h} us, normal {l} us");
    }
    assert!(hi.iops > lo.iops, "throughput: high {}, normal {}", hi.iops, lo.iops);
    // Saturating: the dies are busy most of the time.
    let busy = out.summary.scheduler.as_ref().unwrap().die_busy.mean;
    assert!(busy > 0.8, "dies busy {busy}");
}

#[test]
fn priority_changes_nothing_under_the_reservation_scheduler() {
    // Reference: the reservation scheduler books work in the order the FTL decides it and has
    // no queues to order (architecture.md): a high-priority flow's run is the normal one's.
    let (hi, normal) = (priority_mix("reservation", "high"), priority_mix("reservation", "normal"));
    let strip = |o: &RunOutput| {
        let mut v = comparable(o);
        v["provenance"].as_object_mut().unwrap().remove("config_sha256");
        (v, o.summary.flows.iter().map(|f| (f.write_requests, f.latency_us.read)).collect::<Vec<_>>())
    };
    assert_eq!(strip(&hi), strip(&normal));
}

#[test]
fn a_trace_is_split_into_flows_by_its_stream_column() {
    // Reference: the trace file itself, counted here line by line: each flow replays the
    // requests of its stream, and a stream the trace never names is an error naming the key.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("streams.csv");
    let mut text = String::from("time_ns,op,offset,size,stream\n");
    let mut per_stream = [0u64; 3];
    for i in 0..3000u64 {
        let stream = (i * 7 % 5 % 3) as usize;
        per_stream[stream] += 1;
        let op = if i % 4 == 0 { "R" } else { "W" };
        text += &format!("{},{op},{},4096,{stream}\n", i * 20_000, (i * 7919 % 1000) * 4096);
    }
    std::fs::write(&path, text).unwrap();
    let trace = |s: u16| {
        format!(
            "kind = \"trace\"\n[flows.workload.trace]\npath = \"{}\"\nstream = {s}\nfold = \"modulo\"",
            path.display()
        )
    };
    let table = flows(&[
        ("s0", "queue_depth = 8", [0.0, 0.3], &trace(0)),
        ("s1", "queue_depth = 8", [0.3, 0.6], &trace(1)),
        ("s2", "queue_depth = 8", [0.6, 1.0], &trace(2)),
    ]);
    let out = run(flows_config("tiny", &table, &["run.until=\"end\""]));
    for (f, want) in out.summary.flows.iter().zip(per_stream) {
        assert_eq!(f.read_requests + f.write_requests, want, "{}", f.name);
        assert!(f.open_loop, "a trace's timestamps are honoured by default");
    }
    let bad = flows(&[("s7", "", [0.0, 1.0], &trace(7))]);
    let e = error("tiny", &bad, &["run.until=\"end\""]);
    assert!(e.contains("flows[0] (s7)") && e.contains("workload.trace.stream = 7"), "{e}");
    assert!(e.contains("its streams: 0, 1, 2"), "{e}");
}

#[test]
fn bad_flows_are_refused_with_their_key_value_and_what_would_do() {
    let uni = "kind = \"uniform\"";
    for (toml, sets, want) in [
        (flows(&[("a", "", [0.0, 0.6], uni), ("b", "", [0.5, 1.0], uni)]), vec![], "flows[1].range"),
        (flows(&[("a", "", [0.0, 0.6], uni), ("b", "", [0.5, 1.0], uni)]), vec![], "shared = true in both"),
        (
            flows(&[("a", "shared = true", [0.0, 0.6], uni), ("b", "", [0.5, 1.0], uni)]),
            vec![],
            "clear of flows[0].range [0, 0.6]",
        ),
        (flows(&[("a", "", [0.5, 1.5], uni)]), vec![], "flows[0].range = [0.5, 1.5]"),
        (flows(&[("a", "", [0.5, 0.5], uni)]), vec![], "0 <= start < end <= 1"),
        (flows(&[("a", "", [0.0, 1e-9], uni)]), vec![], "at least one"),
        (flows(&[("a", "", [0.0, 0.5], uni), ("a", "", [0.5, 1.0], uni)]), vec![], "flows[1].name"),
        (flows(&[("a-b", "", [0.0, 1.0], uni)]), vec![], "letters, digits and _"),
        (flows(&[("a", "queue_depth = 70000", [0.0, 1.0], uni)]), vec![], "flows[0].queue_depth"),
        (
            flows(&[("a", "", [0.0, 1.0], "kind = \"uniform\"\nread_ratio = 2.0")]),
            vec![],
            "flows[0].workload.read_ratio",
        ),
        (flows(&[("a", "qd = 3", [0.0, 1.0], uni)]), vec![], "qd"),
        (flows(&[("a", "", [0.0, 1.0], uni)]), vec!["sampling.enabled=true"], "sampling.enabled"),
    ] {
        let e = error("tiny", &toml, &sets);
        assert!(e.contains(want), "{toml}: {e}");
    }
}

#[test]
fn both_flows_sharing_a_range_is_allowed_when_both_say_so() {
    // Reference: the overlap rule of docs/configuration.md; GC moves in the shared part count
    // for both flows, so their shares add up to more than the moves.
    let table = flows(&[
        ("reader", "shared = true\nqueue_depth = 4", [0.0, 1.0], "kind = \"uniform\"\nread_ratio = 1.0"),
        ("writer", "shared = true", [0.0, 1.0], "kind = \"uniform\""),
    ]);
    let out = run(flows_config("tiny", &table, &["run.until=\"writes:1dw\"", "ftl.integrity_oracle=true"]));
    let [r, w] = &out.summary.flows[..] else { panic!("two flows") };
    assert_eq!((r.write_requests, w.read_requests), (0, 0));
    assert_eq!(r.gc_units_moved, w.gc_units_moved, "one range, one count");
    assert_eq!(w.gc_units_moved, Some(out.summary.gc.valid_units_moved));
}
