//! A cache hint shared by the layers whose data outgrows the cache (the FTL's maps, the
//! queued scheduler's transaction records).

/// Ask for the cache line holding `slice[i]` (nothing on targets without a prefetch hint;
/// an index past the end is ignored). Only a hint: it changes no state and cannot fault.
#[inline(always)]
pub(crate) fn prefetch<T>(slice: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if i < slice.len() {
        // SAFETY: `_mm_prefetch` only hints the cache; the address is in bounds.
        #[allow(unused_unsafe)]
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(slice.as_ptr().add(i) as *const i8);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, i);
}

/// As [`prefetch`], for every cache line `slice[i]` touches (a record larger than a line,
/// or one that straddles two).
#[inline(always)]
pub(crate) fn prefetch_all<T>(slice: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if i < slice.len() {
        let size = std::mem::size_of::<T>();
        // SAFETY: as in `prefetch`; every address is inside `slice[i]`.
        #[allow(unused_unsafe)]
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let p = slice.as_ptr().add(i) as *const i8;
            let mut off = 0;
            while off < size {
                _mm_prefetch::<_MM_HINT_T0>(p.add(off));
                off += 64;
            }
            if size > 0 {
                _mm_prefetch::<_MM_HINT_T0>(p.add(size - 1));
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, i);
}
