//! Streaming trace readers.
//!
//! One [`TraceReader`] reads every supported format, line by line through a `BufRead`, with
//! one reused line buffer: memory stays constant however long the trace. Gzip is detected by
//! its magic bytes and decompressed on the fly for any format; the format itself is given by
//! name or detected from the first content line. Each line either yields a request, is
//! ignored on purpose (blank lines, `#` comments, headers, blkparse events of other kinds,
//! blkparse trailers, non-data commands) or is an error naming `file:line: field:` and what
//! was expected. With `skip_bad_lines` errors are counted and skipped instead.
//!
//! Arrival times are relative to the first request. See `docs/workloads.md`.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;

use flate2::read::MultiGzDecoder;
use serde::Serialize;

use super::{Discards, HostRequest, IoKind, NonMonotonic, TimeUnit, TraceConfig, Workload};
use crate::error::{Error, Result};

/// Largest request accepted: anything larger is a corrupt record, not a real I/O.
pub const MAX_REQUEST_BYTES: u64 = 1 << 40;
/// Longest line accepted; a longer one is an error (binary data, or a missing newline in a
/// multi-gigabyte file) and is never held in memory beyond this bound.
pub const MAX_LINE_BYTES: usize = 64 * 1024;
/// Bytes examined to detect the format.
const SNIFF_BYTES: u64 = 64 * 1024;
/// Size of a block / sector in DiskSim, SPC, blkparse and CloudPhysics traces.
const SECTOR: u64 = 512;

/// The trace formats flashlife reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    Msr,
    /// DiskSim ASCII `arrival device block size flags`, arrival in ms by default.
    Disksim,
    /// MQSim (same layout as DiskSim), arrival in ns by default.
    Mqsim,
    /// UMass / SPC CSV: `ASU,LBA,Size,Opcode,Timestamp`.
    Spc,
    /// Linux blkparse default text output.
    Blkparse,
    /// CloudPhysics CSV: `version,time,op,size,lbn` with a header.
    CloudPhysics,
    /// flashlife's own CSV: `time_ns,op,offset,size[,stream[,budget_us]]` with a header;
    /// `op` is `R`, `W` or `T` (trim / discard).
    Flashlife,
}

impl TraceFormat {
    /// Every format name, for messages.
    pub const NAMES: &'static str = "msr, disksim, mqsim, spc, blkparse, cloudphysics, flashlife";
    /// Every format.
    pub const ALL: [TraceFormat; 7] = [
        TraceFormat::Msr,
        TraceFormat::Disksim,
        TraceFormat::Mqsim,
        TraceFormat::Spc,
        TraceFormat::Blkparse,
        TraceFormat::CloudPhysics,
        TraceFormat::Flashlife,
    ];

    /// The configuration name of the format.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Msr => "msr",
            TraceFormat::Disksim => "disksim",
            TraceFormat::Mqsim => "mqsim",
            TraceFormat::Spc => "spc",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::CloudPhysics => "cloudphysics",
            TraceFormat::Flashlife => "flashlife",
        }
    }

    /// The format called `name` (`umass` is accepted for `spc`).
    pub fn from_name(name: &str) -> Option<TraceFormat> {
        TraceFormat::ALL.into_iter().find(|f| f.name() == name).or(if name == "umass" {
            Some(TraceFormat::Spc)
        } else {
            None
        })
    }

    /// Guess the format from the first content line of a trace (`None`: unrecognised).
    /// DiskSim and MQSim share a layout: an integer first field means MQSim-style ns, a
    /// decimal one DiskSim-style ms (override with `time_unit`).
    pub fn detect(line: &str) -> Option<TraceFormat> {
        let t = line.trim();
        let starts = |p: &str| t.len() >= p.len() && t.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes());
        if starts("time_ns,op,offset,size") {
            return Some(TraceFormat::Flashlife);
        }
        if starts("version,time,op,size,lbn") {
            return Some(TraceFormat::CloudPhysics);
        }
        let uint = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let decimal = |s: &str| {
            let (a, b) = s.split_once('.').unwrap_or((s, ""));
            (uint(a) || a.is_empty()) && (uint(b) || b.is_empty()) && !(a.is_empty() && b.is_empty())
        };
        let mut f = [""; 5];
        let mut n = 0;
        for (i, x) in t.split_ascii_whitespace().enumerate() {
            if i < f.len() {
                f[i] = x;
            }
            n += 1;
        }
        // blkparse first: its device field `maj,min` holds a comma.
        if n >= 7 && f[0].split_once(',').is_some_and(|(a, b)| uint(a) && uint(b)) {
            return Some(TraceFormat::Blkparse);
        }
        if t.contains(',') {
            let mut f = [""; 6];
            let mut n = 0;
            for (i, x) in t.split(',').enumerate() {
                if i < f.len() {
                    f[i] = x.trim();
                }
                n += 1;
            }
            if n >= 6 && uint(f[0]) && (f[3].eq_ignore_ascii_case("read") || f[3].eq_ignore_ascii_case("write")) {
                return Some(TraceFormat::Msr);
            }
            if n >= 5 && uint(f[1]) && uint(f[2]) && matches!(f[3], "r" | "R" | "w" | "W") && decimal(f[4]) {
                return Some(TraceFormat::Spc);
            }
            if n == 5 && uint(f[0]) && parse_scsi_op(f[2]).is_some() && uint(f[3]) && uint(f[4]) {
                return Some(TraceFormat::CloudPhysics);
            }
            return None;
        }
        if n == 5 && decimal(f[0]) && f[1..].iter().all(|x| uint(x)) {
            return Some(if f[0].contains('.') { TraceFormat::Disksim } else { TraceFormat::Mqsim });
        }
        None
    }
}

