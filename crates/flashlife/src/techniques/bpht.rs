//! Bad-page history table (BPHT) for runtime bad-block salvage (design section 3, technique 3;
//! paper `002`, section IV and Figure 3).
//!
//! A page whose program fails is recorded as bad; allocation then skips it instead of retiring
//! the whole block. The paper's table is a hash map keyed by `(block, page)` whose value is the
//! number of consecutive bad pages starting there, so that the allocator skips a whole run with
//! one lookup; a new bad page merges with the run ending just before it (extends it) and with the
//! run starting just after it (absorbs it), keeping the table at one entry per maximal run.
//!
//! # What we keep, and why it differs from the paper
//!
//! * **Run table** (`runs`): exactly the paper's BPHT, start `(block, page)` -> run length, in a
//!   `std` `HashMap` with a small multiply-fold hasher ([`FastBuildHasher`]). [`entries`] is its
//!   size, the paper's metric.
//! * **Per-block fast path** (`slot`, 4 bytes a block): `0` means the block has never had a bad
//!   page, and then [`BadPageTable::is_bad`] and [`BadPageTable::next_good_page`] answer from
//!   that one array read, never hashing. Bad pages are rare (the paper: the table stays at
//!   hundreds of entries), so this is the case the allocator hits almost always.
//! * **Per-block page bitmap**, only for blocks that have bad pages. The paper only ever queries
//!   the table at the allocator's write pointer, which is a run start or a good page. Asking
//!   whether an arbitrary page is bad needs the run *containing* it, which a table keyed by run
//!   starts cannot find in O(1) (nor can one keyed by both ends: a page deep inside a run matches
//!   neither). The bitmap answers that in O(1), costs `pages_per_block / 8` bytes per affected
//!   block (96 bytes for the paper's 768-page blocks), and also finds the run ending at
//!   `page - 1` for the merge: a backward scan over 64-bit words (`leading_ones`), O(run length
//!   / 64), no hash probe. The paper searches the table linearly backwards instead; a reverse
//!   index from run end to start would also be O(1) but doubles the table and still could not
//!   answer interior queries.
//!
//! # Bad pages survive erases
//!
//! There is deliberately no "clear on erase": a page that failed to program is physically
//! defective, and the table is a *history*: after an erase the allocator must still skip it.
//! (That is also how the paper's Figure 3 can know page 5 is bad before page 4 fails: it failed
//! in an earlier program/erase cycle.) [`BadPageTable::retire_block`] forgets a block's entries
//! when the whole block is retired and will never be allocated again.
//!
//! [`entries`]: BadPageTable::entries

use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::mem::size_of;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Largest page index (exclusive) [`BadPageTable::mark_bad`] accepts: far above any real block
/// (the papers' largest have 1536 pages), low enough that a hostile page number cannot make one
/// block's bitmap grow beyond 128 KiB.
pub const MAX_PAGES_PER_BLOCK: u32 = 1 << 20;

/// A tiny non-cryptographic hasher for integer keys (FxHash-like), much faster than SipHash for
/// the table's `u64` keys. The product is folded (high half xor low half) so that every key bit
/// reaches the low bits that pick a bucket: a plain multiply would hash all blocks with the same
/// page index alike, since the block sits in the key's high half.
#[derive(Debug, Default, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct FastHasher {
    hash: u64,
}

/// Odd constant with well spread bits (the one rustc's FxHash uses).
const FX_K: u64 = 0xf135_7aea_2e62_a9c5;

