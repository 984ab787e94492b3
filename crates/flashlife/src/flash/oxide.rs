//! ZombieNAND oxide-stress wear model (Algorithm 1 of the ZombieNAND paper).
//!
//! Every program/erase cycle traps charge in the tunnel oxide. Following the paper (which
//! follows Mohan et al., HotStorage'10), the densities of interface traps and bulk (oxide)
//! traps grow as power laws of the cycle count,
//!
//! ```text
//! dN_it = A * cycles^0.62        dN_ot = B * cycles^0.30
//! dV_it = dN_it * q / Cox        dV_ot = dN_ot * q / Cox        dV_t = dV_it + dV_ot
//! ```
//!
//! with A = 0.08, B = 5.0, q = 1.6e-19 C and Cox = 2.15e-17 F. We follow Algorithm 1
//! literally: the "densities" are dimensionless trap counts (per cell), so `q * N / Cox` is a
//! voltage in volts. The paper fitted Cox itself (its source gives no value), so the absolute
//! volts are only meaningful relative to the thresholds below, which are calibrated from the
//! endurance of each bit mode.
//!
//! A block is dead at its bit mode when its trapped shift exceeds that mode's threshold. The
//! threshold of a mode is the shift an unswitched block of that mode has at its rated endurance
//! (defaults: SLC 75,000, MLC 6,000, TLC 1,000 cycles as in the paper; QLC 300, our choice).
//! The shift belongs to the cells, not to the mode: it depends only on the block's cycle count,
//! so a block that changes bit mode keeps it and is simply compared with a higher threshold.
//! Charge recovery (de-trapping) is assumed to be zero, as in the paper (footnote 1).
//!
//! Bit modes are `u8` bits per cell: 1 = SLC, 2 = MLC, 3 = TLC, 4 = QLC.

use rand::SeedableRng;
use rand_distr::{Distribution, LogNormal};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Highest bit mode this model knows (QLC).
pub const MAX_BITS: u8 = 4;

/// Rated endurance (P/E cycles) of an unswitched block, per bit mode.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Endurance {
    /// SLC (1 bit per cell); paper: 75,000.
    pub slc: u32,
    /// MLC (2 bits per cell); paper: 6,000.
    pub mlc: u32,
    /// TLC (3 bits per cell); paper: 1,000.
    pub tlc: u32,
    /// QLC (4 bits per cell); not in the paper. 300 is our choice, in the range vendors rate
    /// early QLC parts at (a few hundred to 1,000 cycles).
    pub qlc: u32,
}

impl Default for Endurance {
    fn default() -> Self {
        Endurance { slc: 75_000, mlc: 6_000, tlc: 1_000, qlc: 300 }
    }
}

impl Endurance {
    /// Endurance of `bits` per cell (1..=4), `None` for other values.
    pub fn for_bits(&self, bits: u8) -> Option<u32> {
        match bits {
            1 => Some(self.slc),
            2 => Some(self.mlc),
            3 => Some(self.tlc),
            4 => Some(self.qlc),
            _ => None,
        }
    }

    fn as_array(&self) -> [u32; MAX_BITS as usize] {
        [self.slc, self.mlc, self.tlc, self.qlc]
    }
}

/// Parameters of the oxide-stress model (`flash.wear.*`). Defaults are the paper's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OxideParams {
    /// Interface-trap coefficient A (Algorithm 1: 0.08).
    pub a: f64,
    /// Interface-trap exponent (Algorithm 1: 0.62).
    pub a_exponent: f64,
    /// Bulk-trap coefficient B (Algorithm 1: 5.0).
    pub b: f64,
    /// Bulk-trap exponent (Algorithm 1: 0.30).
    pub b_exponent: f64,
    /// Oxide capacitance Cox in farads (Algorithm 1: 2.15e-17, fitted by the paper's authors).
    pub cox: f64,
    /// Elementary charge q in coulombs (Algorithm 1: 1.6e-19).
    pub q: f64,
    /// Rated endurance per bit mode; the death thresholds are calibrated from it.
    pub endurance: Endurance,
    /// Sigma of the per-block lognormal multiplier on both trap coefficients (A and B);
    /// 0 turns variation off (the default). The multiplier has median 1, so the median block
    /// dies at the rated endurance. Lifetime is very sensitive to it (shift ~ cycles^0.35..0.42):
    /// 0.05 gives a 10th-90th percentile lifetime ratio of ~1.4x, 0.1 ~2x, 0.2 ~4x.
    pub variation_sigma: f64,
}