/// What a trace reader has seen so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TraceCounters {
    /// Lines read (including ignored and skipped ones), over all passes.
    pub lines: u64,
    /// Requests produced by the reader (before filters and folding).
    pub requests: u64,
    /// Lines ignored on purpose: blank, comments, headers, other blkparse events and
    /// trailers, non-data commands (flushes, other SCSI opcodes), discards unless
    /// `discards = "trim"`.
    pub ignored: u64,
    /// Malformed lines skipped because `skip_bad_lines` is on.
    pub skipped: u64,
    /// Requests whose time went backwards and was clamped to the previous time.
    pub clamped: u64,
    /// Requests removed by the read/write filter.
    pub filtered: u64,
    /// Mapping units of requests dropped by `remap_first` because they lie beyond the first
    /// distinct units kept.
    pub dropped: u64,
    /// Completed passes over the trace (loop replay).
    pub passes: u64,
    /// The first skipped line's error message, `file:line: field: message`.
    pub first_skipped: Option<String>,
}

impl TraceCounters {
    /// Add another pass's counters to these (first skipped message kept).
    pub fn absorb(&mut self, o: &TraceCounters) {
        self.lines += o.lines;
        self.requests += o.requests;
        self.ignored += o.ignored;
        self.skipped += o.skipped;
        self.clamped += o.clamped;
        self.filtered += o.filtered;
        self.dropped += o.dropped;
        self.passes += o.passes;
        if self.first_skipped.is_none() {
            self.first_skipped.clone_from(&o.first_skipped);
        }
    }
}

/// A problem on one line: the field and the message (what was wrong, what was expected).
#[derive(Debug)]
struct LineErr {
    field: &'static str,
    msg: Cow<'static, str>,
}

fn err(field: &'static str, msg: impl Into<Cow<'static, str>>) -> LineErr {
    LineErr { field, msg: msg.into() }
}

/// A parsed record before its time is made relative.
struct Raw {
    /// Absolute time in ns from the trace's own origin.
    time_ns: u128,
    kind: IoKind,
    offset: u64,
    size: u64,
    stream: u16,
    /// Per-request latency budget in us (flashlife CSV only); 0 = none.
    budget_us: u32,
}

enum Parsed {
    Request(Raw),
    Ignored,
}

/// Outcome of reading one bounded line.
enum LineRead {
    Eof,
    Line,
    TooLong,
}

/// Read one line (without its `\n`) into `buf`, keeping at most `max` bytes; the rest of an
/// over-long line is consumed and dropped so memory stays bounded. Built on `read_until`
/// and `skip_until` so the newline search is std's optimised memchr even in debug builds.
fn read_line_bounded(r: &mut dyn BufRead, buf: &mut Vec<u8>, max: usize) -> io::Result<LineRead> {
    buf.clear();
    let n = r.take(max as u64 + 1).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(LineRead::Eof);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        return Ok(LineRead::Line);
    }
    if buf.len() <= max {
        return Ok(LineRead::Line); // last line, without a newline
    }
    r.skip_until(b'\n')?;
    buf.truncate(max);
    Ok(LineRead::TooLong)
}

/// Streaming reader of one trace: a [`Workload`] that ends with the trace.
pub struct TraceReader {
    src: Box<dyn BufRead + Send>,
    file: String,
    format: TraceFormat,
    gzip: bool,
    /// ns per time unit of DiskSim/MQSim/CloudPhysics arrival times, as a power of ten.
    time_pow10: u32,
    blkparse_event: &'static str,
    /// Discard records become trim requests (`workload.trace.discards = "trim"`); ignored
    /// otherwise.
    trims: bool,
    clamp: bool,
    skip_bad_lines: bool,
    buf: Vec<u8>,
    line: u64,
    /// First content line seen (headers are only recognised there).
    seen_content: bool,
    /// blkparse: the per-CPU summary at the end has started.
    in_trailer: bool,
    t0: Option<u128>,
    last_ns: u64,
    counters: TraceCounters,
    done: bool,
}

