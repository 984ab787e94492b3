//! The real sample traces in `<repo>/../shared/traces` parse with zero errors, and their
//! request counts and read shares match counts computed here independently, by plain string
//! matching on the files. Every test needs the folder: all are in `shared_traces`, ignored by
//! default and run by `scripts/test.sh` (`-- --ignored shared_traces::`) when it exists.

mod shared_traces {
    use std::io::Read;
    use std::path::PathBuf;

    use flashlife::workload::{trace_stats, BlkparseEvent, IoKind, TraceConfig, TraceFormat, TraceReader, Workload};

    fn traces_dir() -> PathBuf {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
        assert!(dir.is_dir(), "needs ../shared/traces: {} not found", dir.display());
        dir
    }

    fn text(path: &PathBuf) -> String {
        let bytes = std::fs::read(path).unwrap();
        if bytes.starts_with(&[0x1f, 0x8b]) {
            let mut s = String::new();
            flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_string(&mut s).unwrap();
            s
        } else {
            String::from_utf8(bytes).unwrap()
        }
    }

    /// Read a whole trace with the reader: (format, requests, reads, ignored).
    fn read_all(path: &PathBuf, cfg: &TraceConfig) -> (TraceFormat, u64, u64, u64) {
        let mut r = TraceReader::open(path, cfg).unwrap_or_else(|e| panic!("{e}"));
        let (mut n, mut reads) = (0, 0);
        while let Some(req) = r.next_request().unwrap_or_else(|e| panic!("{}: {e}", path.display())) {
            n += 1;
            if req.kind == IoKind::Read {
                reads += 1;
            }
            assert!(req.size > 0);
        }
        let c = r.trace_counters();
        assert_eq!(c.skipped, 0);
        assert_eq!(c.requests, n);
        (r.format(), n, reads, c.ignored)
    }

    /// Independent count: non-blank lines, and those a predicate calls reads.
    fn count(s: &str, skip_header: bool, is_read: impl Fn(&str) -> bool) -> (u64, u64) {
        let lines = s.lines().filter(|l| !l.trim().is_empty()).skip(usize::from(skip_header));
        let mut n = 0;
        let mut r = 0;
        for l in lines {
            n += 1;
            if is_read(l) {
                r += 1;
            }
        }
        (n, r)
    }

    #[test]
    #[ignore = "needs ../shared/traces"]
    fn every_sample_parses_and_matches_independent_counts() {
        let dir = traces_dir();
        let auto = TraceConfig::default();
        type Counter = Box<dyn Fn(&str) -> (u64, u64)>;
        let cases: Vec<(&str, TraceFormat, Counter)> = vec![
            ("msr/wdev_1.csv", TraceFormat::Msr, Box::new(|s| count(s, false, |l| l.contains(",Read,")))),
            ("msr/wdev_3.csv", TraceFormat::Msr, Box::new(|s| count(s, false, |l| l.contains(",Read,")))),
            ("msr/rsrch_1.csv", TraceFormat::Msr, Box::new(|s| count(s, false, |l| l.contains(",Read,")))),
            ("msr/hm_0-window.csv", TraceFormat::Msr, Box::new(|s| count(s, false, |l| l.contains(",Read,")))),
            ("msr/hm_0-first200.csv", TraceFormat::Msr, Box::new(|s| count(s, false, |l| l.contains(",Read,")))),
            ("msr/web_0-first100k.csv.gz", TraceFormat::Msr, Box::new(|s| count(s, false, |l| l.contains(",Read,")))),
            (
                "umass/Financial1-first10k.ascii",
                TraceFormat::Mqsim,
                Box::new(|s| count(s, false, |l| l.trim_end().ends_with(" 1"))),
            ),
            (
                "mqsim/wsrch-small.trace",
                TraceFormat::Mqsim,
                Box::new(|s| count(s, false, |l| l.trim_end().ends_with(" 1"))),
            ),
            (
                "mqsim/tpcc-small.trace",
                TraceFormat::Mqsim,
                Box::new(|s| count(s, false, |l| l.trim_end().ends_with(" 1"))),
            ),
            (
                "cloudphysics/cloudPhysicsIO.csv",
                TraceFormat::CloudPhysics,
                Box::new(|s| count(s, true, |l| l.contains(",28,") || l.contains(",88,"))),
            ),
        ];
        for (name, format, independent) in cases {
            let path = dir.join(name);
            let (fmt, n, reads, _) = read_all(&path, &auto);
            let (want_n, want_reads) = independent(&text(&path));
            assert_eq!(fmt, format, "{name}: detected format");
            assert_eq!((n, reads), (want_n, want_reads), "{name}: (requests, reads)");
            assert!(n > 0);
            eprintln!("{name}: {n} requests, read share {:.4}", reads as f64 / n as f64);
        }
    }