impl Hasher for FastHasher {
    #[inline]
    fn write_u64(&mut self, x: u64) {
        let p = ((self.hash ^ x) as u128).wrapping_mul(FX_K as u128);
        self.hash = (p as u64) ^ ((p >> 64) as u64);
    }

    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// `BuildHasher` for [`FastHasher`], usable with any `std` `HashMap`.
pub type FastBuildHasher = BuildHasherDefault<FastHasher>;

/// Packs `(block, page)` into one integer so a lookup hashes a single `u64`.
#[inline]
fn key(block: u32, page: u32) -> u64 {
    ((block as u64) << 32) | page as u64
}

/// Page bitmap of one block that has bad pages.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct BlockPages {
    /// The block this entry belongs to (to fix `slot` when entries move on retirement).
    block: u32,
    /// Number of bad pages (set bits).
    bad: u32,
    /// Bit `p` set = page `p` bad; grows to the highest bad page, pages beyond it are good.
    bits: Vec<u64>,
}

impl BlockPages {
    #[inline]
    fn get(&self, page: u32) -> bool {
        let w = (page / 64) as usize;
        w < self.bits.len() && (self.bits[w] >> (page % 64)) & 1 == 1
    }

    fn set(&mut self, page: u32) {
        let w = (page / 64) as usize;
        if w >= self.bits.len() {
            self.bits.resize(w + 1, 0);
        }
        self.bits[w] |= 1 << (page % 64);
    }

    /// First page of the run of bad pages containing bad page `page`.
    fn run_start(&self, page: u32) -> u32 {
        let mut w = (page / 64) as usize;
        // Bits 0..=page%64 of the first word; ones above `page` must not count.
        let mut mask = u64::MAX >> (63 - page % 64);
        loop {
            let zeros = !self.bits[w] & mask;
            if zeros != 0 {
                return (w as u32) * 64 + (64 - zeros.leading_zeros());
            }
            if w == 0 {
                return 0;
            }
            w -= 1;
            mask = u64::MAX;
        }
    }

    /// First good page at or after `page`.
    fn first_good_from(&self, page: u32) -> u32 {
        let mut w = (page / 64) as usize;
        let mut mask = u64::MAX << (page % 64);
        while w < self.bits.len() {
            let zeros = !self.bits[w] & mask;
            if zeros != 0 {
                return (w as u32) * 64 + zeros.trailing_zeros();
            }
            w += 1;
            mask = u64::MAX;
        }
        (self.bits.len() as u32) * 64
    }

    /// Start pages of every run, ascending.
    fn run_starts(&self) -> impl Iterator<Item = u32> + '_ {
        let mut carry = 0u64;
        self.bits.iter().enumerate().flat_map(move |(w, &word)| {
            // A run starts where a bad page follows a good one (or page 0).
            let starts = word & !((word << 1) | carry);
            carry = word >> 63;
            BitIter(starts).map(move |b| w as u32 * 64 + b)
        })
    }
}

/// Iterates the set bit positions of a word, ascending.
#[derive(serde::Serialize, serde::Deserialize)]
struct BitIter(u64);

impl Iterator for BitIter {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        if self.0 == 0 {
            return None;
        }
        let b = self.0.trailing_zeros();
        self.0 &= self.0 - 1;
        Some(b)
    }
}

/// What [`BadPageTable::mark_bad`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MarkOutcome {
    /// `false` if the page was already recorded bad (the table is unchanged).
    pub newly_bad: bool,
    /// The run ending at `page - 1` was extended (paper's Figure 3, steps 2-4).
    pub merged_preceding: bool,
    /// The run starting at `page + 1` was absorbed (paper's Figure 3, step 5).
    pub absorbed_following: bool,
    /// First page of the maximal bad run now containing the page.
    pub run_start: u32,
    /// Length of that run.
    pub run_len: u32,
}

impl MarkOutcome {
    /// The first page after the run: good, and where a failed write is retried (if it is still
    /// inside the block).
    pub fn next_page(&self) -> u32 {
        self.run_start + self.run_len
    }
}

