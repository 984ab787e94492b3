//! A pool of blocks and its write points: the free list, one active block per write stream
//! with its open page, and the GC watermarks. The block FTL keeps one pool per plane, the
//! open-channel host FTL one per parallel unit (its chunks are the blocks); both take free
//! blocks, fill their pages slot by slot and close them through these types, and ask the
//! same question before a host unit takes a new block (is the pool due for cleaning?).

use std::collections::VecDeque;
use std::ops::Range;

use super::{GcWatermarks, Stream};
use crate::timing::Done;

/// Free blocks per pool that host writes never take: GC needs one to move data into, and a
/// program failure during GC needs another to carry on.
pub const GC_RESERVE_BLOCKS: usize = 2;

/// Write streams a pool keeps an active block for (`Stream`: host, GC, translation pages,
/// levelling's cold data, relocations of the second placement class).
pub const STREAMS: usize = 5;

const NONE: u32 = u32::MAX;

/// The write point of a stream: its active block and the open page being filled.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Active {
    pub block: u32,
    pub page: u32,
    /// Units placed in the open page so far.
    pub slot: u32,
    /// Units per page of this block (at its mode).
    pub upp: u32,
    /// When the data of the open page's units is all in the controller (host memory).
    pub ready: Done,
}

impl Active {
    /// No active block.
    pub const CLOSED: Active = Active { block: NONE, page: 0, slot: 0, upp: 0, ready: Done::START };

    /// A block just taken from the free list, its first page to fill `page`.
    pub fn opened(block: u32, page: u32, upp: u32) -> Active {
        Active { block, page, slot: 0, upp, ready: Done::START }
    }

    #[inline]
    pub fn is_closed(&self) -> bool {
        self.block == NONE
    }

    /// Take the open page's next slot for a unit whose data is ready at `ready`. Slots are
    /// numbered `block * slots_per_block + page * stride + slot`. Returns the slot and whether
    /// the page is now full (its program is due).
    #[inline]
    pub fn take_slot(&mut self, slots_per_block: u32, stride: u32, ready: Done) -> (u32, bool) {
        let slot = self.block * slots_per_block + self.page * stride + self.slot;
        self.slot += 1;
        self.ready = self.ready.max(ready);
        (slot, self.slot >= self.upp)
    }

    /// The open page was programmed: fill page `next` now, or, with none left, close the
    /// write point (returns true: the block is full).
    #[inline]
    pub fn programmed(&mut self, next: Option<u32>) -> bool {
        self.slot = 0;
        self.ready = Done::START;
        match next {
            Some(page) => {
                self.page = page;
                false
            }
            None => {
                *self = Active::CLOSED;
                true
            }
        }
    }
}

/// A pool: its free blocks, a write point per stream, its GC watermarks, and `own`, the
/// owning FTL's further per-pool state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Pool<E> {
    pub free: VecDeque<u32>,
    pub active: [Active; STREAMS],
    pub marks: GcWatermarks,
    pub own: E,
}

impl<E> Pool<E> {
    /// A pool whose `blocks` are all free.
    pub fn new(blocks: Range<u32>, marks: GcWatermarks, own: E) -> Self {
        Pool { free: blocks.collect(), active: [Active::CLOSED; STREAMS], marks, own }
    }

    /// May `stream` take a free block? Host writes leave the last [`GC_RESERVE_BLOCKS`] to GC.
    #[inline]
    pub fn may_open(&self, stream: Stream) -> bool {
        stream != Stream::Host || self.free.len() > GC_RESERVE_BLOCKS
    }

    /// Is the pool due for cleaning before a host unit takes a new block here? The number of
    /// free blocks to clean up to if so; `None` while its host block is open or no GC is due.
    #[inline]
    pub fn gc_due(&mut self) -> Option<usize> {
        if !self.active[Stream::Host as usize].is_closed() {
            return None;
        }
        self.gc_target()
    }

    /// The number of free blocks to clean up to before any stream takes a new block here, if
    /// the watermarks say so (GC starts below the low one and goes on to the high one).
    #[inline]
    pub fn gc_target(&mut self) -> Option<usize> {
        self.marks.target(self.free.len(), GC_RESERVE_BLOCKS)
    }

    /// The cleaning [`Pool::gc_due`] asked for has run.
    #[inline]
    pub fn cleaned(&mut self) {
        self.marks.cleaned(self.free.len());
    }

    /// The stream whose write point is in `block`, if any.
    pub fn stream_in(&self, block: u32) -> Option<usize> {
        self.active.iter().position(|a| a.block == block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: a write point hands out its page's slots in order, says when the page is
    /// full, and closes after the last page; slot numbers follow the documented layout.
    #[test]
    fn a_write_point_fills_pages_then_closes() {
        let mut a = Active::opened(3, 0, 2);
        assert_eq!(a.take_slot(16, 4, Done::at(5)), (3 * 16, false));
        assert_eq!(a.take_slot(16, 4, Done::at(2)), (3 * 16 + 1, true));
        assert_eq!(a.ready, Done::at(5), "the page is ready when its latest unit is");
        assert!(!a.programmed(Some(2)));
        assert_eq!((a.page, a.slot, a.ready), (2, 0, Done::START));
        assert_eq!(a.take_slot(16, 4, Done::START).0, 3 * 16 + 2 * 4);
        assert!(a.programmed(None));
        assert!(a.is_closed());
    }

    /// Closed form (`GcWatermarks`): with low watermark 4 and high 6, a pool with 2 free
    /// blocks (the reserve, which host writes never take) is due, cleaning to one more than it
    /// has (3); it stays due, one block more each time, until cleaned up to 6.
    #[test]
    fn a_pool_asks_for_cleaning_between_its_watermarks() {
        let mut p = Pool::new(0..2, GcWatermarks::new(4, 6), ());
        assert!(!p.may_open(Stream::Host) && p.may_open(Stream::Gc));
        assert_eq!(p.gc_due(), Some(3));
        p.free.push_back(10);
        p.cleaned();
        assert!(p.may_open(Stream::Host));
        assert_eq!(p.gc_due(), Some(4), "still collecting below the high watermark");
        p.free.extend([11, 12, 13]);
        p.cleaned();
        assert_eq!(p.gc_due(), None);
        p.active[Stream::Host as usize] = Active::opened(0, 0, 1);
        assert_eq!(p.stream_in(0), Some(Stream::Host as usize));
        p.free.clear();
        assert_eq!(p.gc_due(), None, "a pool whose host block is open is not asked");
    }
}
