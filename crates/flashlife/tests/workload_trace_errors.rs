//! Hostile and malformed trace input: every case fails with an exact `file:line: field:`
//! prefix, or is handled on purpose (ignored, clamped, skipped and counted).

use std::io::{Cursor, Write};

use flashlife::workload::{HostRequest, IoKind, TraceConfig, TraceFormat, TraceReader, Workload};
use flashlife::workload::{NonMonotonic, TimeUnit};

fn cfg(format: &str) -> TraceConfig {
    TraceConfig { format: format.into(), ..TraceConfig::default() }
}

/// Read everything: the requests, or the first error's message.
fn run(data: &[u8], c: &TraceConfig) -> Result<Vec<HostRequest>, String> {
    let mut r = TraceReader::from_reader("t", Cursor::new(data.to_vec()), c).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while let Some(q) = r.next_request().map_err(|e| e.to_string())? {
        out.push(q);
    }
    Ok(out)
}

#[track_caller]
fn fails(data: &[u8], format: &str, prefix: &str) {
    fails_with(data, &cfg(format), prefix)
}

#[track_caller]
fn fails_with(data: &[u8], c: &TraceConfig, prefix: &str) {
    match run(data, c) {
        Ok(v) => panic!("expected `{prefix}...`, got {} requests", v.len()),
        Err(e) => assert!(e.starts_with(prefix), "expected prefix `{prefix}`, got `{e}`"),
    }
}

const MSR_OK: &str = "128166372003061629,hm,1,Read,8192,4096,100\n";

#[test]
fn msr_malformed_lines() {
    let good = |rest: &str| format!("{MSR_OK}{rest}");
    fails(good("1,h,0,Read,0\n").as_bytes(), "msr", "t:2: fields: 5 comma-separated fields");
    fails(b"abc,h,0,Read,0,4096,1\n", "msr", "t:1: timestamp: `abc` is not a number");
    fails(b"-5,h,0,Read,0,4096,1\n", "msr", "t:1: timestamp: negative value");
    fails(
        good("128166372003061630,h,0,Trim,0,4096,1\n").as_bytes(),
        "msr",
        "t:2: type: `Trim`; expected Read or Write",
    );
    fails(good("128166372003061630,h,0,Read,x,4096,1\n").as_bytes(), "auto", "t:2: offset: `x` is not a number");
    fails(good("128166372003061630,h,0,Read,-4096,4096,1\n").as_bytes(), "auto", "t:2: offset: negative value");
    fails(good("128166372003061630,h,0,Write,0,0,1\n").as_bytes(), "auto", "t:2: size: zero-length request");
    fails(
        good("128166372003061630,h,0,Write,0,1099511627777,1\n").as_bytes(),
        "auto",
        "t:2: size: 1099511627777 bytes",
    );
    fails(good("128166372003061630,h,0,Write,18446744073709551615,4096,1\n").as_bytes(), "auto", "t:2: offset: ");
    fails(good("128166372003061630,h,99999,Write,0,4096,1\n").as_bytes(), "auto", "t:2: disk: 99999 is too large");
    let strict = TraceConfig { non_monotonic: NonMonotonic::Error, ..TraceConfig::default() };
    fails_with(good("1,h,0,Write,0,4096,1\n").as_bytes(), &strict, "t:2: time: time goes backwards");
}

#[test]
fn exactly_one_tebibyte_is_accepted() {
    let v = run(b"1,h,0,Write,0,1099511627776,1\n", &cfg("auto")).unwrap();
    assert_eq!(v[0].size, 1 << 40);
}