/// Counters of a [`BadPageTable`], for the run summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BphtStats {
    /// Entries (maximal runs) in the table now.
    pub entries: u64,
    /// Largest number of entries ever held.
    pub peak_entries: u64,
    /// Bad pages recorded now (over all non-retired blocks).
    pub bad_pages: u64,
    /// Blocks that have at least one bad page.
    pub blocks_with_bad_pages: u64,
    /// Queries (`is_bad`, `next_good_page`) asked.
    pub queries: u64,
    /// Queries answered by the per-block fast path (block without bad pages).
    pub fast_path_queries: u64,
    /// Hash-table probes made by queries and updates.
    pub lookups: u64,
    /// Bad pages recorded (new ones only).
    pub inserts: u64,
    /// Neighbouring runs merged (a page joining both neighbours counts two).
    pub merges: u64,
    /// Estimated heap and inline memory in bytes.
    pub memory_bytes: u64,
}

/// The bad-page history table: which pages of which blocks failed to program, as maximal runs,
/// with a fast path for the (common) blocks that have none. See the module documentation.
///
/// Query counters use `Cell`, so queries take `&self`; the table is `Send` but not `Sync`
/// (each simulated drive owns its own).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct BadPageTable {
    /// The paper's BPHT: run start `(block, page)` -> number of consecutive bad pages.
    runs: HashMap<u64, u32, FastBuildHasher>,
    /// Per block: 0 = no bad pages (fast path), else 1 + index into `blocks`.
    slot: Vec<u32>,
    /// Bitmaps of the blocks that have bad pages.
    blocks: Vec<BlockPages>,
    queries: Cell<u64>,
    fast_path_queries: Cell<u64>,
    lookups: Cell<u64>,
    inserts: u64,
    merges: u64,
    peak_entries: usize,
}

impl BadPageTable {
    /// An empty table; the per-block fast path grows as blocks get bad pages.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty table with the per-block fast path sized for `blocks` blocks up front.
    pub fn with_blocks(blocks: u32) -> Self {
        BadPageTable { slot: vec![0; blocks as usize], ..Self::default() }
    }

    #[inline]
    fn pages(&self, block: u32) -> Option<&BlockPages> {
        match self.slot.get(block as usize) {
            Some(&s) if s != 0 => Some(&self.blocks[s as usize - 1]),
            _ => None,
        }
    }

    #[inline]
    fn lookup(&self, block: u32, page: u32) -> Option<u32> {
        self.lookups.set(self.lookups.get() + 1);
        self.runs.get(&key(block, page)).copied()
    }