impl Default for OxideParams {
    fn default() -> Self {
        OxideParams {
            a: 0.08,
            a_exponent: 0.62,
            b: 5.0,
            b_exponent: 0.30,
            cox: 2.15e-17,
            q: 1.6e-19,
            endurance: Endurance::default(),
            variation_sigma: 0.0,
        }
    }
}

fn positive_finite(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

impl OxideParams {
    /// Check ranges; errors name the dotted key under `flash.wear.`.
    pub fn validate(&self) -> Result<()> {
        let positive = [("a", self.a), ("b", self.b), ("cox", self.cox), ("q", self.q)];
        for (key, v) in positive {
            if !positive_finite(v) {
                return Err(Error::config(format!("flash.wear.{key}"), v, "a positive finite number"));
            }
        }
        // Positive exponents: the shift must grow with cycles (else no block ever dies), and the
        // inversion in `cycles_for_shift` relies on that monotonicity. The bound only rejects
        // absurd values (the paper's are 0.62 and 0.30).
        for (key, v) in [("a_exponent", self.a_exponent), ("b_exponent", self.b_exponent)] {
            if !(v.is_finite() && v > 0.0 && v <= 4.0) {
                return Err(Error::config(format!("flash.wear.{key}"), v, "an exponent in (0, 4]"));
            }
        }
        let e = self.endurance.as_array();
        for (i, &cycles) in e.iter().enumerate() {
            if cycles == 0 {
                let key = ["slc", "mlc", "tlc", "qlc"][i];
                return Err(Error::config(format!("flash.wear.endurance.{key}"), cycles, "at least 1 cycle"));
            }
        }
        // A mode with more bits per cell has narrower voltage margins, so it must die first;
        // otherwise dropping a bit (ZombieNAND) would make no sense.
        for i in 1..e.len() {
            if e[i] >= e[i - 1] {
                let key = ["slc", "mlc", "tlc", "qlc"][i];
                return Err(Error::config(
                    format!("flash.wear.endurance.{key}"),
                    e[i],
                    format!("fewer cycles than the mode with one bit less ({})", e[i - 1]),
                ));
            }
        }
        if !(self.variation_sigma.is_finite() && (0.0..=2.0).contains(&self.variation_sigma)) {
            return Err(Error::config("flash.wear.variation_sigma", self.variation_sigma, "a sigma in [0, 2]"));
        }
        Ok(())
    }

    /// q / Cox in volts per trap.
    fn volts_per_trap(&self) -> f64 {
        self.q / self.cox
    }

    /// Death threshold of `bits` per cell in volts: the shift of a nominal block at the mode's
    /// rated endurance. `None` for bits outside 1..=4.
    pub fn threshold(&self, bits: u8) -> Option<f64> {
        self.endurance.for_bits(bits).map(|c| threshold_for_endurance(c as f64, self))
    }

    /// Cycles at which a nominal unswitched block of `bits` per cell dies, found by inverting
    /// the shift at the calibrated threshold (equal to the configured endurance up to rounding;
    /// kept as an explicit inversion so a hand-set threshold would work the same way).
    pub fn death_cycles(&self, bits: u8) -> Option<f64> {
        self.threshold(bits).map(|t| cycles_for_shift(t, self))
    }

    /// Cycles a nominal block with `cycles` behind it has left at `bits` per cell (0 if dead).
    pub fn remaining_life(&self, cycles: f64, bits: u8) -> Option<f64> {
        self.death_cycles(bits).map(|d| (d - cycles).max(0.0))
    }

    /// Fraction of the nominal life at `bits` per cell still ahead, in [0, 1]. A block that
    /// switched mode can show a small fraction even though it has just been "reborn".
    pub fn remaining_life_fraction(&self, cycles: f64, bits: u8) -> Option<f64> {
        self.death_cycles(bits).map(|d| if d > 0.0 { ((d - cycles) / d).clamp(0.0, 1.0) } else { 0.0 })
    }
}

/// Interface-trap density A * cycles^a_exponent (dimensionless trap count).
pub fn interface_traps(cycles: f64, params: &OxideParams) -> f64 {
    params.a * cycles.max(0.0).powf(params.a_exponent)
}

/// Bulk-trap density B * cycles^b_exponent (dimensionless trap count).
pub fn bulk_traps(cycles: f64, params: &OxideParams) -> f64 {
    params.b * cycles.max(0.0).powf(params.b_exponent)
}

/// Trapped threshold-voltage shift in volts after `cycles` P/E cycles (Algorithm 1):
/// `(dN_it + dN_ot) * q / Cox`. Negative or NaN cycles count as 0.
pub fn voltage_shift(cycles: f64, params: &OxideParams) -> f64 {
    let c = if cycles > 0.0 { cycles } else { 0.0 };
    (interface_traps(c, params) + bulk_traps(c, params)) * params.volts_per_trap()
}

/// Threshold (volts) at which a nominal block dies after exactly `cycles` cycles.
pub fn threshold_for_endurance(cycles: f64, params: &OxideParams) -> f64 {
    voltage_shift(cycles, params)
}

/// Inverse of [`voltage_shift`]: the (real) cycle count at which the shift reaches `volts`.
///
/// The shift is a sum of two power laws, with no closed-form inverse. In log-log space
/// `g(u) = ln shift(e^u)` is a log-sum-exp of linear functions, hence convex and increasing,
/// so Newton's method converges monotonically from any start after the first step (the first
/// step lands at or right of the root); a few iterations reach machine precision.
/// Allocation-free. Returns 0 for non-positive targets and +inf for an infinite target.
pub fn cycles_for_shift(volts: f64, params: &OxideParams) -> f64 {
    if volts.is_nan() || volts <= 0.0 {
        return 0.0;
    }
    if volts.is_infinite() {
        return f64::INFINITY;
    }
    let k = params.volts_per_trap();
    let (a, ea, b, eb) = (params.a * k, params.a_exponent, params.b * k, params.b_exponent);
    let target = volts.ln();
    let mut u = 7.0; // ~1,100 cycles: start near the interesting range
    for _ in 0..100 {
        let ta = a * (ea * u).exp();
        let tb = b * (eb * u).exp();
        let s = ta + tb;
        let g = s.ln() - target;
        let slope = (ea * ta + eb * tb) / s; // weighted mean of exponents, > 0
        let step = g / slope;
        u -= step;
        if step.abs() < 1e-14 * u.abs().max(1.0) {
            break;
        }
    }
    u.exp()
}

/// Largest whole cycle count at which a block whose trap densities are scaled by `multiplier`
/// still has a shift at or below `threshold` volts, saturated to `u32::MAX`.
fn last_live_cycle(threshold: f64, multiplier: f64, params: &OxideParams) -> u32 {
    let estimate = cycles_for_shift(threshold / multiplier, params);
    if estimate.is_nan() || estimate >= u32::MAX as f64 - 2.0 {
        return u32::MAX;
    }
    // Newton's answer is exact to ~1e-14 relative; fix the integer boundary with the very
    // formula the dead-check stands for, so `cycles > limit` <=> `shift > threshold`.
    let live = |n: u32| multiplier * voltage_shift(n as f64, params) <= threshold;
    let mut n = estimate.floor() as u32;
    while n > 0 && !live(n) {
        n -= 1;
    }
    while n < u32::MAX && live(n + 1) {
        n += 1;
    }
    n
}

/// Per-block oxide wear state: cycle counts, and per-mode death limits precomputed so that
/// the dead-check on each erase is one comparison.
///
/// Why precompute: the shift is a monotone function of the cycle count, so "shift > threshold
/// of mode b" is the same as "cycles > L_b" for an integer L_b fixed per block (per
/// multiplier). Computing L_b once (Newton inversion, at construction) replaces two `powf`
/// calls per erase by an integer compare. Without variation all blocks share one table
/// (4 bytes of state per block); with variation each block stores its own (20 bytes + 4 for
/// the multiplier).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct OxideWear {
    params: OxideParams,
    cycles: Vec<u32>,
    /// Shared limits when variation is off: index bits-1.
    nominal_limits: [u32; MAX_BITS as usize],
    /// Per-block limits when variation is on (empty otherwise).
    block_limits: Vec<[u32; MAX_BITS as usize]>,
    /// Per-block trap multipliers when variation is on (empty otherwise).
    multipliers: Vec<f32>,
    thresholds: [f64; MAX_BITS as usize],
}

