//! Division by a run-time constant without a `div` instruction (Lemire, Kaser and Kurz,
//! "Faster remainder by direct computation", 2019): with `m = ceil(2^64 / d)`,
//! `floor(n / d) = floor(m * n / 2^64)` for every 32-bit `n` and `d`. The FTL divides slot and
//! block numbers by geometry constants on every page operation; a hardware divide costs tens
//! of cycles, a widening multiply a few.

/// A 32-bit divisor fixed at construction.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(super) struct Divisor {
    /// `ceil(2^64 / d)`, 0 for `d = 1` (where it would not fit).
    m: u64,
    d: u32,
}

impl Divisor {
    pub(super) fn new(d: u32) -> Divisor {
        assert!(d > 0, "division by zero");
        Divisor { m: if d == 1 { 0 } else { u64::MAX / d as u64 + 1 }, d }
    }

    /// `n / d`.
    #[inline(always)]
    pub(super) fn div(self, n: u32) -> u32 {
        if self.m == 0 {
            n
        } else {
            ((self.m as u128 * n as u128) >> 64) as u32
        }
    }

    /// `(n / d, n % d)`.
    #[inline(always)]
    pub(super) fn div_rem(self, n: u32) -> (u32, u32) {
        let q = self.div(n);
        (q, n - q * self.d)
    }
}

#[cfg(test)]
mod tests {
    use super::Divisor;
    use proptest::prelude::*;

    #[test]
    fn edges() {
        for d in [1u32, 2, 3, 5, 7, 255, 256, 257, 768, 1 << 31, u32::MAX - 1, u32::MAX] {
            let v = Divisor::new(d);
            for n in [0u32, 1, d - 1, d, d.wrapping_add(1), u32::MAX - 1, u32::MAX] {
                assert_eq!(v.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }

    proptest! {
        #[test]
        fn matches_hardware_division(n in any::<u32>(), d in 1u32..) {
            prop_assert_eq!(Divisor::new(d).div_rem(n), (n / d, n % d));
        }
    }
}