    /// Records that `page` of `block` failed to program, merging it with the run ending just
    /// before it and the run starting just after it so that runs stay maximal. Marking a page that
    /// is already bad changes nothing (`newly_bad == false`).
    ///
    /// Cost: at most two hash probes (preceding entry, following entry) plus a word scan of the
    /// block's bitmap to find the preceding run's start.
    ///
    /// # Errors
    /// [`Error::Run`] if `page >= MAX_PAGES_PER_BLOCK`.
    pub fn mark_bad(&mut self, block: u32, page: u32) -> Result<MarkOutcome> {
        if page >= MAX_PAGES_PER_BLOCK {
            return Err(Error::Run(format!(
                "bad-page table: page {page} of block {block} is beyond the largest supported block \
                 ({MAX_PAGES_PER_BLOCK} pages)"
            )));
        }
        let idx = match self.slot.get(block as usize) {
            Some(&s) if s != 0 => s as usize - 1,
            _ => {
                if self.slot.len() <= block as usize {
                    self.slot.resize(block as usize + 1, 0);
                }
                self.blocks.push(BlockPages { block, bad: 0, bits: Vec::new() });
                self.slot[block as usize] = self.blocks.len() as u32;
                self.blocks.len() - 1
            }
        };
        let bp = &mut self.blocks[idx];
        if bp.get(page) {
            let start = bp.run_start(page);
            let len = bp.first_good_from(page) - start;
            return Ok(MarkOutcome {
                newly_bad: false,
                merged_preceding: false,
                absorbed_following: false,
                run_start: start,
                run_len: len,
            });
        }
        bp.set(page);
        bp.bad += 1;
        let prev_bad = page > 0 && bp.get(page - 1);
        let next_bad = bp.get(page + 1);
        let mut start = page;
        let mut len = 1;
        if prev_bad {
            // The run ending at page - 1 (maximal, so it ends exactly there): extend it.
            start = bp.run_start(page - 1);
            len = page - start + 1;
        }
        if next_bad {
            // The run starting at page + 1: absorb it.
            self.lookups.set(self.lookups.get() + 1);
            let next_len = self.runs.remove(&key(block, page + 1));
            debug_assert!(next_len.is_some(), "run at ({block}, {}) missing from the table", page + 1);
            // Fall back to the bitmap, which is authoritative, if the table ever disagreed.
            len += next_len.unwrap_or_else(|| self.blocks[idx].first_good_from(page + 1) - (page + 1));
            self.merges += 1;
        }
        if prev_bad {
            self.lookups.set(self.lookups.get() + 1);
            let entry = self.runs.entry(key(block, start)).or_insert(0);
            debug_assert_eq!(*entry, page - start, "preceding run of ({block}, {page}) has the wrong length");
            *entry = len;
            self.merges += 1;
        } else {
            self.runs.insert(key(block, start), len);
        }
        self.inserts += 1;
        self.peak_entries = self.peak_entries.max(self.runs.len());
        Ok(MarkOutcome {
            newly_bad: true,
            merged_preceding: prev_bad,
            absorbed_following: next_bad,
            run_start: start,
            run_len: len,
        })
    }

    /// Whether `page` of `block` is recorded bad. O(1): the fast path for blocks without bad
    /// pages, the block's bitmap otherwise (no hash probe).
    pub fn is_bad(&self, block: u32, page: u32) -> bool {
        self.queries.set(self.queries.get() + 1);
        match self.pages(block) {
            None => {
                self.fast_path_queries.set(self.fast_path_queries.get() + 1);
                false
            }
            Some(bp) => bp.get(page),
        }
    }

    /// The raw BPHT entry at `(block, page)`: the length of the bad run starting there, if any.
    /// One hash probe (none for blocks without bad pages).
    pub fn run_at(&self, block: u32, page: u32) -> Option<u32> {
        self.pages(block)?;
        self.lookup(block, page)
    }

    /// The first good page at or after `from` in a block of `pages_per_block` pages, or `None`
    /// if every remaining page is bad or `from` is past the end.
    ///
    /// Cost: nothing but the fast-path read for a block without bad pages and one bitmap read
    /// when `from` is good; when `from` starts a bad run, one hash probe skips the whole run (the
    /// paper's skip: entry `(10, 3) = 2` sends the write to page 5). If `from` is inside a run
    /// (only after a merge absorbed the run starting at `from`), the bitmap is scanned forward
    /// instead; [`MarkOutcome::next_page`] gives a failed write's retry page without that.
    pub fn next_good_page(&self, block: u32, from: u32, pages_per_block: u32) -> Option<u32> {
        self.queries.set(self.queries.get() + 1);
        if from >= pages_per_block {
            return None;
        }
        let Some(bp) = self.pages(block) else {
            self.fast_path_queries.set(self.fast_path_queries.get() + 1);
            return Some(from);
        };
        if !bp.get(from) {
            return Some(from);
        }
        let next = match self.lookup(block, from) {
            // Runs are maximal, so the page right after one is good.
            Some(len) => from + len,
            None => bp.first_good_from(from),
        };
        (next < pages_per_block).then_some(next)
    }

