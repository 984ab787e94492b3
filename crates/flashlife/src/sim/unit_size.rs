//! Byte addresses to mapping units, on every request of the run loop.

/// A mapping unit's size in bytes. The run loop turns each request's bytes into units, and
/// the ones it draws ahead too: a 64-bit division each time was a tenth of the loop's own
/// time, so a power of two (every unit flashlife's geometries give) is a shift instead.
#[derive(Debug, Clone, Copy)]
pub(super) struct UnitSize {
    bytes: u64,
    /// `log2(bytes)` when `bytes` is a power of two.
    shift: Option<u32>,
}

impl UnitSize {
    /// A unit of `bytes` (> 0).
    pub fn new(bytes: u64) -> Self {
        assert!(bytes > 0, "a mapping unit has bytes");
        UnitSize { bytes, shift: bytes.is_power_of_two().then(|| bytes.trailing_zeros()) }
    }

    pub fn bytes(self) -> u64 {
        self.bytes
    }

    /// `x / bytes`.
    #[inline]
    pub fn div(self, x: u64) -> u64 {
        match self.shift {
            Some(s) => x >> s,
            None => x / self.bytes,
        }
    }

    /// `x.div_ceil(bytes)`.
    #[inline]
    pub fn div_ceil(self, x: u64) -> u64 {
        match self.shift {
            Some(s) => (x >> s) + (x & (self.bytes - 1) != 0) as u64,
            None => x.div_ceil(self.bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::UnitSize;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_same_as_dividing(shift in 0u32..40, odd in 1u64..100_000, x in any::<u64>()) {
            for bytes in [1u64 << shift, odd] {
                let u = UnitSize::new(bytes);
                prop_assert_eq!(u.div(x), x / bytes);
                prop_assert_eq!(u.div_ceil(x), x.div_ceil(bytes));
            }
        }
    }

    #[test]
    fn edges() {
        let u = UnitSize::new(4096);
        assert_eq!((u.div(0), u.div(4095), u.div(4096), u.div(u64::MAX)), (0, 0, 1, u64::MAX >> 12));
        assert_eq!((u.div_ceil(0), u.div_ceil(1), u.div_ceil(4096), u.div_ceil(4097)), (0, 1, 1, 2));
        assert_eq!(u.div_ceil(u64::MAX), u64::MAX.div_ceil(4096));
        assert_eq!(UnitSize::new(1).div_ceil(u64::MAX), u64::MAX);
    }
}