impl TraceReader {
    /// Open a trace file (plain or gzip) with the options of `cfg` (format, time unit,
    /// blkparse event, non-monotonic policy, skip_bad_lines; shaping options are not the
    /// reader's business).
    pub fn open(path: impl AsRef<Path>, cfg: &TraceConfig) -> Result<TraceReader> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let f = File::open(path).map_err(|e| Error::io(&name, e))?;
        if f.metadata().map(|m| m.is_dir()).unwrap_or(false) {
            return Err(Error::io(&name, "is a directory, expected a trace file"));
        }
        TraceReader::from_reader(name, f, cfg)
    }

    /// Read a trace from any byte stream; `name` stands for the file in messages.
    pub fn from_reader(name: impl Into<String>, reader: impl Read + Send + 'static, cfg: &TraceConfig) -> Result<Self> {
        let file = name.into();
        cfg.validate("workload.trace")?;
        let mut raw: Box<dyn Read + Send> = Box::new(reader);
        // Sniff the gzip magic without losing the bytes: read them, then chain them back.
        let mut magic = Vec::with_capacity(2);
        (&mut raw).take(2).read_to_end(&mut magic).map_err(|e| Error::io(&file, e))?;
        let gzip = magic == [0x1f, 0x8b];
        let chained = Cursor::new(magic).chain(raw);
        let mut text: Box<dyn Read + Send> =
            if gzip { Box::new(MultiGzDecoder::new(chained)) } else { Box::new(chained) };
        let format = if cfg.format == "auto" {
            let mut prefix = Vec::new();
            (&mut text).take(SNIFF_BYTES).read_to_end(&mut prefix).map_err(|e| stream_err(&file, gzip, 1, e))?;
            let format = detect_prefix(&file, &prefix)?;
            text = Box::new(Cursor::new(prefix).chain(text));
            format
        } else {
            TraceFormat::from_name(&cfg.format).unwrap_or(TraceFormat::Msr)
        };
        let unit = match (cfg.time_unit, format) {
            (TimeUnit::S, _) => 9,
            (TimeUnit::Ms, _) => 6,
            (TimeUnit::Us, _) => 3,
            (TimeUnit::Ns, _) => 0,
            (TimeUnit::Auto, TraceFormat::Disksim) => 6,
            // libCacheSim's CSV of the CloudPhysics traces (the layout this format reads) keeps
            // whole seconds; the vscsi originals' microseconds are `time_unit = "us"`.
            (TimeUnit::Auto, TraceFormat::CloudPhysics) => 9,
            (TimeUnit::Auto, _) => 0,
        };
        Ok(TraceReader {
            src: Box::new(BufReader::with_capacity(64 * 1024, text)),
            file,
            format,
            gzip,
            time_pow10: unit,
            blkparse_event: cfg.blkparse_event.name(),
            trims: cfg.discards == Discards::Trim,
            clamp: cfg.non_monotonic == NonMonotonic::Clamp,
            skip_bad_lines: cfg.skip_bad_lines,
            buf: Vec::with_capacity(256),
            line: 0,
            seen_content: false,
            in_trailer: false,
            t0: None,
            last_ns: 0,
            counters: TraceCounters::default(),
            done: false,
        })
    }

    /// The format being read (detected or given).
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// Whether the input was gzip-compressed.
    pub fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// Counters so far (lines, requests, ignored, skipped, clamped).
    pub fn trace_counters(&self) -> &TraceCounters {
        &self.counters
    }

    /// Parse one line; `Ok(None)` for lines ignored on purpose.
    fn parse_line(&mut self) -> std::result::Result<Option<HostRequest>, LineErr> {
        let mut bytes = &self.buf[..];
        if self.line == 1 && bytes.starts_with(b"\xEF\xBB\xBF") {
            bytes = &bytes[3..]; // UTF-8 byte-order mark written by some Windows tools
        }
        let text = std::str::from_utf8(bytes).map_err(|e| {
            err(
                "text",
                format!(
                    "invalid UTF-8 at byte {} of the line; expected a text trace (binary or corrupt file?)",
                    e.valid_up_to() + 1
                ),
            )
        })?;
        let t = text.trim();
        if t.is_empty() || t.starts_with('#') {
            return Ok(None);
        }
        let first = !self.seen_content;
        self.seen_content = true;
        let parsed = match self.format {
            TraceFormat::Msr => parse_msr(t)?,
            TraceFormat::Disksim | TraceFormat::Mqsim => parse_disksim(t, self.time_pow10)?,
            TraceFormat::Spc => parse_spc(t)?,
            TraceFormat::Blkparse => parse_blkparse(t, self.blkparse_event, self.trims, &mut self.in_trailer)?,
            TraceFormat::CloudPhysics => {
                if first && t.to_ascii_lowercase().starts_with("version,") {
                    Parsed::Ignored
                } else {
                    parse_cloudphysics(t, self.time_pow10)?
                }
            }
            TraceFormat::Flashlife => {
                if first {
                    check_flashlife_header(t)?;
                    Parsed::Ignored
                } else {
                    parse_flashlife(t, self.trims)?
                }
            }
        };
        match parsed {
            Parsed::Ignored => Ok(None),
            Parsed::Request(raw) => {
                let arrival_ns = self.relative_time(raw.time_ns)?;
                Ok(Some(HostRequest {
                    arrival_ns,
                    kind: raw.kind,
                    offset: raw.offset,
                    size: raw.size,
                    stream: raw.stream,
                    budget_us: raw.budget_us,
                }))
            }
        }
    }

    /// Time relative to the first request, with the non-monotonic policy applied.
    fn relative_time(&mut self, t: u128) -> std::result::Result<u64, LineErr> {
        let t0 = *self.t0.get_or_insert(t);
        let rel = t as i128 - t0 as i128; // both < 2^115: no overflow
        if rel < self.last_ns as i128 {
            if self.clamp {
                self.counters.clamped += 1;
                return Ok(self.last_ns);
            }
            return Err(err(
                "time",
                format!(
                    "time goes backwards: {rel} ns after the first request, before the previous request at {} ns; \
                     expected non-decreasing times (or set workload.trace.non_monotonic = \"clamp\")",
                    self.last_ns
                ),
            ));
        }
        let rel = u64::try_from(rel).map_err(|_| {
            err("time", format!("{rel} ns after the first request; expected at most {} ns (584 years)", u64::MAX))
        })?;
        self.last_ns = rel;
        Ok(rel)
    }

    fn line_error(&self, e: LineErr) -> Error {
        Error::trace(&self.file, self.line, e.field, e.msg)
    }
}