impl OxideWear {
    /// Fresh blocks (0 cycles). `seed` drives the variation draw only (use the run's named
    /// wear stream); with `variation_sigma == 0` it is unused and all blocks are identical.
    pub fn new(params: &OxideParams, n_blocks: usize, seed: u64) -> Result<Self> {
        params.validate()?;
        let mut thresholds = [0.0; MAX_BITS as usize];
        let mut nominal_limits = [0u32; MAX_BITS as usize];
        for bits in 1..=MAX_BITS {
            let i = (bits - 1) as usize;
            thresholds[i] = params.threshold(bits).unwrap_or(0.0);
            nominal_limits[i] = last_live_cycle(thresholds[i], 1.0, params);
        }
        let (mut block_limits, mut multipliers) = (Vec::new(), Vec::new());
        if params.variation_sigma > 0.0 {
            let dist = LogNormal::new(0.0, params.variation_sigma)
                .map_err(|e| Error::config("flash.wear.variation_sigma", params.variation_sigma, e.to_string()))?;
            let mut rng = Pcg64Mcg::seed_from_u64(seed);
            multipliers.reserve_exact(n_blocks);
            block_limits.reserve_exact(n_blocks);
            for _ in 0..n_blocks {
                // f32 storage: 7 significant digits is far below any physical knowledge of
                // the spread; the limits are computed from the stored (rounded) value so
                // `shift` and `is_dead` agree exactly.
                let m = dist.sample(&mut rng) as f32;
                let mut lim = [0u32; MAX_BITS as usize];
                for (l, &t) in lim.iter_mut().zip(thresholds.iter()) {
                    *l = last_live_cycle(t, m as f64, params);
                }
                multipliers.push(m);
                block_limits.push(lim);
            }
        }
        Ok(OxideWear {
            params: params.clone(),
            cycles: vec![0; n_blocks],
            nominal_limits,
            block_limits,
            multipliers,
            thresholds,
        })
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.cycles.len()
    }

