//! FT-PASSD's program-failure manager data structures (Lee et al., IEEE Access 2020,
//! Section IV): a block-mapping table (LBN -> PBN), a shift table (the physical page offset
//! of logical page 0 of a block) and, per logical block hit by a program failure, an open
//! block list of `(PBN, write pointer)` elements. Translation is the paper's Algorithm 2,
//! failure handling Algorithm 1, idle-time migration Algorithm 3.
//!
//! The structures are pure bookkeeping (no flash, no time) so that the Figure 10 and 11
//! sequences can be checked step by step; the device policies in [`policy`] wire them to the
//! device's flash and scheduler. Nothing here allocates on the common path: open block lists
//! exist only for logical blocks that saw a failure and are not yet migrated.

pub mod policy;

pub use policy::{BlockCopy, Shifted};

/// One element of an open block list: a physical block and the pages written to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OpenEntry {
    pub block: u32,
    pub wp: u32,
}

/// An open block list: the physical blocks one logical block is spread over, head first.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OpenBlockList {
    pub lbn: u32,
    pub entries: Vec<OpenEntry>,
}

impl OpenBlockList {
    /// Pages the list holds (sum of write pointers).
    pub fn pages(&self) -> u32 {
        self.entries.iter().map(|e| e.wp).sum()
    }
}

/// Block map + shift table + open block lists.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ShiftTranslator {
    pages_per_block: u32,
    block_map: Vec<u32>,
    /// Shift per logical block; `null` marks a block with an open block list.
    shift: Vec<u16>,
    null: u16,
    lists: Vec<OpenBlockList>,
    peak_entries: usize,
    peak_lists: usize,
}

impl ShiftTranslator {
    /// `block_map[lbn]` is the physical block each logical block starts mapped to.
    pub fn new(block_map: Vec<u32>, pages_per_block: u32) -> Self {
        let n = block_map.len();
        // The paper's NULL: pages per block + 1 (fits the shift's bits, see `MemoryReport`).
        let null = (pages_per_block + 1).min(u16::MAX as u32) as u16;
        ShiftTranslator {
            pages_per_block,
            block_map,
            shift: vec![0; n],
            null,
            lists: Vec::new(),
            peak_entries: 0,
            peak_lists: 0,
        }
    }

    pub fn pages_per_block(&self) -> u32 {
        self.pages_per_block
    }

    /// Logical blocks mapped.
    pub fn blocks(&self) -> u32 {
        self.block_map.len() as u32
    }

    /// Physical block mapped to `lbn` (the block-map entry).
    pub fn block_map(&self, lbn: u32) -> u32 {
        self.block_map[lbn as usize]
    }

    /// The shift of `lbn`, `None` when it is NULL (an open block list exists).
    pub fn shift(&self, lbn: u32) -> Option<u32> {
        let s = self.shift[lbn as usize];
        (s != self.null).then_some(s as u32)
    }

    /// The open block list of `lbn`, if any.
    pub fn open_list(&self, lbn: u32) -> Option<&OpenBlockList> {
        if self.shift[lbn as usize] != self.null {
            return None;
        }
        self.lists.iter().find(|l| l.lbn == lbn)
    }

    fn list_mut(&mut self, lbn: u32) -> Option<&mut OpenBlockList> {
        self.lists.iter_mut().find(|l| l.lbn == lbn)
    }

    /// Open block lists that exist now.
    pub fn lists(&self) -> &[OpenBlockList] {
        &self.lists
    }

    /// Most list elements alive at once, and most lists alive at once.
    pub fn peak(&self) -> (usize, usize) {
        (self.peak_entries, self.peak_lists)
    }

    /// Algorithm 2 for a read: the physical block and page holding logical page `lpo`.
    ///
    /// The pseudo-code's loop condition reads `LPO > iter.WP`; the text ("if the LPO is less
    /// than the WP, the LPO becomes the PPO") and Figure 12(b) (`IF 2 >= 2`) use `>=`, which is
    /// the correct one: a block with WP pages holds offsets 0..WP-1.
    pub fn translate_read(&self, lbn: u32, lpo: u32) -> (u32, u32) {
        match self.shift(lbn) {
            Some(shift) => (self.block_map[lbn as usize], (lpo + shift) % self.pages_per_block),
            None => {
                let list = self.open_list(lbn).expect("NULL shift without an open block list");
                let mut lpo = lpo;
                let mut it = list.entries.iter().peekable();
                while let Some(e) = it.next() {
                    if lpo < e.wp || it.peek().is_none() {
                        return (e.block, lpo);
                    }
                    lpo -= e.wp;
                }
                unreachable!("open block lists are never empty")
            }
        }
    }

