//! Software prefetch and huge pages for the FTL's map accesses.
//!
//! A drive larger than the last-level cache spends most of its time waiting for the
//! logical-to-physical map: each unit GC moves updates the map at a random place. The unit
//! each map entry belongs to is known well ahead (a victim's reverse map is read in order),
//! so its map line can be requested early and the misses overlap with the work on the units
//! before it. A prefetch is only a hint: it changes no state and cannot fault.
//!
//! The maps of a large drive also span thousands of 4 KiB pages, more than the TLB holds, so
//! each miss would add a page walk: on Linux they are asked for transparent huge pages.

/// Units of a host request whose map entries are prefetched (the rest of a long request
/// is read in order, which the hardware prefetcher follows).
pub(super) const HOST_PREFETCH_UNITS: u32 = 8;

/// Units ahead of the one being moved whose map entries GC requests.
pub(super) const GC_PREFETCH_UNITS: u32 = 16;

pub(super) use crate::cache_hint::prefetch;

/// Maps smaller than this stay on ordinary pages (a huge page is 2 MiB).
#[cfg(target_os = "linux")]
const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// A vector of `n` copies of `value`, backed by transparent huge pages where the system
/// allows it (Linux, `madvise` mode): same contents as `vec![value; n]`.
pub(super) fn map_vec(n: usize, value: u32) -> Vec<u32> {
    let mut v: Vec<u32> = Vec::with_capacity(n);
    let bytes = n * std::mem::size_of::<u32>();
    #[cfg(target_os = "linux")]
    if bytes >= HUGE_PAGE_MIN_BYTES {
        // Advise before the first touch, so that the pages are faulted in huge. The range is
        // the allocation's whole pages; a refusal (THP off) leaves ordinary pages.
        let page = 4096usize;
        let start = v.as_ptr() as usize;
        let aligned = start.div_ceil(page) * page;
        let end = (start + bytes) / page * page;
        if end > aligned {
            // SAFETY: the range lies inside this vector's allocation; the advice changes how
            // it is backed, not its contents.
            unsafe {
                libc::madvise(aligned as *mut libc::c_void, end - aligned, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
    v.resize(n, value);
    v
}