#[test]
fn non_monotonic_times_error_or_clamp() {
    let data = b"1000,h,0,Write,0,4096,1\n3000,h,0,Write,0,4096,1\n2000,h,0,Write,0,4096,1\n4000,h,0,Read,0,512,1\n";
    let strict = TraceConfig { non_monotonic: NonMonotonic::Error, ..TraceConfig::default() };
    fails_with(data, &strict, "t:3: time: time goes backwards");
    // Earlier than the first request is non-monotonic too (relative time would be negative).
    fails_with(b"1000,h,0,Write,0,4096,1\n500,h,0,Write,0,4096,1\n", &strict, "t:2: time: time goes backwards");
    let mut r = TraceReader::from_reader("t", Cursor::new(data.to_vec()), &TraceConfig::default()).unwrap();
    let mut times = Vec::new();
    while let Some(q) = r.next_request().unwrap() {
        times.push(q.arrival_ns);
    }
    // FILETIME ticks are 100 ns; the clamped request keeps the previous time.
    assert_eq!(times, vec![0, 200_000, 200_000, 300_000]);
    assert_eq!(r.trace_counters().clamped, 1);
}

#[test]
fn crlf_bom_blank_and_comment_lines() {
    let data = b"\xEF\xBB\xBF# a comment\r\n\r\n128166372003061629,hm,1,Read,8192,4096,100\r\n128166372003061639,hm,1,Write,0,512,100\r\n";
    let mut r = TraceReader::from_reader("t", Cursor::new(data.to_vec()), &TraceConfig::default()).unwrap();
    assert_eq!(r.format(), TraceFormat::Msr);
    let a = r.next_request().unwrap().unwrap();
    let b = r.next_request().unwrap().unwrap();
    assert!(r.next_request().unwrap().is_none());
    assert_eq!((a.kind, a.offset, a.size, a.arrival_ns, a.stream), (IoKind::Read, 8192, 4096, 0, 1));
    assert_eq!((b.kind, b.offset, b.size, b.arrival_ns), (IoKind::Write, 0, 512, 1000));
    assert_eq!(r.trace_counters().ignored, 2);
}

#[test]
fn gzip_is_transparent_for_any_format_and_corrupt_gzip_is_reported() {
    let plain = "time_ns,op,offset,size\r\n5,R,4096,4096\r\n9,W,0,8192\r\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(plain.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    for format in ["auto", "flashlife"] {
        let v = run(&gz, &cfg(format)).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!((v[1].arrival_ns, v[1].offset, v[1].size), (4, 0, 8192));
    }
    let mut broken = gz[..10].to_vec();
    broken.extend_from_slice(b"this is not deflate data at all");
    fails(&broken, "auto", "t:1: gzip: corrupt or truncated gzip data");
    fails(&broken, "flashlife", "t:1: gzip: corrupt or truncated gzip data");
    fails(&gz[..gz.len() - 12], "flashlife", "t:");
}

#[test]
fn binary_garbage_empty_files_and_long_lines() {
    fails(&[0u8, 0xff, 0xfe, 0x80, b'\n', 1, 2, 3], "auto", "t:1: format: invalid UTF-8");
    fails(b"\x7fELF\x02\x01\x01\x00\x00\x00", "auto", "t:1: format: cannot recognise the trace format");
    fails(b"hello world\n", "auto", "t:1: format: cannot recognise the trace format from `hello world`");
    let mut bad = MSR_OK.as_bytes().to_vec();
    bad.extend_from_slice(b"1,h,0,Read,\xff,4096,1\n");
    fails(&bad, "msr", "t:2: text: invalid UTF-8 at byte 12");
    fails(b"", "auto", "t:1: file: empty trace");
    fails(b"", "msr", "t:1: file: no requests");
    fails(b"# only\n\n# comments\n", "msr", "t:3: file: no requests");
    fails(b"\n\n\n", "auto", "t:1: file: no request line in the first 64 KiB");
    let long = vec![b'1'; 200_000];
    fails(&long, "msr", "t:1: text: line longer than 65536 bytes");
    let mut long2 = MSR_OK.as_bytes().to_vec();
    long2.extend_from_slice(&vec![b'x'; 100_000]);
    fails(&long2, "msr", "t:2: text: line longer than 65536 bytes");
}