/// An I/O error while reading: a corrupt gzip stream is reported at the line reached.
fn stream_err(file: &str, gzip: bool, line: u64, e: io::Error) -> Error {
    if gzip {
        Error::trace(file, line, "gzip", format!("corrupt or truncated gzip data ({e}); expected a valid gzip stream"))
    } else {
        Error::io(file, e)
    }
}

/// Detect the format from the first bytes of the (decompressed) trace.
fn detect_prefix(file: &str, prefix: &[u8]) -> Result<TraceFormat> {
    let mut lineno = 0;
    for raw in prefix.split(|&b| b == b'\n') {
        lineno += 1;
        let raw = if lineno == 1 { raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw) } else { raw };
        let Ok(text) = std::str::from_utf8(raw) else {
            // The last line of the prefix may be cut inside a multi-byte character.
            if prefix.len() as u64 == SNIFF_BYTES && raw.as_ptr_range().end == prefix.as_ptr_range().end {
                break;
            }
            return Err(Error::trace(
                file,
                lineno,
                "format",
                "invalid UTF-8; expected a text trace (plain or gzip): is this a binary file?",
            ));
        };
        let t = text.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        return TraceFormat::detect(t).ok_or_else(|| {
            let shown: String = t.chars().take(60).collect();
            Error::trace(
                file,
                lineno,
                "format",
                format!(
                    "cannot recognise the trace format from `{shown}`; expected a line of one of: {} \
                     (or set workload.trace.format)",
                    TraceFormat::NAMES
                ),
            )
        });
    }
    Err(Error::trace(
        file,
        1,
        "file",
        if prefix.is_empty() {
            "empty trace; expected at least one request line".to_string()
        } else {
            "no request line in the first 64 KiB (only blank or comment lines); expected a trace".to_string()
        },
    ))
}

