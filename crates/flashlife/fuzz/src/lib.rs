//! Shared fuzz harness: feed bytes to a trace reader through a `Cursor` and drain it. The
//! first byte picks reader options, so each target explores strict and lenient modes.

use std::io::Cursor;

use flashlife::workload::{TraceConfig, TraceReader, Workload};

/// Drain a reader of `format` over `data`; panics only on a broken invariant.
pub fn run(format: &str, data: &[u8]) {
    let (opts, body) = match data.split_first() {
        Some((&o, rest)) => (o, rest),
        None => (0, data),
    };
    let cfg = TraceConfig {
        format: format.into(),
        skip_bad_lines: opts & 1 == 1,
        non_monotonic: if opts & 2 == 2 { "error" } else { "clamp" }.into(),
        blkparse_event: if opts & 4 == 4 { "C" } else { "D" }.into(),
        time_unit: match (format, opts >> 3 & 3) {
            ("disksim" | "mqsim" | "auto", 1) => "us",
            ("disksim" | "mqsim" | "auto", 2) => "s",
            _ => "auto",
        }
        .into(),
        ..TraceConfig::default()
    };
    let Ok(mut r) = TraceReader::from_reader("fuzz", Cursor::new(body.to_vec()), &cfg) else { return };
    let mut last = 0;
    loop {
        match r.next_request() {
            Ok(Some(q)) => {
                assert!(q.size >= 1 && q.size <= 1 << 40, "size {}", q.size);
                assert!(q.offset.checked_add(q.size).is_some());
                assert!(q.arrival_ns >= last, "time went backwards");
                last = q.arrival_ns;
            }
            Ok(None) | Err(_) => return,
        }
    }
}