#[test]
fn skip_bad_lines_counts_and_reports() {
    let data = format!("{MSR_OK}garbage\n{MSR_OK}1,h,0,Read,0,0,1\n{MSR_OK}");
    let c = TraceConfig { skip_bad_lines: true, ..cfg("msr") };
    let mut r = TraceReader::from_reader("t", Cursor::new(data.into_bytes()), &c).unwrap();
    let mut n = 0;
    while r.next_request().unwrap().is_some() {
        n += 1;
    }
    let k = r.trace_counters();
    assert_eq!((n, k.skipped, k.lines, k.requests), (3, 2, 5, 3));
    assert!(k.first_skipped.as_deref().unwrap().starts_with("t:2: fields: 1 comma-separated fields"));
    // A trace of nothing but bad lines is still an error, naming the first one.
    fails_with(
        b"garbage\nmore garbage\n",
        &c,
        "t:2: file: no valid request: all 2 bad lines were skipped (first: t:1: fields:",
    );
}

#[test]
fn disksim_and_mqsim_malformed_lines_and_units() {
    fails(b"-1 0 5 8 1\n", "disksim", "t:1: arrival_time: negative time `-1`");
    fails(b"0 0 5 8\n", "disksim", "t:1: fields: 4 whitespace-separated fields");
    fails(b"0 0 5 0 1\n", "mqsim", "t:1: size: zero-length request");
    fails(b"0 0 5 8 x\n", "mqsim", "t:1: flags: `x` is not a number");
    fails(b"0 0 x 8 1\n", "mqsim", "t:1: block: `x` is not a number");
    fails(b"0 0 36028797018963968 8 1\n", "mqsim", "t:1: block: 36028797018963968 blocks overflows");
    fails(b"0 0 0 4294967296 1\n", "mqsim", "t:1: size: 2199023255552 bytes is larger than 1 TiB");
    fails(b"0 70000 5 8 1\n", "mqsim", "t:1: device: 70000 is too large");
    fails(b"1.2.3 0 5 8 1\n", "disksim", "t:1: arrival_time: `1.2.3` is not a decimal number");
    let data = b"0.5 0 5 8 1\n1.75 3 16 1 0\n";
    let v = run(data, &cfg("disksim")).unwrap();
    assert_eq!(
        (v[1].arrival_ns, v[1].offset, v[1].size, v[1].kind, v[1].stream),
        (1_250_000, 8192, 512, IoKind::Write, 3)
    );
    assert_eq!(v[0].kind, IoKind::Read);
    let us = TraceConfig { time_unit: TimeUnit::Us, ..cfg("disksim") };
    assert_eq!(run(data, &us).unwrap()[1].arrival_ns, 1_250);
    assert_eq!(run(b"100 0 5 8 1\n350 0 5 8 1\n", &cfg("mqsim")).unwrap()[1].arrival_ns, 250);
    // Auto: a decimal point means DiskSim milliseconds, integers MQSim nanoseconds.
    assert_eq!(run(data, &cfg("auto")).unwrap()[1].arrival_ns, 1_250_000);
}

#[test]
fn spc_malformed_lines() {
    let ok = "0,20941264,8192,W,0.551706\n";
    let v = run(format!("{ok}1,16,512,r,0.651706,extra\n").as_bytes(), &cfg("auto")).unwrap();
    assert_eq!(
        (v[1].arrival_ns, v[1].offset, v[1].size, v[1].kind, v[1].stream),
        (100_000_000, 8192, 512, IoKind::Read, 1)
    );
    fails(format!("{ok}0,1,512,x,0.7\n").as_bytes(), "spc", "t:2: opcode: `x`; expected r, R, w or W");
    fails(format!("{ok}0,1,512,w,-0.7\n").as_bytes(), "spc", "t:2: timestamp: negative time");
    fails(format!("{ok}0,1,0,w,0.7\n").as_bytes(), "spc", "t:2: size: zero-length");
    fails(format!("{ok}0,1,512,w\n").as_bytes(), "umass", "t:2: fields: 4 comma-separated fields");
    fails(format!("{ok}0,zz,512,w,1\n").as_bytes(), "spc", "t:2: lba: `zz` is not a number");
}