    /// Forgets every bad page of `block`, for a block being retired for good (it will never be
    /// allocated again, so its history only costs memory). Returns the number of bad pages
    /// forgotten. Not to be called on erase: bad pages stay bad (see the module documentation).
    pub fn retire_block(&mut self, block: u32) -> u32 {
        let Some(&s) = self.slot.get(block as usize) else { return 0 };
        if s == 0 {
            return 0;
        }
        let idx = s as usize - 1;
        let bp = self.blocks.swap_remove(idx);
        for start in bp.run_starts() {
            self.runs.remove(&key(block, start));
        }
        self.slot[block as usize] = 0;
        if let Some(moved) = self.blocks.get(idx) {
            self.slot[moved.block as usize] = idx as u32 + 1;
        }
        bp.bad
    }

    /// Number of bad pages recorded in `block`. O(1).
    pub fn bad_pages_in_block(&self, block: u32) -> u32 {
        self.pages(block).map_or(0, |bp| bp.bad)
    }

    /// Whether `block` has any bad page (the fast-path test). O(1).
    pub fn has_bad_pages(&self, block: u32) -> bool {
        self.pages(block).is_some()
    }

    /// The table's entries for `block` as `(start page, run length)`, ascending. For inspection
    /// and tests: it scans the whole table.
    pub fn runs_in_block(&self, block: u32) -> Vec<(u32, u32)> {
        let mut runs: Vec<(u32, u32)> =
            self.runs.iter().filter(|(&k, _)| (k >> 32) as u32 == block).map(|(&k, &len)| (k as u32, len)).collect();
        runs.sort_unstable();
        runs
    }

    /// Entries in the table: one per maximal run of bad pages (the paper's table size).
    pub fn entries(&self) -> usize {
        self.runs.len()
    }

    /// Largest number of entries the table ever held.
    pub fn peak_entries(&self) -> usize {
        self.peak_entries
    }

    /// Hash-table probes so far (queries and updates).
    pub fn lookups(&self) -> u64 {
        self.lookups.get()
    }

    /// Bad pages recorded so far (new ones only, including those of since-retired blocks).
    pub fn inserts(&self) -> u64 {
        self.inserts
    }

    /// Neighbouring runs merged so far.
    pub fn merges(&self) -> u64 {
        self.merges
    }

    /// Estimated memory in bytes: the hash table (buckets of key and value plus one control
    /// byte each), the per-block fast path, and the bitmaps of blocks with bad pages. Counted
    /// from what the table holds, not from allocator capacities, so that the figure depends
    /// only on the table's contents (a resumed run reports what an uninterrupted one does).
    pub fn memory_bytes(&self) -> usize {
        // A SwissTable keeps at most 7/8 of its buckets full, with a power-of-two bucket count.
        let buckets = if self.runs.is_empty() { 0 } else { (self.runs.len() * 8).div_ceil(7).next_power_of_two() };
        let table = buckets * (size_of::<(u64, u32)>() + 1);
        let fast = self.slot.len() * size_of::<u32>();
        let bitmaps = self.blocks.len() * size_of::<BlockPages>()
            + self.blocks.iter().map(|b| b.bits.len() * size_of::<u64>()).sum::<usize>();
        size_of::<Self>() + table + fast + bitmaps
    }

    /// All counters at once.
    pub fn stats(&self) -> BphtStats {
        BphtStats {
            entries: self.runs.len() as u64,
            peak_entries: self.peak_entries as u64,
            bad_pages: self.blocks.iter().map(|b| b.bad as u64).sum(),
            blocks_with_bad_pages: self.blocks.len() as u64,
            queries: self.queries.get(),
            fast_path_queries: self.fast_path_queries.get(),
            lookups: self.lookups.get(),
            inserts: self.inserts,
            merges: self.merges,
            memory_bytes: self.memory_bytes() as u64,
        }
    }