    /// True when the model tracks no block.
    pub fn is_empty(&self) -> bool {
        self.cycles.is_empty()
    }

    /// The parameters in use.
    pub fn params(&self) -> &OxideParams {
        &self.params
    }

    /// Death threshold in volts of `bits` per cell (1..=4; other values are clamped).
    pub fn threshold(&self, bits: u8) -> f64 {
        self.thresholds[mode_index(bits)]
    }

    #[inline]
    fn limits(&self, block: usize) -> &[u32; MAX_BITS as usize] {
        if self.block_limits.is_empty() {
            &self.nominal_limits
        } else {
            &self.block_limits[block]
        }
    }

    /// Record one erase of `block` and return its new cycle count (saturating).
    /// Panics if `block` is out of range, like slice indexing.
    #[inline]
    pub fn on_erase(&mut self, block: usize) -> u32 {
        let c = &mut self.cycles[block];
        *c = c.saturating_add(1);
        *c
    }

    /// P/E cycles `block` has been through.
    #[inline]
    pub fn cycles(&self, block: usize) -> u32 {
        self.cycles[block]
    }

    /// Set a block's cycle count (preconditioning, checkpoints, tests).
    pub fn set_cycles(&mut self, block: usize, cycles: u32) {
        self.cycles[block] = cycles;
    }