#[test]
fn blkparse_malformed_ignored_and_trailer() {
    let ok = "  8,0    1        1     0.000100000  5025  D   R 8 + 8 [p]\n";
    let data = format!(
        "{ok}  8,0 1 2 0.0002 5025  Q   W 16 + 8 [p]\n  8,0 1 3 0.0003 0 m N cfq / x\n  8,0 1 4 0.0004 7 D FWS 0 + 0 [p]\n\
         8,0 1 5 0.0005 7 D DS 0 + 8 [p]\n  8,0 1 6 0.0006 7 D WS 16 + 16 [p]\nCPU0 (8,0):\n Reads Queued: 0, 0KiB\n\
         Total (8,0):\nThroughput (R/W): 0KiB/s / 0KiB/s\nEvents (8,0): 6 entries\n"
    );
    let mut r = TraceReader::from_reader("t", Cursor::new(data.into_bytes()), &TraceConfig::default()).unwrap();
    assert_eq!(r.format(), TraceFormat::Blkparse);
    let a = r.next_request().unwrap().unwrap();
    let b = r.next_request().unwrap().unwrap();
    assert!(r.next_request().unwrap().is_none());
    assert_eq!((a.kind, a.offset, a.size, a.arrival_ns), (IoKind::Read, 4096, 4096, 0));
    assert_eq!((b.kind, b.offset, b.size, b.arrival_ns), (IoKind::Write, 8192, 8192, 500_000));
    assert_eq!(r.trace_counters().ignored, 9);
    fails(format!("{ok}hello there\n").as_bytes(), "blkparse", "t:2: event: `hello there` is not a blkparse event");
    fails(format!("{ok}8,0 1 2 0.1 5 D R xx + 8 [p]\n").as_bytes(), "blkparse", "t:2: sector: `xx` is not a number");
    fails(format!("{ok}8,0 1 2 0.1 5 D R 16 + y [p]\n").as_bytes(), "blkparse", "t:2: count: `y` is not a number");
    fails(format!("{ok}8,0 1 2 -0.1 5 D R 16 + 8 [p]\n").as_bytes(), "blkparse", "t:2: time: negative time");
    fails(format!("{ok}8,0 1 2 0.1 5 D R 16 8 [p] x\n").as_bytes(), "blkparse", "t:2: sector: ");
    fails(format!("{ok}8,0 1 2 0.1 5 D W 16\n").as_bytes(), "blkparse", "t:2: sector: ");
}

#[test]
fn cloudphysics_malformed_and_other_opcodes() {
    let head = "version,time,op,size,lbn\n1,100,2a,512,8\n";
    let data = format!("{head}1,150,0x35,0,0\n1,200,0x88,4096,16\n1,300,12,36,0\n");
    let mut r = TraceReader::from_reader("t", Cursor::new(data.into_bytes()), &TraceConfig::default()).unwrap();
    assert_eq!(r.format(), TraceFormat::CloudPhysics);
    let a = r.next_request().unwrap().unwrap();
    let b = r.next_request().unwrap().unwrap();
    assert!(r.next_request().unwrap().is_none());
    assert_eq!((a.kind, a.offset, a.size), (IoKind::Write, 4096, 512));
    // libCacheSim's CSV keeps whole seconds: 100 s after the first record.
    assert_eq!((b.kind, b.offset, b.size, b.arrival_ns), (IoKind::Read, 8192, 4096, 100_000_000_000));
    assert_eq!(r.trace_counters().ignored, 3); // header, SYNCHRONIZE CACHE, INQUIRY
                                               // The vscsi originals' microseconds, when the file says so.
    let us = TraceConfig { time_unit: TimeUnit::Us, ..cfg("cloudphysics") };
    assert_eq!(run(format!("{head}1,200,0x88,4096,16\n").as_bytes(), &us).unwrap()[1].arrival_ns, 100_000);
    fails(format!("{head}1,200,zz,512,8\n").as_bytes(), "cloudphysics", "t:3: op: `zz`; expected a SCSI opcode");
    fails(format!("{head}1,200,28,0,8\n").as_bytes(), "cloudphysics", "t:3: size: zero-length");
    fails(format!("{head}1,-200,28,512,8\n").as_bytes(), "cloudphysics", "t:3: time: negative time");
    fails(format!("{head}1,200,28,512\n").as_bytes(), "cloudphysics", "t:3: fields: 4 comma-separated");
    fails(format!("{head}1,200,28,512,q\n").as_bytes(), "cloudphysics", "t:3: lbn: `q` is not a number");
}