    /// Algorithm 2 for a write: where the next program of `lbn` goes. With an open block
    /// list it is the tail's write pointer (the host writes a block's pages in order).
    pub fn translate_write(&self, lbn: u32, lpo: u32) -> (u32, u32) {
        match self.shift(lbn) {
            Some(shift) => (self.block_map[lbn as usize], (lpo + shift) % self.pages_per_block),
            None => {
                let list = self.open_list(lbn).expect("NULL shift without an open block list");
                let tail = list.entries.last().expect("open block lists are never empty");
                (tail.block, tail.wp)
            }
        }
    }

    /// A write to `lbn` succeeded: advance the tail's write pointer if a list exists.
    #[inline]
    pub fn written(&mut self, lbn: u32) {
        if self.shift[lbn as usize] == self.null {
            if let Some(tail) = self.list_mut(lbn).and_then(|l| l.entries.last_mut()) {
                tail.wp += 1;
            }
        }
    }

    /// Algorithm 1: the program of logical page `lpo` of `lbn` failed; `new_block` (a reserved
    /// block) takes the retry at its page 0.
    pub fn program_failed(&mut self, lbn: u32, lpo: u32, new_block: u32) {
        if self.shift[lbn as usize] != self.null {
            let failed = self.block_map[lbn as usize];
            self.lists.push(OpenBlockList { lbn, entries: vec![OpenEntry { block: failed, wp: lpo }] });
            self.shift[lbn as usize] = self.null;
        }
        let list = self.list_mut(lbn).expect("list just made");
        list.entries.push(OpenEntry { block: new_block, wp: 0 });
        let entries = self.lists.iter().map(|l| l.entries.len()).sum();
        self.peak_entries = self.peak_entries.max(entries);
        self.peak_lists = self.peak_lists.max(self.lists.len());
    }

    /// True when `lbn`'s open block list holds a whole block's worth of pages (Algorithm 3's
    /// precondition).
    pub fn ready_to_migrate(&self, lbn: u32) -> bool {
        self.open_list(lbn).is_some_and(|l| l.pages() == self.pages_per_block)
    }

    /// The `k`-th copy of Algorithm 3 for `lbn`: `(source block, source page, target block,
    /// target page)`, or `None` past the last one. Sources are taken from the head of the
    /// list in order; targets follow the tail's write pointer.
    pub fn migration_step(&self, lbn: u32, k: u32) -> Option<(u32, u32, u32, u32)> {
        let list = self.open_list(lbn)?;
        let (tail, sources) = list.entries.split_last()?;
        let mut i = k;
        for e in sources {
            if i < e.wp {
                return Some((e.block, i, tail.block, tail.wp + k));
            }
            i -= e.wp;
        }
        None
    }

    /// End of Algorithm 3: map `lbn` to the tail block, shift = the tail's write pointer, delete
    /// the list. Returns the list's other blocks (each saw a program failure: bad blocks).
    pub fn finish_migration(&mut self, lbn: u32) -> Vec<u32> {
        let Some(pos) = self.lists.iter().position(|l| l.lbn == lbn) else {
            return Vec::new();
        };
        let list = self.lists.swap_remove(pos);
        let (tail, sources) = list.entries.split_last().expect("open block lists are never empty");
        self.block_map[lbn as usize] = tail.block;
        self.shift[lbn as usize] = tail.wp as u16;
        sources.iter().map(|e| e.block).collect()
    }

    /// Replace `lbn`'s whole mapping (a fallback that copied it into `block` in logical order):
    /// shift 0, no list. Returns the blocks of the deleted list, if any.
    pub fn remap(&mut self, lbn: u32, block: u32) -> Vec<u32> {
        let old = match self.lists.iter().position(|l| l.lbn == lbn) {
            Some(pos) => self.lists.swap_remove(pos).entries.iter().map(|e| e.block).collect(),
            None => vec![self.block_map[lbn as usize]],
        };
        self.block_map[lbn as usize] = block;
        self.shift[lbn as usize] = 0;
        old
    }

