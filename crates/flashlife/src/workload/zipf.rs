//! Zipf sampling by rejection-inversion (W. Hörmann and G. Derflinger, "Rejection-inversion
//! to generate variates from monotone discrete distributions", ACM TOMACS 6(3), 1996), the
//! algorithm of Apache Commons RNG's `RejectionInversionZipfSampler`.
//!
//! O(1) memory and expected O(1) time per sample for any number of elements and any positive
//! exponent, including exactly 1 (where the integral of x^-s is a logarithm: the helper functions
//! below are written to be continuous through s = 1).

use rand::Rng;

/// Zipf distribution over ranks 1..=n: P(k) proportional to 1 / k^s.
#[derive(Debug, Clone)]
pub struct ZipfSampler {
    n: f64,
    s: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    s_threshold: f64,
}

impl ZipfSampler {
    /// A sampler over `n >= 1` ranks with exponent `s > 0` (callers validate both).
    pub fn new(n: u64, s: f64) -> ZipfSampler {
        let n = n.max(1) as f64;
        let mut z = ZipfSampler { n, s, h_integral_x1: 0.0, h_integral_n: 0.0, s_threshold: 0.0 };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(n + 0.5);
        z.s_threshold = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }

    /// One rank in 1..=n.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        loop {
            let u = self.h_integral_n + rng.gen::<f64>() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s_threshold || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }

    /// H(x) = integral of h from 1 to x = (x^(1-s) - 1) / (1 - s), or ln x when s = 1.
    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        helper2((1.0 - self.s) * log_x) * log_x
    }

    /// h(x) = x^-s.
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let mut t = x * (1.0 - self.s);
        if t < -1.0 {
            t = -1.0; // rounding guard: the true value is never below -1
        }
        (helper1(t) * x).exp()
    }
}

/// ln(1 + x) / x, continuous at 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x - 1) / x, continuous at 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}