    /// Checks that the run table and the bitmaps describe the same maximal runs, and that the
    /// fast path agrees. For tests and debugging; O(table + bitmaps).
    pub fn check_invariants(&self) -> Result<()> {
        let fail = |m: String| Err(Error::Run(format!("bad-page table invariant: {m}")));
        let mut runs_from_bits = 0;
        for (i, bp) in self.blocks.iter().enumerate() {
            if self.slot.get(bp.block as usize) != Some(&(i as u32 + 1)) {
                return fail(format!("block {} not indexed by its slot", bp.block));
            }
            let ones: u32 = bp.bits.iter().map(|w| w.count_ones()).sum();
            if ones != bp.bad || ones == 0 {
                return fail(format!("block {} counts {} bad pages, bitmap has {ones}", bp.block, bp.bad));
            }
            for start in bp.run_starts() {
                let len = bp.first_good_from(start) - start;
                if self.runs.get(&key(bp.block, start)) != Some(&len) {
                    return fail(format!(
                        "block {}: run at {start} of {len} pages has entry {:?}",
                        bp.block,
                        self.runs.get(&key(bp.block, start))
                    ));
                }
                runs_from_bits += 1;
            }
        }
        if runs_from_bits != self.runs.len() {
            return fail(format!("{} entries but {runs_from_bits} runs in the bitmaps", self.runs.len()));
        }
        if self.slot.iter().filter(|&&s| s != 0).count() != self.blocks.len() {
            return fail("fast path marks blocks without bitmaps".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn table_of(t: &BadPageTable) -> Vec<(u32, u32, u32)> {
        let mut all: Vec<(u32, u32, u32)> = t.runs.iter().map(|(&k, &v)| ((k >> 32) as u32, k as u32, v)).collect();
        all.sort_unstable();
        all
    }

    #[test]
    fn paper_figure_3_sequence() {
        // Build the history the figure starts from, one failed page at a time.
        let mut t = BadPageTable::new();
        t.mark_bad(1, 1).unwrap();
        assert_eq!(table_of(&t), [(1, 1, 1)]);
        let o = t.mark_bad(1, 2).unwrap();
        assert!(o.merged_preceding && !o.absorbed_following);
        assert_eq!(table_of(&t), [(1, 1, 2)]);
        t.mark_bad(1, 3).unwrap();
        assert_eq!(table_of(&t), [(1, 1, 3)]);
        t.mark_bad(1, 5).unwrap(); // failed in an earlier cycle: not adjacent, its own entry
        assert_eq!(table_of(&t), [(1, 1, 3), (1, 5, 1)]);
        t.check_invariants().unwrap();

        // Steps 2-4 on their own (no following run): (1, 4) extends (1, 1) to four pages.
        let mut only_preceding = t.clone();
        only_preceding.retire_block(1);
        for p in [1, 2, 3] {
            only_preceding.mark_bad(1, p).unwrap();
        }
        only_preceding.mark_bad(1, 4).unwrap();
        assert_eq!(table_of(&only_preceding), [(1, 1, 4)]);

        // Step 1: the new bad page (1, 4); steps 2-4: merged into the preceding (1, 1) = 3 -> 4;
        // step 5: the merged run now reaches page 5, which starts (1, 5) = 1: absorbed -> 5.
        let lookups = t.lookups();
        let merges = t.merges();
        let o = t.mark_bad(1, 4).unwrap();
        assert_eq!(
            o,
            MarkOutcome { newly_bad: true, merged_preceding: true, absorbed_following: true, run_start: 1, run_len: 5 }
        );
        assert_eq!(table_of(&t), [(1, 1, 5)]);
        assert_eq!(t.lookups() - lookups, 2, "one probe for each neighbour");
        assert_eq!(t.merges() - merges, 2);
        assert_eq!(o.next_page(), 6);
        assert_eq!(t.entries(), 1);
        assert_eq!(t.peak_entries(), 2);
        assert_eq!(t.bad_pages_in_block(1), 5);
        t.check_invariants().unwrap();

        // Marking again changes nothing.
        let o = t.mark_bad(1, 3).unwrap();
        assert!(!o.newly_bad);
        assert_eq!((o.run_start, o.run_len), (1, 5));
        assert_eq!(table_of(&t), [(1, 1, 5)]);
    }

    #[test]
    fn absorbing_only_the_following_run_moves_its_key() {
        let mut t = BadPageTable::new();
        t.mark_bad(1, 5).unwrap();
        let o = t.mark_bad(1, 4).unwrap();
        assert!(!o.merged_preceding && o.absorbed_following);
        assert_eq!(table_of(&t), [(1, 4, 2)]);
    }

    #[test]
    fn paper_skip_example() {
        // "The entry at (10, 3) and its value of two indicate that the third page in block #10 is
        // defective, and data must be stored on the fifth page after skipping two bad pages."
        let mut t = BadPageTable::new();
        t.mark_bad(10, 3).unwrap();
        t.mark_bad(10, 4).unwrap();
        assert_eq!(table_of(&t), [(10, 3, 2)]);
        let before = t.lookups();
        assert_eq!(t.next_good_page(10, 3, 768), Some(5));
        assert_eq!(t.lookups() - before, 1, "a whole run skipped with one lookup");
        // Good pages and blocks without bad pages need no probe at all.
        let before = t.lookups();
        assert_eq!(t.next_good_page(10, 2, 768), Some(2));
        assert_eq!(t.next_good_page(10, 5, 768), Some(5));
        assert_eq!(t.next_good_page(11, 3, 768), Some(3));
        assert!(!t.is_bad(11, 3));
        assert_eq!(t.lookups(), before);
        // Inside the run (page 4), the bitmap finds the end.
        assert_eq!(t.next_good_page(10, 4, 768), Some(5));
        assert_eq!(t.run_at(10, 3), Some(2));
        assert_eq!(t.run_at(10, 4), None);
        // A run reaching the end of the block leaves no good page.
        assert_eq!(t.next_good_page(10, 3, 5), None);
        assert_eq!(t.next_good_page(10, 5, 5), None);
    }

    #[test]
    fn fast_path_counts_and_stats() {
        let mut t = BadPageTable::with_blocks(64);
        for b in 0..64 {
            assert!(!t.is_bad(b, 0));
            assert_eq!(t.next_good_page(b, 0, 8), Some(0));
        }
        let s = t.stats();
        assert_eq!((s.queries, s.fast_path_queries, s.lookups), (128, 128, 0));
        t.mark_bad(7, 0).unwrap();
        t.mark_bad(100, 63).unwrap(); // beyond with_blocks: the fast path grows
        t.mark_bad(100, 64).unwrap(); // crosses a bitmap word
        assert!(t.is_bad(100, 63) && t.is_bad(100, 64) && !t.is_bad(100, 65) && !t.is_bad(100, 62));
        assert_eq!(t.next_good_page(100, 63, 200), Some(65));
        assert_eq!(t.runs_in_block(100), [(63, 2)]);
        let s = t.stats();
        assert_eq!((s.entries, s.bad_pages, s.blocks_with_bad_pages, s.inserts, s.merges), (2, 3, 2, 3, 1));
        assert!(s.memory_bytes > 0);
        assert!(t.has_bad_pages(7) && !t.has_bad_pages(8));
        t.check_invariants().unwrap();
        assert!(t.mark_bad(0, MAX_PAGES_PER_BLOCK).is_err());
        t.check_invariants().unwrap();
    }

    #[test]
    fn retire_block_forgets_only_that_block() {
        let mut t = BadPageTable::new();
        for (b, p) in [(1, 0), (1, 1), (1, 9), (2, 4), (3, 7)] {
            t.mark_bad(b, p).unwrap();
        }
        assert_eq!(t.retire_block(1), 3);
        assert_eq!(t.retire_block(1), 0);
        assert_eq!(t.retire_block(99), 0);
        assert!(!t.is_bad(1, 0) && !t.has_bad_pages(1));
        assert!(t.is_bad(2, 4) && t.is_bad(3, 7));
        assert_eq!(t.entries(), 2);
        assert_eq!(t.peak_entries(), 4);
        t.check_invariants().unwrap();
    }

    #[test]
    fn hasher_spreads_blocks_with_the_same_page() {
        use std::hash::BuildHasher;
        let h = FastBuildHasher::default();
        let mut low_bits = std::collections::HashSet::new();
        for b in 0..256u32 {
            low_bits.insert(h.hash_one(key(b, 5)) & 0xff);
        }
        assert!(low_bits.len() > 128, "only {} distinct bucket bits", low_bits.len());
    }

    #[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
    enum Op {
        Mark(u32, u32),
        Retire(u32),
    }

    const BLOCKS: u32 = 4;
    const PAGES: u32 = 70; // crosses a 64-bit bitmap word

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            20 => (0..BLOCKS, 0..PAGES).prop_map(|(b, p)| Op::Mark(b, p)),
            // Dense marks in a short range make long runs and many merges.
            20 => (0..BLOCKS, 60..68u32).prop_map(|(b, p)| Op::Mark(b, p)),
            1 => (0..BLOCKS).prop_map(Op::Retire),
        ]
    }

    /// Maximal runs of a naive block model.
    fn naive_runs(pages: &[bool]) -> Vec<(u32, u32)> {
        let mut runs = Vec::new();
        let mut p = 0;
        while p < pages.len() {
            if pages[p] {
                let s = p;
                while p < pages.len() && pages[p] {
                    p += 1;
                }
                runs.push((s as u32, (p - s) as u32));
            } else {
                p += 1;
            }
        }
        runs
    }

    proptest! {
        #[test]
        fn matches_naive_model(ops in prop::collection::vec(op(), 1..200)) {
            let mut t = BadPageTable::new();
            let mut naive = vec![vec![false; PAGES as usize]; BLOCKS as usize + 1];
            for op in ops {
                match op {
                    Op::Mark(b, p) => {
                        let was_bad = naive[b as usize][p as usize];
                        naive[b as usize][p as usize] = true;
                        let o = t.mark_bad(b, p).unwrap();
                        prop_assert_eq!(o.newly_bad, !was_bad);
                        let blk = &naive[b as usize];
                        prop_assert!(o.run_start <= p && p < o.next_page());
                        prop_assert!((o.run_start..o.next_page()).all(|q| blk[q as usize]));
                        prop_assert!(o.run_start == 0 || !blk[o.run_start as usize - 1]);
                        prop_assert!(o.next_page() >= PAGES || !blk[o.next_page() as usize]);
                    }
                    Op::Retire(b) => {
                        let n = naive[b as usize].iter().filter(|&&x| x).count() as u32;
                        prop_assert_eq!(t.retire_block(b), n);
                        naive[b as usize].fill(false);
                    }
                }
                prop_assert!(t.check_invariants().is_ok(), "{:?}", t.check_invariants());
                let mut entries = 0;
                for b in 0..=BLOCKS {
                    let blk = &naive[b as usize];
                    let runs = naive_runs(blk);
                    entries += runs.len();
                    // Non-overlapping, maximal runs: exactly the naive model's.
                    prop_assert_eq!(t.runs_in_block(b), runs);
                    prop_assert_eq!(t.bad_pages_in_block(b) as usize, blk.iter().filter(|&&x| x).count());
                    for p in 0..PAGES {
                        prop_assert_eq!(t.is_bad(b, p), blk[p as usize]);
                        let want = (p..PAGES).find(|&q| !blk[q as usize]);
                        prop_assert_eq!(t.next_good_page(b, p, PAGES), want, "block {} from {}", b, p);
                    }
                    prop_assert!(!t.is_bad(b, PAGES + 100));
                }
                prop_assert_eq!(t.entries(), entries);
                prop_assert!(t.peak_entries() >= entries);
            }
        }
    }
}