    /// Whether `block`'s trapped shift exceeds the threshold of `bits` per cell. O(1): one
    /// integer compare against the precomputed limit. `bits` outside 1..=4 is clamped
    /// (0 is read as SLC, >4 as QLC) so the hot path never panics.
    #[inline]
    pub fn is_dead(&self, block: usize, bits: u8) -> bool {
        self.cycles[block] > self.limits(block)[mode_index(bits)]
    }

    /// Last cycle count at which `block` is still alive at `bits` per cell.
    #[inline]
    pub fn death_limit(&self, block: usize, bits: u8) -> u32 {
        self.limits(block)[mode_index(bits)]
    }

    /// Erases `block` can still take at `bits` per cell before it is dead (0 if dead).
    #[inline]
    pub fn remaining_life(&self, block: usize, bits: u8) -> u32 {
        self.death_limit(block, bits).saturating_sub(self.cycles[block])
    }

    /// Remaining life at `bits` per cell as a fraction of the block's own life at that mode.
    pub fn remaining_life_fraction(&self, block: usize, bits: u8) -> f64 {
        let limit = self.death_limit(block, bits);
        if limit == 0 {
            return 0.0;
        }
        self.remaining_life(block, bits) as f64 / limit as f64
    }

    /// Trap multiplier of `block` (1.0 without variation).
    pub fn multiplier(&self, block: usize) -> f64 {
        self.multipliers.get(block).map_or(1.0, |&m| m as f64)
    }

    /// Trapped threshold-voltage shift of `block` in volts. It depends on the cells' history
    /// only, never on the bit mode the block is used at now.
    pub fn shift(&self, block: usize) -> f64 {
        self.multiplier(block) * voltage_shift(self.cycles[block] as f64, &self.params)
    }
}