impl Workload for TraceReader {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        if self.done {
            return Ok(None);
        }
        loop {
            let read = read_line_bounded(&mut *self.src, &mut self.buf, MAX_LINE_BYTES)
                .map_err(|e| stream_err(&self.file, self.gzip, self.line + 1, e))?;
            let outcome = match read {
                LineRead::Eof => {
                    self.done = true;
                    if self.counters.requests == 0 {
                        let msg = match &self.counters.first_skipped {
                            Some(first) => format!(
                                "no valid request: all {} bad lines were skipped (first: {first}); expected at least one",
                                self.counters.skipped
                            ),
                            None => "no requests (empty trace, or only ignored lines); expected at least one request"
                                .to_string(),
                        };
                        return Err(Error::trace(&self.file, self.line.max(1), "file", msg));
                    }
                    self.counters.passes += 1;
                    return Ok(None);
                }
                LineRead::TooLong => {
                    self.line += 1;
                    Err(err(
                        "text",
                        format!("line longer than {MAX_LINE_BYTES} bytes; expected a text trace (binary file?)"),
                    ))
                }
                LineRead::Line => {
                    self.line += 1;
                    if self.buf.last() == Some(&b'\r') {
                        self.buf.pop(); // CRLF line ends
                    }
                    self.parse_line()
                }
            };
            self.counters.lines += 1;
            match outcome {
                Ok(Some(req)) => {
                    self.counters.requests += 1;
                    return Ok(Some(req));
                }
                Ok(None) => self.counters.ignored += 1,
                Err(e) => {
                    let e = self.line_error(e);
                    if !self.skip_bad_lines {
                        self.done = true;
                        return Err(e);
                    }
                    self.counters.skipped += 1;
                    if self.counters.first_skipped.is_none() {
                        self.counters.first_skipped = Some(e.to_string());
                    }
                }
            }
        }
    }

    fn counters(&self) -> Option<TraceCounters> {
        Some(self.counters.clone())
    }
}

// ---------------------------------------------------------------------------------------
// Field parsers. They never allocate on the success path.

fn parse_u64(field: &'static str, s: &str, what: &'static str) -> std::result::Result<u64, LineErr> {
    let s = s.trim();
    // Fast path first; the checks below only run to explain a failure.
    if let Ok(v) = s.parse::<u64>() {
        return Ok(v);
    }
    if s.starts_with('-') {
        return Err(err(field, format!("negative value `{}`; expected {what}", shorten(s))));
    }
    let digits = s.strip_prefix('+').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err(field, format!("`{}` is not a number; expected {what}", shorten(s))));
    }
    Err(err(field, format!("`{}` is too large; expected {what}", shorten(s))))
}

/// A non-negative decimal `int[.frac]` in units of 10^pow10 ns, converted to ns exactly
/// (digits finer than 1 ns are dropped).
fn parse_time(field: &'static str, s: &str, pow10: u32, what: &'static str) -> std::result::Result<u128, LineErr> {
    let s = s.trim();
    if s.starts_with('-') {
        return Err(err(field, format!("negative time `{}`; expected {what}", shorten(s))));
    }
    let (ip, fp) = s.split_once('.').unwrap_or((s, ""));
    let digits = |x: &str| x.bytes().all(|b| b.is_ascii_digit());
    if (ip.is_empty() && fp.is_empty()) || !digits(ip) || !digits(fp) {
        return Err(err(field, format!("`{}` is not a decimal number; expected {what}", shorten(s))));
    }
    let ip = ip.trim_start_matches('0');
    if ip.len() > 24 {
        return Err(err(field, format!("`{}` is too large; expected {what}", shorten(s))));
    }
    let mut v: u128 = 0;
    for b in ip.bytes() {
        v = v * 10 + u128::from(b - b'0');
    }
    v *= 10u128.pow(pow10);
    let fb = fp.as_bytes();
    let mut f: u128 = 0;
    for i in 0..pow10 as usize {
        f = f * 10 + u128::from(fb.get(i).map_or(0, |b| b - b'0'));
    }
    Ok(v + f)
}

fn check_size(size: u64) -> std::result::Result<u64, LineErr> {
    if size == 0 {
        return Err(err("size", "zero-length request; expected at least 1 byte"));
    }
    if size > MAX_REQUEST_BYTES {
        return Err(err("size", format!("{size} bytes is larger than 1 TiB; expected a real request size")));
    }
    Ok(size)
}

fn check_end(offset: u64, size: u64) -> std::result::Result<u64, LineErr> {
    if offset.checked_add(size).is_none() {
        return Err(err(
            "offset",
            format!("{offset} + {size} bytes overflows 64-bit addresses; expected a real offset"),
        ));
    }
    Ok(offset)
}

fn blocks_to_bytes(field: &'static str, blocks: u64) -> std::result::Result<u64, LineErr> {
    blocks.checked_mul(SECTOR).ok_or_else(|| err(field, format!("{blocks} blocks overflows 64-bit byte addresses")))
}

fn stream_of(field: &'static str, v: u64) -> std::result::Result<u16, LineErr> {
    u16::try_from(v).map_err(|_| err(field, format!("{v} is too large; expected 0..=65535")))
}

