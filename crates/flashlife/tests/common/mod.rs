//! Helpers shared by the integration tests.
#![allow(dead_code)]

use flashlife::workload::{HostRequest, IoKind, Workload};
use flashlife::{Config, ConfigBuilder, Result, RunOutput, Simulator};

/// A small ZombieNAND drive that wears out within seconds (endurance cut 50-fold, 32-page
/// blocks), run to death with the oracle on: checkpoints and golden results share it.
pub const ZOMBIE_TO_DEATH: &[&str] = &[
    "run.until=\"death\"",
    "geometry.pages_per_block=32",
    "flash.wear.endurance.slc=1500",
    "flash.wear.endurance.mlc=120",
    "flash.wear.endurance.tlc=20",
    "flash.wear.endurance.qlc=6",
    "ftl.integrity_oracle=true",
];

/// The queued scheduler's drive (the side-by-side comparison of issue 16, scaled down): 8 dies on 4
/// channels, one plane, 4 KiB pages, MLC 75/750/3800 us, QD32 random writes at steady state.
pub const PEER: &[&str] = &[
    "geometry.channels=4",
    "geometry.ways=2",
    "geometry.dies=1",
    "geometry.planes=1",
    "geometry.blocks_per_plane=96",
    "geometry.pages_per_block=64",
    "flash.bit_mode=\"mlc\"",
    "flash.page_size=4096",
    "flash.mlc.read_us=75.0",
    "flash.mlc.program_us=750.0",
    "flash.mlc.erase_us=3800.0",
    "capacity.overprovisioning=0.15",
    "host.queue_depth=32",
    "run.until=\"writes:1.5dw\"",
    "run.progress=\"off\"",
];

/// Build a configuration from `key=value` overrides over the defaults.
pub fn config(sets: &[&str]) -> Config {
    let mut b = ConfigBuilder::new();
    for s in sets {
        b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    b.build().unwrap_or_else(|e| panic!("{e}"))
}

/// Build preset `preset` with `key=value` overrides.
pub fn preset_config<S: AsRef<str>>(preset: &str, sets: &[S]) -> Config {
    let mut b = ConfigBuilder::new().preset(preset).unwrap_or_else(|e| panic!("{preset}: {e}"));
    for s in sets {
        let s = s.as_ref();
        b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    b.build().unwrap_or_else(|e| panic!("{e}"))
}

/// Run preset `preset` with `key=value` overrides.
pub fn run_preset<S: AsRef<str>>(preset: &str, sets: &[S]) -> RunOutput {
    Simulator::new(preset_config(preset, sets)).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{e}"))
}

/// The error building and starting a simulator from `key=value` overrides gives (panics if
/// there is none): for tests of configuration errors.
pub fn config_error(sets: &[&str]) -> String {
    let mut b = ConfigBuilder::new();
    for s in sets {
        b = b.set(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    match b.build().and_then(Simulator::new) {
        Ok(_) => panic!("{sets:?} should be refused"),
        Err(e) => e.to_string(),
    }
}

/// Run a configuration with its own workload.
pub fn run(sets: &[&str]) -> RunOutput {
    Simulator::new(config(sets)).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{e}"))
}

/// Writes sweeping the logical space in order, one unit each, forever.
pub struct Sequential {
    pub next: u64,
    pub units: u64,
    pub unit: u64,
}

impl Workload for Sequential {
    fn next_request(&mut self) -> Result<Option<HostRequest>> {
        let r = HostRequest {
            arrival_ns: 0,
            kind: IoKind::Write,
            offset: self.next * self.unit,
            size: self.unit,
            stream: 0,
            budget_us: 0,
        };
        self.next = (self.next + 1) % self.units;
        Ok(Some(r))
    }
}

/// The harmonic number H_n.
pub fn harmonic(n: u32) -> f64 {
    (1..=n).map(|k| 1.0 / k as f64).sum()
}

/// Greedy cleaning under uniform random writes (the closed form `write_amplification.rs`
/// checks greedy GC against): the mean-field model in which victims hold j or j+1 valid
/// pages. Find y = j + p with
/// (H_b - H_{j+1} + (1-p)/(j+1)) / (b - j - p) = (1+op)/b, WA = b / (b - y).
pub fn greedy_wa(op: f64, b: u32) -> f64 {
    let target = (1.0 + op) / b as f64;
    let g = |y: f64| {
        let j = y.floor() as u32;
        let p = y - j as f64;
        (harmonic(b) - harmonic(j + 1) + (1.0 - p) / (j + 1) as f64) / (b as f64 - j as f64 - p)
    };
    // g falls as y grows over [0, b-1): bisect.
    let (mut lo, mut hi) = (0.0f64, b as f64 - 1.0);
    assert!(g(lo) > target && g(hi) < target, "no root: {} {} {}", g(lo), g(hi), target);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if g(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    b as f64 / (b as f64 - lo)
}

/// Che's approximation of an LRU cache's hit ratio for Zipf(alpha) requests over n items and
/// a cache of c items (Che, Tung and Wang, 2002): the characteristic time t solves
/// sum(1 - exp(-p_k t)) = c, and the hit ratio is sum(p_k (1 - exp(-p_k t))).
pub fn che_hit_ratio(n: u64, alpha: f64, c: f64) -> f64 {
    let w: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-alpha)).collect();
    let z: f64 = w.iter().sum();
    let p: Vec<f64> = w.iter().map(|x| x / z).collect();
    let filled = |t: f64| p.iter().map(|&q| 1.0 - (-q * t).exp()).sum::<f64>();
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while filled(hi) < c {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if filled(mid) < c {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    p.iter().map(|&q| q * (1.0 - (-q * lo).exp())).sum()
}

/// Overrides for `requests` one-unit Zipf(`alpha`) reads in fast-forward, with `cache`
/// sizing the cache under test (`cache.size_bytes=...` or `mapping_cache.size_bytes=...`):
/// the independent reference model that Che's approximation describes.
pub fn zipf_unit_reads(alpha: f64, cache: String, requests: u64) -> Vec<String> {
    vec![
        "workload.kind=\"zipf\"".into(),
        format!("workload.zipf.alpha={alpha}"),
        "workload.read_ratio=1.0".into(),
        "ftl.timing=false".into(),
        cache,
        format!("run.until=\"requests:{requests}\""),
    ]
}