    /// The host erases `lbn`: returns the physical block to erase and the bad blocks of an
    /// unfinished list (all but its tail, which becomes the mapped block). Shift is reset.
    pub fn erase(&mut self, lbn: u32) -> (u32, Vec<u32>) {
        let bad = if self.shift[lbn as usize] == self.null {
            let pos = self.lists.iter().position(|l| l.lbn == lbn).expect("NULL shift without an open block list");
            let list = self.lists.swap_remove(pos);
            let (tail, sources) = list.entries.split_last().expect("open block lists are never empty");
            self.block_map[lbn as usize] = tail.block;
            sources.iter().map(|e| e.block).collect()
        } else {
            Vec::new()
        };
        self.shift[lbn as usize] = 0;
        (self.block_map[lbn as usize], bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::memory::{bits_for, MemoryReport};

    const PPB: u32 = 4;

    /// Blocks 0..3 mapped 1:1, reserved blocks 100 and 101 (the paper's numbering).
    fn translator() -> ShiftTranslator {
        ShiftTranslator::new(vec![0, 1, 2, 3], PPB)
    }

    fn entries(t: &ShiftTranslator, lbn: u32) -> Vec<(u32, u32)> {
        t.open_list(lbn).map(|l| l.entries.iter().map(|e| (e.block, e.wp)).collect()).unwrap_or_default()
    }

    /// A copy: source block and page, target block and page.
    type Copy = (u32, u32, u32, u32);

    /// Run Algorithm 3 to completion and return the copies made.
    fn migrate(t: &mut ShiftTranslator, lbn: u32) -> (Vec<Copy>, Vec<u32>) {
        assert!(t.ready_to_migrate(lbn));
        let mut copies = Vec::new();
        let mut k = 0;
        while let Some(c) = t.migration_step(lbn, k) {
            copies.push(c);
            k += 1;
        }
        (copies, t.finish_migration(lbn))
    }

    /// Figure 10: D0, D1 written to LBN 0 (PBN 0); D2 fails at page 2; retried on page 0 of
    /// PBN 100; D3 follows on PBN 100; in idle time D0 and D1 move to PBN 100 pages 2, 3; the
    /// map becomes LBN 0 -> PBN 100, shift 2.
    #[test]
    fn figure_10_sequence() {
        let mut t = translator();
        // Data Dk is logical page k of LBN 0; `at` records where each landed.
        let mut at = std::collections::HashMap::new();
        for d in 0..2 {
            let w = t.translate_write(0, d);
            assert_eq!(w, (0, d));
            t.written(0);
            at.insert(d, w);
        }
        // 1. program fail D2 at PBN 0 page 2.
        assert_eq!(t.translate_write(0, 2), (0, 2));
        // 2-3. re-program D2 on PBN 100 page 0; the open block list records both blocks.
        t.program_failed(0, 2, 100);
        assert_eq!(t.shift(0), None);
        assert_eq!(t.block_map(0), 0);
        assert_eq!(entries(&t, 0), vec![(0, 2), (100, 0)]);
        assert_eq!(t.translate_write(0, 2), (100, 0));
        t.written(0);
        at.insert(2, (100, 0));
        assert_eq!(entries(&t, 0), vec![(0, 2), (100, 1)]);
        // 4-5. program D3 on PBN 100 page 1.
        assert_eq!(t.translate_write(0, 3), (100, 1));
        t.written(0);
        at.insert(3, (100, 1));
        assert_eq!(entries(&t, 0), vec![(0, 2), (100, 2)]);
        for d in 0..4 {
            assert_eq!(t.translate_read(0, d), at[&d], "read D{d} before migration");
        }
        // Other blocks are untouched.
        assert_eq!(t.translate_read(1, 3), (1, 3));
        // 6-7. copy D0, D1 to PBN 100 pages 2, 3; map LBN 0 -> PBN 100, shift 2.
        let (copies, bad) = migrate(&mut t, 0);
        assert_eq!(copies, vec![(0, 0, 100, 2), (0, 1, 100, 3)]);
        assert_eq!(bad, vec![0]);
        for &(sb, sp, tb, tp) in &copies {
            for v in at.values_mut() {
                if *v == (sb, sp) {
                    *v = (tb, tp);
                }
            }
        }
        assert_eq!((t.block_map(0), t.shift(0)), (100, Some(2)));
        assert!(t.open_list(0).is_none());
        for d in 0..4 {
            assert_eq!(t.translate_read(0, d), at[&d], "read D{d} after migration");
        }
        assert_eq!(t.translate_read(0, 0), (100, 2));
        assert_eq!(t.translate_read(0, 2), (100, 0));
        // The host erases LBN 0 later: PBN 100 is erased and the shift reset.
        assert_eq!(t.erase(0), (100, vec![]));
        assert_eq!(t.shift(0), Some(0));
    }

    /// Figure 11: as Figure 10, but D3 fails again on PBN 100 page 1 and is retried on PBN 101;
    /// migration copies D0, D1 (from PBN 0) then D2 (from PBN 100) to PBN 101 pages 1-3; the map
    /// becomes LBN 0 -> PBN 101, shift 1.
    #[test]
    fn figure_11_sequence() {
        let mut t = translator();
        let mut at = std::collections::HashMap::new();
        for d in 0..2 {
            at.insert(d, t.translate_write(0, d));
            t.written(0);
        }
        t.program_failed(0, 2, 100);
        at.insert(2, t.translate_write(0, 2));
        t.written(0);
        // 4. program fail D3 at PBN 100 page 1.
        assert_eq!(t.translate_write(0, 3), (100, 1));
        // 5-6. re-program D3 on PBN 101 page 0: a new element at the tail.
        t.program_failed(0, 3, 101);
        assert_eq!(entries(&t, 0), vec![(0, 2), (100, 1), (101, 0)]);
        assert_eq!(t.translate_write(0, 3), (101, 0));
        t.written(0);
        at.insert(3, (101, 0));
        assert_eq!(entries(&t, 0), vec![(0, 2), (100, 1), (101, 1)]);
        assert_eq!(t.peak(), (3, 1));
        for d in 0..4 {
            assert_eq!(t.translate_read(0, d), at[&d], "read D{d} before migration");
        }
        // 7-8. copy D0, D1 then D2; 9. map update.
        let (copies, bad) = migrate(&mut t, 0);
        assert_eq!(copies, vec![(0, 0, 101, 1), (0, 1, 101, 2), (100, 0, 101, 3)]);
        assert_eq!(bad, vec![0, 100]);
        for &(sb, sp, tb, tp) in &copies {
            for v in at.values_mut() {
                if *v == (sb, sp) {
                    *v = (tb, tp);
                }
            }
        }
        assert_eq!((t.block_map(0), t.shift(0)), (101, Some(1)));
        for d in 0..4 {
            assert_eq!(t.translate_read(0, d), at[&d], "read D{d} after migration");
        }
    }

    /// Figure 12(b): LBN 2 failed at page 2 of PBN 2, D10 (LPO 2) retried on PBN 100 page 0:
    /// the read of LPO 2 walks the list (2 >= WP 2, LPO = 0) and lands on PBN 100 page 0.
    #[test]
    fn figure_12b_read_walks_the_list() {
        let mut t = translator();
        t.written(2);
        t.program_failed(2, 2, 100);
        t.written(2);
        assert_eq!(t.translate_read(2, 2), (100, 0));
        assert_eq!(t.translate_read(2, 1), (2, 1));
        // Erasing an unmigrated block keeps the tail and returns the failed block as bad.
        assert_eq!(t.erase(2), (100, vec![2]));
        assert!(t.lists().is_empty());
    }

    /// Section V-A: 8192 blocks of 1536 pages need 13 + 11 bits a block, 13 KiB + 11 KiB =
    /// 24 KiB, against about 40 MB for a page map of the 12 M pages.
    #[test]
    fn paper_memory_figure() {
        let m = MemoryReport::new(8192, 8192, 1536, true, 0, 0);
        assert_eq!((m.block_map_bits_per_entry, m.shift_bits_per_entry), (13, 11));
        assert_eq!(m.block_map_bytes, 13 * 1024);
        assert_eq!(m.shift_table_bytes, 11 * 1024);
        assert_eq!(m.total_bytes, 24 * 1024);
        let pages = 8192u64 * 1536;
        assert_eq!(pages, 12_582_912);
        assert_eq!(m.page_map_bits_per_entry, 24);
        assert!((35e6..45e6).contains(&(m.page_map_bytes as f64)), "{}", m.page_map_bytes);
        let no_shift = MemoryReport::new(8192, 8192, 1536, false, 0, 0);
        assert_eq!(no_shift.total_bytes, 13 * 1024);
        assert_eq!(bits_for(2), 1);
        assert_eq!(bits_for(8192), 13);
        assert_eq!(bits_for(8193), 14);
    }
}