fn shorten(s: &str) -> &str {
    match s.char_indices().nth(40) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Split `t` on `sep` into `out`, returning the number of fields (which may exceed `out`).
fn split_into<'a>(t: &'a str, sep: char, out: &mut [&'a str]) -> usize {
    let mut n = 0;
    for (i, x) in t.split(sep).enumerate() {
        if i < out.len() {
            out[i] = x.trim();
        }
        n += 1;
    }
    n
}

fn split_ws<'a>(t: &'a str, out: &mut [&'a str]) -> usize {
    let mut n = 0;
    for (i, x) in t.split_ascii_whitespace().enumerate() {
        if i < out.len() {
            out[i] = x;
        }
        n += 1;
    }
    n
}

fn parse_msr(t: &str) -> std::result::Result<Parsed, LineErr> {
    let mut f = [""; 7];
    let n = split_into(t, ',', &mut f);
    if !(6..=7).contains(&n) {
        return Err(err(
            "fields",
            format!(
                "{n} comma-separated fields; expected 7: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"
            ),
        ));
    }
    let ticks = parse_u64("timestamp", f[0], "a Windows FILETIME (100 ns ticks)")?;
    let stream = stream_of("disk", parse_u64("disk", f[2], "a disk number")?)?;
    let kind = if f[3].eq_ignore_ascii_case("read") {
        IoKind::Read
    } else if f[3].eq_ignore_ascii_case("write") {
        IoKind::Write
    } else {
        return Err(err("type", format!("`{}`; expected Read or Write", shorten(f[3]))));
    };
    let offset = parse_u64("offset", f[4], "a byte offset")?;
    let size = check_size(parse_u64("size", f[5], "a size in bytes")?)?;
    let offset = check_end(offset, size)?;
    Ok(Parsed::Request(Raw { time_ns: u128::from(ticks) * 100, kind, offset, size, stream, budget_us: 0 }))
}

fn parse_disksim(t: &str, pow10: u32) -> std::result::Result<Parsed, LineErr> {
    let mut f = [""; 5];
    let n = split_ws(t, &mut f);
    if n != 5 {
        return Err(err(
            "fields",
            format!("{n} whitespace-separated fields; expected 5: arrival_time device block size flags"),
        ));
    }
    let time_ns = parse_time("arrival_time", f[0], pow10, "a non-negative arrival time")?;
    let stream = stream_of("device", parse_u64("device", f[1], "a device number")?)?;
    let block = parse_u64("block", f[2], "a block number (512-byte blocks)")?;
    let blocks = parse_u64("size", f[3], "a size in 512-byte blocks")?;
    let flags = parse_u64("flags", f[4], "flags (bit 0: 1 = read, 0 = write)")?;
    let size = check_size(blocks_to_bytes("size", blocks)?)?;
    let offset = check_end(blocks_to_bytes("block", block)?, size)?;
    let kind = if flags & 1 == 1 { IoKind::Read } else { IoKind::Write };
    Ok(Parsed::Request(Raw { time_ns, kind, offset, size, stream, budget_us: 0 }))
}

fn parse_spc(t: &str) -> std::result::Result<Parsed, LineErr> {
    let mut f = [""; 5];
    let n = split_into(t, ',', &mut f);
    if n < 5 {
        return Err(err("fields", format!("{n} comma-separated fields; expected 5: ASU,LBA,Size,Opcode,Timestamp")));
    }
    let stream = stream_of("asu", parse_u64("asu", f[0], "an ASU number")?)?;
    let lba = parse_u64("lba", f[1], "a block address (512-byte blocks)")?;
    let size = check_size(parse_u64("size", f[2], "a size in bytes")?)?;
    let kind = match f[3] {
        "r" | "R" => IoKind::Read,
        "w" | "W" => IoKind::Write,
        o => return Err(err("opcode", format!("`{}`; expected r, R, w or W", shorten(o)))),
    };
    let time_ns = parse_time("timestamp", f[4], 9, "a non-negative time in seconds")?;
    let offset = check_end(blocks_to_bytes("lba", lba)?, size)?;
    Ok(Parsed::Request(Raw { time_ns, kind, offset, size, stream, budget_us: 0 }))
}

/// True for the lines of the per-CPU / total summary blkparse prints at the end.
fn is_blkparse_trailer_start(t: &str) -> bool {
    let cpu = t.strip_prefix("CPU").is_some_and(|r| {
        let d = r.bytes().take_while(|b| b.is_ascii_digit()).count();
        d > 0 && r[d..].starts_with(" (")
    });
    cpu || t.starts_with("Total (")
}

fn parse_blkparse(t: &str, event: &str, trims: bool, in_trailer: &mut bool) -> std::result::Result<Parsed, LineErr> {
    let mut f = [""; 10];
    let n = split_ws(t, &mut f);
    let is_event = n >= 6
        && f[0].split_once(',').is_some_and(|(a, b)| {
            !a.is_empty()
                && !b.is_empty()
                && a.bytes().all(|c| c.is_ascii_digit())
                && b.bytes().all(|c| c.is_ascii_digit())
        });
    if !is_event {
        if *in_trailer || is_blkparse_trailer_start(t) {
            *in_trailer = true;
            return Ok(Parsed::Ignored);
        }
        return Err(err(
            "event",
            format!(
                "`{}` is not a blkparse event; expected `maj,min cpu seq time pid action rwbs sector + count`",
                shorten(t)
            ),
        ));
    }
    if f[5] != event {
        return Ok(Parsed::Ignored); // other actions (Q, G, I, M, C/D, m, ...) on purpose
    }
    let rwbs = f[6];
    // `D` in rwbs marks a discard (TRIM), alone or with `W` (older kernels) and `S`.
    let kind = if rwbs.contains('D') {
        if !trims {
            return Ok(Parsed::Ignored); // workload.trace.discards = "ignore"
        }
        IoKind::Trim
    } else if rwbs.contains('R') {
        IoKind::Read
    } else if rwbs.contains('W') {
        IoKind::Write
    } else {
        return Ok(Parsed::Ignored); // no data: N (pass-through), F (flush) alone
    };
    if n > 8 && f[8].starts_with('[') {
        // `sector [error]` with no `+ count`: blkparse prints this for commands that carry
        // no data (flush / barrier completions).
        return Ok(Parsed::Ignored);
    }
    if n < 10 || f[8] != "+" {
        return Err(err("sector", format!("`{}`; expected `sector + count` after the rwbs field", shorten(t))));
    }
    let time_ns = parse_time("time", f[3], 9, "a non-negative time in seconds")?;
    let sector = parse_u64("sector", f[7], "a sector number (512 bytes)")?;
    let count = parse_u64("count", f[9], "a sector count")?;
    if count == 0 {
        return Ok(Parsed::Ignored); // zero-length barriers / flushes carry no data
    }
    let size = blocks_to_bytes("count", count)?;
    let size = check_size(size).map_err(|e| LineErr { field: "count", ..e })?;
    let offset = check_end(blocks_to_bytes("sector", sector)?, size)?;
    Ok(Parsed::Request(Raw { time_ns, kind, offset, size, stream: 0, budget_us: 0 }))
}

/// SCSI opcode of a CloudPhysics record, hex with or without `0x`.
fn parse_scsi_op(s: &str) -> Option<u8> {
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
    if h.is_empty() || h.len() > 2 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u8::from_str_radix(h, 16).ok()
}

fn parse_cloudphysics(t: &str, pow10: u32) -> std::result::Result<Parsed, LineErr> {
    let mut f = [""; 5];
    let n = split_into(t, ',', &mut f);
    if n != 5 {
        return Err(err("fields", format!("{n} comma-separated fields; expected 5: version,time,op,size,lbn")));
    }
    parse_u64("version", f[0], "a record version number")?;
    let time_ns = parse_time("time", f[1], pow10, "a non-negative time")?;
    let op = parse_scsi_op(f[2])
        .ok_or_else(|| err("op", format!("`{}`; expected a SCSI opcode in hex (28, 2a, ...)", shorten(f[2]))))?;
    let kind = match op {
        0x08 | 0x28 | 0x88 | 0xa8 => IoKind::Read,
        0x0a | 0x2a | 0x8a | 0xaa => IoKind::Write,
        _ => return Ok(Parsed::Ignored), // non-data commands (SYNCHRONIZE CACHE, UNMAP, ...)
    };
    let size = check_size(parse_u64("size", f[3], "a size in bytes")?)?;
    let lbn = parse_u64("lbn", f[4], "a block number (512-byte blocks)")?;
    let offset = check_end(blocks_to_bytes("lbn", lbn)?, size)?;
    Ok(Parsed::Request(Raw { time_ns, kind, offset, size, stream: 0, budget_us: 0 }))
}

fn check_flashlife_header(t: &str) -> std::result::Result<(), LineErr> {
    let h = t.replace(' ', "").to_ascii_lowercase(); // once per file
    if h == "time_ns,op,offset,size"
        || h == "time_ns,op,offset,size,stream"
        || h == "time_ns,op,offset,size,stream,budget_us"
    {
        Ok(())
    } else {
        Err(err(
            "header",
            format!("`{}`; expected `time_ns,op,offset,size`, `...,stream` or `...,stream,budget_us`", shorten(t)),
        ))
    }
}

fn parse_flashlife(t: &str, trims: bool) -> std::result::Result<Parsed, LineErr> {
    let mut f = [""; 6];
    let n = split_into(t, ',', &mut f);
    if !(4..=6).contains(&n) {
        return Err(err(
            "fields",
            format!("{n} comma-separated fields; expected time_ns,op,offset,size[,stream[,budget_us]]"),
        ));
    }
    let time_ns = u128::from(parse_u64("time_ns", f[0], "a time in ns")?);
    let kind = match f[1] {
        "R" | "r" => IoKind::Read,
        "W" | "w" => IoKind::Write,
        o if o.eq_ignore_ascii_case("read") => IoKind::Read,
        o if o.eq_ignore_ascii_case("write") => IoKind::Write,
        "T" | "t" => IoKind::Trim,
        o if o.eq_ignore_ascii_case("trim") => IoKind::Trim,
        o => return Err(err("op", format!("`{}`; expected R, W or T (trim)", shorten(o)))),
    };
    let offset = parse_u64("offset", f[2], "a byte offset")?;
    let size = check_size(parse_u64("size", f[3], "a size in bytes")?)?;
    let offset = check_end(offset, size)?;
    let stream = if n >= 5 { stream_of("stream", parse_u64("stream", f[4], "a stream number")?)? } else { 0 };
    // An empty budget field means no budget, like 0.
    let budget_us = if n == 6 && !f[5].trim().is_empty() {
        let v = parse_u64("budget_us", f[5], "a latency budget in whole microseconds")?;
        u32::try_from(v).map_err(|_| err("budget_us", format!("{v} is too large; expected 0..=4294967295 us")))?
    } else {
        0
    };
    if kind == IoKind::Trim && !trims {
        return Ok(Parsed::Ignored); // workload.trace.discards = "ignore"
    }
    Ok(Parsed::Request(Raw { time_ns, kind, offset, size, stream, budget_us }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_times_are_exact() {
        assert_eq!(parse_time("t", "0.001368096", 9, "").unwrap(), 1_368_096);
        assert_eq!(parse_time("t", "12.5", 6, "").unwrap(), 12_500_000);
        assert_eq!(parse_time("t", "7", 0, "").unwrap(), 7);
        assert_eq!(parse_time("t", ".5", 3, "").unwrap(), 500);
        assert!(parse_time("t", "-1", 3, "").is_err());
        assert!(parse_time("t", ".", 3, "").is_err());
        assert!(parse_time("t", "1e3", 3, "").is_err());
    }

    #[test]
    fn detection() {
        assert_eq!(TraceFormat::detect("128166372003061629,hm,1,Read,12,4096,1"), Some(TraceFormat::Msr));
        assert_eq!(TraceFormat::detect("0,20941264,8192,W,0.551706"), Some(TraceFormat::Spc));
        assert_eq!(TraceFormat::detect("0 0 303567 7 0"), Some(TraceFormat::Mqsim));
        assert_eq!(TraceFormat::detect("0.5 0 303567 7 0"), Some(TraceFormat::Disksim));
        assert_eq!(TraceFormat::detect("  8,33  30 1 0.1 5025  D   R 540544 + 8 [x]"), Some(TraceFormat::Blkparse));
        assert_eq!(TraceFormat::detect("version,time,op,size,lbn"), Some(TraceFormat::CloudPhysics));
        assert_eq!(TraceFormat::detect("1,5633898,2a,512,42932745"), Some(TraceFormat::CloudPhysics));
        assert_eq!(TraceFormat::detect("time_ns,op,offset,size"), Some(TraceFormat::Flashlife));
        assert_eq!(TraceFormat::detect("hello world"), None);
    }

    /// Reference: blkparse's rwbs field (blktrace(8) / `blk_fill_rwbs`: `D` discard, `W`
    /// write, `R` read, `S` sync) and the flashlife CSV's `T`: discards are trims only when
    /// asked, ignored lines otherwise, whatever other letters come with them.
    #[test]
    fn discards_become_trims_only_when_asked() {
        let kind = |p: Parsed| match p {
            Parsed::Request(r) => Some((r.kind, r.offset, r.size)),
            Parsed::Ignored => None,
        };
        for rwbs in ["D", "DS", "WD", "WDS"] {
            let line = format!("8,0 1 5 0.1 100 D {rwbs} 1000 + 8 [x]");
            assert_eq!(
                kind(parse_blkparse(&line, "D", true, &mut false).unwrap()),
                Some((IoKind::Trim, 512_000, 4096))
            );
            assert_eq!(kind(parse_blkparse(&line, "D", false, &mut false).unwrap()), None);
        }
        let w = kind(parse_blkparse("8,0 1 5 0.1 100 D WS 1000 + 8 [x]", "D", true, &mut false).unwrap());
        assert_eq!(w, Some((IoKind::Write, 512_000, 4096)));
        assert_eq!(kind(parse_flashlife("5,T,8192,4096", true).unwrap()), Some((IoKind::Trim, 8192, 4096)));
        assert_eq!(kind(parse_flashlife("5,trim,8192,4096", true).unwrap()), Some((IoKind::Trim, 8192, 4096)));
        assert_eq!(kind(parse_flashlife("5,T,8192,4096", false).unwrap()), None);
        assert!(parse_flashlife("5,X,8192,4096", true).is_err());
    }
}