#[inline]
fn mode_index(bits: u8) -> usize {
    (bits.clamp(1, MAX_BITS) - 1) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Algorithm 1, written out independently of the module.
    fn paper_shift(cycles: f64) -> f64 {
        let (a, b, cox, q) = (0.08, 5.0, 2.15e-17, 1.6e-19);
        let n_it = a * cycles.powf(0.62);
        let n_ot = b * cycles.powf(0.30);
        n_it * q / cox + n_ot * q / cox
    }

    #[test]
    fn shift_matches_algorithm_1() {
        let p = OxideParams::default();
        for c in [1_000.0, 6_000.0, 75_000.0] {
            let got = voltage_shift(c, &p);
            let want = paper_shift(c);
            assert!((got - want).abs() <= 1e-12 * want, "{c}: {got} vs {want}");
        }
        // Hand-checked values (volts): 0.339, 0.637, 1.706.
        assert!((voltage_shift(1_000.0, &p) - 0.3387).abs() < 1e-3);
        assert!((voltage_shift(6_000.0, &p) - 0.6370).abs() < 1e-3);
        assert!((voltage_shift(75_000.0, &p) - 1.7064).abs() < 2e-3);
        assert_eq!(voltage_shift(0.0, &p), 0.0);
        assert_eq!(voltage_shift(-5.0, &p), 0.0);
        assert_eq!(voltage_shift(f64::NAN, &p), 0.0);
    }

    /// Calibration (true by construction: the thresholds are the shift at the endurance): a
    /// check of the Newton inversion, not of the physics. The physics check is
    /// `shift_matches_algorithm_1`.
    #[test]
    fn death_cycles_within_one_percent_of_endurance() {
        let p = OxideParams::default();
        for (bits, e) in [(1u8, 75_000.0), (2, 6_000.0), (3, 1_000.0), (4, 300.0)] {
            let d = p.death_cycles(bits).unwrap();
            assert!((d - e).abs() <= 0.01 * e, "bits {bits}: {d} vs {e}");
            // Independently: the shift at the death point equals the threshold.
            let t = p.threshold(bits).unwrap();
            assert!((paper_shift(d) - t).abs() <= 1e-9 * t);
        }
        assert!(p.death_cycles(0).is_none());
        assert!(p.death_cycles(5).is_none());
    }

    #[test]
    fn inversion_roundtrips_over_a_wide_range() {
        let p = OxideParams::default();
        for c in [1e-3, 0.5, 1.0, 10.0, 300.0, 1e4, 1e6, 1e9] {
            let back = cycles_for_shift(voltage_shift(c, &p), &p);
            assert!((back - c).abs() <= 1e-9 * c, "{c} -> {back}");
        }
        assert_eq!(cycles_for_shift(0.0, &p), 0.0);
        assert_eq!(cycles_for_shift(-1.0, &p), 0.0);
        assert_eq!(cycles_for_shift(f64::NAN, &p), 0.0);
    }

    /// Calibration (true by construction, as above): checks the integer death limits and the
    /// erase path, not the physics.
    #[test]
    fn unswitched_blocks_die_at_rated_endurance_by_erasing() {
        let p = OxideParams::default();
        let mut w = OxideWear::new(&p, 4, 1).unwrap();
        for (block, bits, e) in [(0usize, 1u8, 75_000u32), (1, 2, 6_000), (2, 3, 1_000), (3, 4, 300)] {
            let mut n = 0;
            while !w.is_dead(block, bits) {
                n = w.on_erase(block);
                assert!(n <= 200_000);
            }
            // Dies on the first erase past the rated endurance.
            assert!((n as f64 - e as f64).abs() <= 0.01 * e as f64, "bits {bits}: died at {n}");
            assert_eq!(n, e + 1);
        }
    }

    #[test]
    fn shift_survives_mode_switch_and_tlc_lives_on_as_mlc() {
        let p = OxideParams::default();
        let mut w = OxideWear::new(&p, 1, 7).unwrap();
        let mut bits = 3u8;
        let mut switched_at = None;
        let mut total;
        loop {
            total = w.on_erase(0);
            if w.is_dead(0, bits) {
                if bits == 3 {
                    let before = w.shift(0);
                    bits = 2; // ZombieNAND: drop one bit per cell
                    assert_eq!(w.shift(0), before, "shift belongs to the cells");
                    switched_at = Some(total);
                    assert!(!w.is_dead(0, bits));
                } else {
                    break;
                }
            }
            assert!(total < 100_000);
        }
        let switched_at = switched_at.unwrap();
        assert!((switched_at as f64 - 1_000.0).abs() <= 10.0, "TLC died at {switched_at}");
        // Dies as MLC when the *total* cycles reach the MLC endurance, not 1,000 + 6,000.
        assert!((total as f64 - 6_000.0).abs() <= 60.0, "MLC died at {total}");
        assert_eq!(w.remaining_life(0, 2), 0);
        assert!(w.remaining_life(0, 1) > 60_000);
    }

    #[test]
    fn remaining_life_is_monotone_decreasing() {
        let p = OxideParams::default();
        let mut w = OxideWear::new(&p, 1, 0).unwrap();
        for bits in 1..=4u8 {
            let mut prev = f64::INFINITY;
            for c in (0..80_000).step_by(250) {
                let r = p.remaining_life(c as f64, bits).unwrap();
                assert!(r <= prev && r >= 0.0);
                prev = r;
            }
            assert_eq!(prev, 0.0);
        }
        let mut prev = u32::MAX;
        for _ in 0..7_000 {
            let r = w.remaining_life(0, 2);
            assert!(r <= prev);
            prev = r;
            w.on_erase(0);
        }
        assert_eq!(prev, 0);
        assert!(w.remaining_life_fraction(0, 1) > 0.9 && w.remaining_life_fraction(0, 1) < 1.0);
        let f = p.remaining_life_fraction(500.0, 3).unwrap();
        assert!((f - 0.5).abs() < 0.01);
    }

    #[test]
    fn variation_off_gives_identical_blocks() {
        let p = OxideParams::default();
        let w = OxideWear::new(&p, 64, 123).unwrap();
        for b in 0..64 {
            assert_eq!(w.multiplier(b), 1.0);
            for bits in 1..=4 {
                assert_eq!(w.death_limit(b, bits), w.death_limit(0, bits));
            }
        }
        assert_eq!(w.death_limit(5, 3), 1_000);
    }

    #[test]
    fn variation_on_gives_spread_with_nominal_median() {
        let p = OxideParams { variation_sigma: 0.2, ..OxideParams::default() };
        let n = 4_001;
        let w = OxideWear::new(&p, n, 42).unwrap();
        for (bits, e) in [(2u8, 6_000.0), (3, 1_000.0)] {
            let mut limits: Vec<u32> = (0..n).map(|b| w.death_limit(b, bits)).collect();
            limits.sort_unstable();
            let median = limits[n / 2] as f64;
            assert!((median - e).abs() <= 0.04 * e, "bits {bits}: median {median}");
            let (lo, hi) = (limits[n / 10] as f64, limits[9 * n / 10] as f64);
            // Expected from inverting the shift at the lognormal deciles: 4.5x (TLC), 4.1x (MLC).
            assert!(hi / lo > 3.5 && hi / lo < 5.5, "spread {lo}..{hi}");
        }
        // Same seed, same drive; different seed, different drive.
        let w2 = OxideWear::new(&p, n, 42).unwrap();
        let w3 = OxideWear::new(&p, n, 43).unwrap();
        assert!((0..n).all(|b| w.death_limit(b, 3) == w2.death_limit(b, 3)));
        assert!((0..n).any(|b| w.death_limit(b, 3) != w3.death_limit(b, 3)));
        // The dead-check agrees with the shift it stands for, block by block.
        let mut w = w;
        for b in 0..50 {
            w.set_cycles(b, w.death_limit(b, 3));
            assert!(!w.is_dead(b, 3) && w.shift(b) <= w.threshold(3));
            w.on_erase(b);
            assert!(w.is_dead(b, 3) && w.shift(b) > w.threshold(3));
        }
    }

    #[test]
    fn validation_rejects_bad_parameters() {
        let ok = OxideParams::default();
        assert!(ok.validate().is_ok());
        let bad = [
            OxideParams { a: 0.0, ..ok.clone() },
            OxideParams { cox: f64::NAN, ..ok.clone() },
            OxideParams { b_exponent: -0.3, ..ok.clone() },
            OxideParams { variation_sigma: -1.0, ..ok.clone() },
            OxideParams { endurance: Endurance { tlc: 0, ..Endurance::default() }, ..ok.clone() },
            OxideParams { endurance: Endurance { tlc: 7_000, ..Endurance::default() }, ..ok.clone() },
        ];
        for p in bad {
            let err = p.validate().unwrap_err();
            assert!(err.to_string().contains("flash.wear."), "{err}");
            assert!(OxideWear::new(&p, 1, 0).is_err());
        }
    }

    #[test]
    fn params_roundtrip_through_toml_with_defaults() {
        let p: OxideParams = toml::from_str("variation_sigma = 0.1\n[endurance]\nqlc = 500\n").unwrap();
        assert_eq!(p.variation_sigma, 0.1);
        assert_eq!(p.endurance.qlc, 500);
        assert_eq!(p.endurance.tlc, 1_000);
        assert_eq!(p.a, 0.08);
        let back: OxideParams = toml::from_str(&toml::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
        assert!(toml::from_str::<OxideParams>("bogus = 1\n").is_err());
    }
}
