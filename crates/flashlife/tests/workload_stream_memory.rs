//! A multi-gigabyte synthetic trace streams through a reader in constant memory.
//!
//! The trace is synthesised on the fly by a `Read` implementation (flashlife CSV with
//! fixed-width, zero-padded fields, each line updated in place), so nothing is
//! stored on disk. Peak RSS (VmHWM) must not grow by more than a few MB.
//!
//! Size: 5 GB in optimised builds (`cargo test --release`); 256 MB in debug builds, where the
//! unoptimised parser would need minutes for 5 GB. This file holds one test so that no other
//! test in the same process moves the high-water mark.

use std::io::Read;

use flashlife::workload::{TraceConfig, TraceReader, Workload};

const TOTAL_BYTES: u64 = if cfg!(debug_assertions) { 256_000_000 } else { 5_000_000_000 };
/// `time_ns,op,offset,size` with fixed widths: 20 + 1 + 1 + 1 + 20 + 1 + 7 + 1 = 52 bytes.
const LINE: &[u8] = b"00000000000000000000,W,00000000000000000000,0004096\n";

struct SynthTrace {
    header: &'static [u8],
    line: [u8; 52],
    pos: usize,
    n: u64,
    lines: u64,
}

impl SynthTrace {
    fn new(lines: u64) -> Self {
        let mut line = [0u8; 52];
        line.copy_from_slice(LINE);
        SynthTrace { header: b"time_ns,op,offset,size\n", line, pos: 52, n: 0, lines }
    }

    /// Add `v` to a zero-padded decimal field in place (odometer): a few digits per line,
    /// so the generator costs little next to the parser under test.
    fn add(field: &mut [u8], mut v: u64) {
        let mut carry = 0;
        for b in field.iter_mut().rev() {
            if v == 0 && carry == 0 {
                break;
            }
            let d = u64::from(*b - b'0') + v % 10 + carry;
            *b = b'0' + (d % 10) as u8;
            carry = d / 10;
            v /= 10;
        }
    }
}

impl Read for SynthTrace {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if !self.header.is_empty() {
            let k = self.header.len().min(out.len());
            out[..k].copy_from_slice(&self.header[..k]);
            self.header = &self.header[k..];
            return Ok(k);
        }
        let mut w = 0;
        while w < out.len() {
            if self.pos == self.line.len() {
                if self.n == self.lines {
                    break;
                }
                if self.n > 0 {
                    Self::add(&mut self.line[0..20], 1000);
                    // Stride 7 units: addresses keep growing, nothing repeats.
                    Self::add(&mut self.line[23..43], 7 * 4096);
                }
                self.line[21] = if self.n.is_multiple_of(3) { b'R' } else { b'W' };
                self.n += 1;
                self.pos = 0;
            }
            let k = (self.line.len() - self.pos).min(out.len() - w);
            out[w..w + k].copy_from_slice(&self.line[self.pos..self.pos + k]);
            self.pos += k;
            w += k;
        }
        Ok(w)
    }
}

fn vm_hwm_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    l.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn gigabytes_of_trace_stream_in_flat_memory() {
    let lines = TOTAL_BYTES / LINE.len() as u64;
    // Warm up allocator and reader once, so the baseline includes their steady state.
    let mut warm = TraceReader::from_reader("warm", SynthTrace::new(10_000), &TraceConfig::default()).unwrap();
    while warm.next_request().unwrap().is_some() {}
    drop(warm);
    let before = vm_hwm_kib();
    let start = std::time::Instant::now();
    let mut r = TraceReader::from_reader("synthetic", SynthTrace::new(lines), &TraceConfig::default()).unwrap();
    let (mut n, mut reads, mut last) = (0u64, 0u64, 0u64);
    while let Some(q) = r.next_request().unwrap() {
        n += 1;
        reads += u64::from(q.kind == flashlife::workload::IoKind::Read);
        assert!(q.arrival_ns >= last);
        last = q.arrival_ns;
    }
    let secs = start.elapsed().as_secs_f64();
    let after = vm_hwm_kib();
    assert_eq!(n, lines);
    assert_eq!(reads, lines.div_ceil(3));
    assert_eq!(last, (lines - 1) * 1000);
    eprintln!(
        "streamed {:.2} GB ({n} requests) in {secs:.1} s ({:.0} MB/s); VmHWM {before:?} -> {after:?} KiB",
        TOTAL_BYTES as f64 / 1e9,
        TOTAL_BYTES as f64 / 1e6 / secs
    );
    match (before, after) {
        (Some(b), Some(a)) => assert!(a.saturating_sub(b) < 4 * 1024, "peak RSS grew by {} KiB", a - b),
        _ => eprintln!("no /proc/self/status: memory not checked"),
    }
}
