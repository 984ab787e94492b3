//! Software prefetch for the FTL's map accesses.
//!
//! A drive larger than the last-level cache spends most of its time waiting for the
//! logical-to-physical map: each unit GC moves updates the map at a random place. The unit
//! each map entry belongs to is known well ahead (a victim's reverse map is read in order),
//! so its map line can be requested early and the misses overlap with the work on the units
//! before it. A prefetch is only a hint: it changes no state and cannot fault.

/// Units of a host request whose map entries are prefetched (the rest of a long request
/// is read in order, which the hardware prefetcher follows).
pub(super) const HOST_PREFETCH_UNITS: u32 = 8;

/// Units ahead of the one being moved whose map entries GC requests.
pub(super) const GC_PREFETCH_UNITS: u32 = 16;

/// Ask for the cache line holding `slice[i]` (nothing on targets without a prefetch hint;
/// an index past the end is ignored).
#[inline(always)]
pub(super) fn prefetch<T>(slice: &[T], i: usize) {
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
