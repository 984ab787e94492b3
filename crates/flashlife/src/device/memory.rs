//! What a device policy reports about the metadata it keeps in device memory
//! ([`MemoryReport`], the summary's `open_channel.memory`), computed from the geometry and
//! the peaks the policy saw, so that a policy's cost can be set beside a page map's.

/// Bits needed to tell `n` values apart.
pub fn bits_for(n: u64) -> u32 {
    if n <= 1 {
        1
    } else {
        64 - (n - 1).leading_zeros()
    }
}

/// A device policy's metadata memory, from the geometry: a block map (one physical block
/// number per logical block), an optional per-block page-offset table (the `shift_*` fields;
/// 0 bytes without one), per-block lists of extra blocks at their peak (the `open_list_*`
/// fields), and a page map of the same drive for comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MemoryReport {
    /// Bits of a block-map entry: a physical block number.
    pub block_map_bits_per_entry: u32,
    /// Bits of an offset-table entry: offsets 0..pages_per_block-1 plus a NULL marking a block
    /// with a list (= pages_per_block + 1); 0 without the table.
    pub shift_bits_per_entry: u32,
    /// Entries in each table (logical blocks).
    pub entries: u64,
    pub block_map_bytes: u64,
    pub shift_table_bytes: u64,
    /// Bits of a list element (block number + write pointer).
    pub open_list_bits_per_entry: u32,
    /// List elements alive at the peak, and their bytes (plus one logical block key per list).
    pub open_list_peak_entries: u64,
    pub open_list_peak_bytes: u64,
    /// Block map + offset table + lists at their peak.
    pub total_bytes: u64,
    /// A page map of the same drive: one entry of `page_map_bits_per_entry` per physical page.
    pub page_map_bits_per_entry: u32,
    pub page_map_bytes: u64,
}

impl MemoryReport {
    /// Metadata for `entries` logical blocks over `physical_blocks` blocks of `pages_per_block`
    /// pages, with `peak_entries` list elements in `peak_lists` lists at the peak, with or
    /// without an offset table.
    pub fn new(
        entries: u64,
        physical_blocks: u64,
        pages_per_block: u32,
        offset_table: bool,
        peak_entries: u64,
        peak_lists: u64,
    ) -> Self {
        let bytes = |bits: u64| bits.div_ceil(8);
        let block_bits = bits_for(physical_blocks);
        let shift_bits = if offset_table { bits_for(pages_per_block as u64 + 2) } else { 0 };
        let wp_bits = bits_for(pages_per_block as u64 + 1);
        let list_bits = block_bits + wp_bits;
        let lbn_bits = bits_for(entries);
        let open_list_peak_bytes = bytes(peak_entries * list_bits as u64 + peak_lists * lbn_bits as u64);
        let block_map_bytes = bytes(entries * block_bits as u64);
        let shift_table_bytes = bytes(entries * shift_bits as u64);
        let pages = physical_blocks * pages_per_block as u64;
        let page_bits = bits_for(pages);
        MemoryReport {
            block_map_bits_per_entry: block_bits,
            shift_bits_per_entry: shift_bits,
            entries,
            block_map_bytes,
            shift_table_bytes,
            open_list_bits_per_entry: list_bits,
            open_list_peak_entries: peak_entries,
            open_list_peak_bytes,
            total_bytes: block_map_bytes + shift_table_bytes + open_list_peak_bytes,
            page_map_bits_per_entry: page_bits,
            page_map_bytes: bytes(pages * page_bits as u64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Closed forms: ceil(log2(n)) bits, and a block map alone for 1000 blocks of 64 pages
    /// (10 bits an entry, 1250 bytes) against a page map of 64,000 pages (16 bits each).
    #[test]
    fn bits_and_bytes_follow_the_geometry() {
        assert_eq!((bits_for(1), bits_for(2), bits_for(3), bits_for(1024), bits_for(1025)), (1, 1, 2, 10, 11));
        let m = MemoryReport::new(1000, 1000, 64, false, 0, 0);
        assert_eq!((m.block_map_bits_per_entry, m.shift_bits_per_entry), (10, 0));
        assert_eq!((m.block_map_bytes, m.shift_table_bytes, m.total_bytes), (1250, 0, 1250));
        assert_eq!((m.page_map_bits_per_entry, m.page_map_bytes), (16, 128_000));
        // Two list elements of 10 + 7 bits and one 10-bit key: 44 bits, 6 bytes.
        let l = MemoryReport::new(1000, 1000, 64, true, 2, 1);
        assert_eq!((l.open_list_bits_per_entry, l.open_list_peak_bytes), (17, 6));
    }
}