#[test]
fn flashlife_csv_format() {
    let v = run(b"time_ns,op,offset,size,stream\n10,W,0,4096,2\n15,R,4096,512\n", &cfg("auto")).unwrap();
    assert_eq!((v[0].arrival_ns, v[0].stream, v[1].arrival_ns, v[1].kind), (0, 2, 5, IoKind::Read));
    fails(b"time,op,offset,size\n10,W,0,4096\n", "flashlife", "t:1: header: `time,op,offset,size`");
    fails(b"time_ns,op,offset,size\n10,X,0,4096\n", "flashlife", "t:2: op: `X`; expected R, W or T (trim)");
    fails(b"time_ns,op,offset,size\n10,W,0,4096,70000\n", "flashlife", "t:2: stream: 70000 is too large");
    fails(b"time_ns,op,offset,size\n10,W,0\n", "flashlife", "t:2: fields: 3 comma-separated");
    fails(b"time_ns,op,offset,size\n-10,W,0,1\n", "flashlife", "t:2: time_ns: negative value");
}

#[test]
fn flashlife_csv_budget_column() {
    // Per-request latency budgets (read relaxation hints): a sixth column, empty or 0 = none.
    let v = run(
        b"time_ns,op,offset,size,stream,budget_us\n10,R,0,4096,2,250\n15,R,4096,512,0,\n20,W,0,4096\n25,R,0,4096,1,0\n",
        &cfg("auto"),
    )
    .unwrap();
    let got: Vec<(u16, u32)> = v.iter().map(|r| (r.stream, r.budget_us)).collect();
    assert_eq!(got, [(2, 250), (0, 0), (0, 0), (1, 0)]);
    assert_eq!(v[2].kind, IoKind::Write);
    // Older files without the column carry no budget.
    let v = run(b"time_ns,op,offset,size,stream\n10,R,0,4096,2\n", &cfg("auto")).unwrap();
    assert_eq!(v[0].budget_us, 0);
    fails(
        b"time_ns,op,offset,size,stream,budget_us\n10,R,0,4096,0,-5\n",
        "flashlife",
        "t:2: budget_us: negative value",
    );
    fails(
        b"time_ns,op,offset,size,stream,budget_us\n10,R,0,4096,0,1.5\n",
        "flashlife",
        "t:2: budget_us: `1.5` is not a number",
    );
    fails(
        b"time_ns,op,offset,size,stream,budget_us\n10,R,0,4096,0,5000000000\n",
        "flashlife",
        "t:2: budget_us: 5000000000 is too large",
    );
    fails(
        b"time_ns,op,offset,size,stream,budget_us\n10,R,0,4096,0,1,2\n",
        "flashlife",
        "t:2: fields: 7 comma-separated",
    );
    fails(b"time_ns,op,offset,size,budget\n10,R,0,4096\n", "flashlife", "t:1: header: `time_ns,op,offset,size,budget`");
}