    /// The CloudPhysics sample's time column is whole seconds (libCacheSim, whose CSV it is,
    /// says so in its documentation): its records span exactly 7,200 units, a two-hour window,
    /// and read as microseconds they would arrive at 16 million requests a second. Checked
    /// against the file's first and last time field, read here independently.
    #[test]
    #[ignore = "needs ../shared/traces"]
    fn cloudphysics_sample_spans_two_hours() {
        let path = traces_dir().join("cloudphysics/cloudPhysicsIO.csv");
        let body = text(&path);
        let times: Vec<u64> = body.lines().skip(1).filter_map(|l| l.split(',').nth(1)?.parse().ok()).collect();
        let span_units = times.iter().max().unwrap() - times.iter().min().unwrap();
        assert_eq!(span_units, 7_200);
        let mut r = TraceReader::open(&path, &TraceConfig::default()).unwrap();
        let mut last = 0;
        while let Some(req) = r.next_request().unwrap() {
            last = req.arrival_ns;
        }
        assert_eq!(last, span_units * 1_000_000_000, "the last arrival, in ns from the first");
    }

    #[test]
    #[ignore = "needs ../shared/traces"]
    fn readme_record_counts() {
        let dir = traces_dir();
        let cfg = TraceConfig::default();
        for (name, records) in [
            ("msr/wdev_1.csv", 1_055),
            ("msr/wdev_3.csv", 682),
            ("msr/rsrch_1.csv", 13_780),
            ("msr/hm_0-window.csv", 7_016),
            ("msr/hm_0-first200.csv", 200),
            ("msr/web_0-first100k.csv.gz", 100_000),
            ("umass/Financial1-first10k.ascii", 10_000),
            ("mqsim/wsrch-small.trace", 24_783),
            ("mqsim/tpcc-small.trace", 6_999),
            ("cloudphysics/cloudPhysicsIO.csv", 113_873 - 1), // the README counts the header line
        ] {
            assert_eq!(read_all(&dir.join(name), &cfg).1, records, "{name}");
        }
    }

    /// blkparse: requests are the D events that move data (rwbs with R or W, a `+ count`);
    /// everything else (other actions, no-data `N` commands, the trailer) is ignored, not an error.
    #[test]
    #[ignore = "needs ../shared/traces"]
    fn blkparse_samples_d_and_c_events() {
        let dir = traces_dir();
        for (name, event) in [
            ("blkparse/blkparse-output.txt", "D"),
            ("blkparse/hadoop-blktrace.txt", "D"),
            ("blkparse/hadoop-blktrace.txt", "C"),
        ] {
            let path = dir.join(name);
            let s = text(&path);
            let (mut want_n, mut want_r, mut lines) = (0u64, 0u64, 0u64);
            for l in s.lines() {
                lines += 1;
                let f: Vec<&str> = l.split_whitespace().collect();
                if f.len() >= 10 && f[5] == event && f[8] == "+" && (f[6].contains('R') || f[6].contains('W')) {
                    want_n += 1;
                    if f[6].contains('R') {
                        want_r += 1;
                    }
                }
            }
            let ev = if event == "C" { BlkparseEvent::Completed } else { BlkparseEvent::Issued };
            let cfg = TraceConfig { blkparse_event: ev, ..TraceConfig::default() };
            let (fmt, n, reads, ignored) = read_all(&path, &cfg);
            assert_eq!(fmt, TraceFormat::Blkparse);
            assert_eq!((n, reads), (want_n, want_r), "{name} {event}");
            assert_eq!(n + ignored, lines, "{name}: every line is a request or ignored");
            eprintln!("{name} {event}: {n} requests, {reads} reads, {ignored} ignored lines");
        }
    }

    #[test]
    #[ignore = "needs ../shared/traces"]
    fn trace_stats_on_rsrch_1() {
        let dir = traces_dir();
        let path = dir.join("msr/rsrch_1.csv");
        let s = trace_stats(&path, &TraceConfig::default()).unwrap();
        let body = text(&path);
        let reads = body.lines().filter(|l| l.contains(",Read,")).count() as u64;
        let bytes: u64 = body.lines().map(|l| l.split(',').nth(5).unwrap().parse::<u64>().unwrap()).sum();
        assert_eq!(s.format, "msr");
        assert_eq!(s.requests, 13_780);
        assert_eq!(s.reads, reads);
        assert_eq!(s.read_share, reads as f64 / 13_780.0);
        assert_eq!(s.bytes, bytes);
        assert_eq!(s.size_histogram.iter().map(|b| b.count).sum::<u64>(), 13_780);
        assert!(s.distinct_exact && s.distinct_pages > 0);
        assert!(s.sequential_share + s.random_share > 0.999);
        assert!(s.inter_arrival.p50_ns <= s.inter_arrival.p99_ns && s.inter_arrival.p99_ns <= s.inter_arrival.max_ns);
        let last = s.access_cdf.last().unwrap();
        assert!((last.page_fraction - 1.0).abs() < 1e-12 && (last.access_fraction - 1.0).abs() < 1e-12);
        let text = s.to_text();
        assert!(text.contains("13780"), "{text}");
        assert!(text.lines().count() < 50, "one screen:\n{text}");
        serde_json::to_string(&s).unwrap();
        eprintln!("{text}");
    }
}
