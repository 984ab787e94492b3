//! Value -> id of the kept transactions (`tokens.rs`), looked up when a submission's
//! `after` misses the small cache of recent values (which transaction does it name?) and
//! written once per transaction. (Whether a fresh value is taken is asked of `soon.rs`, which
//! holds only the values at or after the clock and stays in cache.)
//!
//! **Queued inserts.** A write reads its bucket (for a dead entry), a random line of a table
//! larger than the L2: `ValueTable::push` asks for that line and writes it `BATCH` inserts
//! later, when it has arrived; look-ups scan the few queued inserts first.
//!
//! Ids are consecutive and forgotten oldest first, so "kept" is just "within the ring": an
//! entry whose id has fallen below the ring's base is dead where it lies. A general hash map
//! cannot reuse such entries in place (with open addressing a later key may have probed past
//! them), so the map this replaced kept them until a sweep rebuilt it. Here a value lives
//! only in its own bucket (one cache line), so a dead entry is simply a free one: inserting
//! takes the first free entry of the bucket, looking up scans it, and nothing is ever swept.
//! A full bucket spills into a small side map, marked per bucket so that look-ups of other
//! buckets never touch it; when the side map grows the buckets double.
//!
//! **Compact entries.** Nearly every submission asks whether its fresh value is taken, and
//! nearly always it is not; that probe is a random cache line. With the full `(value, id)`
//! pair per entry (16 bytes, four to a line) the table grew to 2 MiB on `bench-16g` (32,768
//! buckets: it is sized by the ring's peak, 39,000 transactions, and never shrinks), twice
//! this machine's L2, so the probe missed to the shared L3 or memory. An entry is now a
//! 32-bit tag of the value and the low 32 bits of the id (8 bytes, eight to a line): the
//! same number of entries in a quarter of the memory. A look-up compares the eight tags at
//! once and answers "not taken" from the line alone unless a tag matches; a match is
//! confirmed against the ring's own record (`value_of`), which the caller reads next anyway
//! when the value is taken. The answers are exactly the full table's: the table only says
//! where to look, the ring decides.

use std::collections::HashMap;

pub(super) const WAYS: usize = 8;
const MIN_BUCKETS: usize = 1 << 11;

/// Inserts held back (`ValueTable::queued`) before they are written to their buckets.
const BATCH: usize = 8;

/// One cache line: a look-up reads one line. Tags and ids apart, so the eight tags compare
/// as one vector.
/// (`soon.rs` uses the same line.)
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Bucket {
    pub tags: [u32; WAYS],
    /// The low 32 bits of each entry's id (ids in the ring span less than 2^32, as the
    /// engine's tokens do): its offset in the ring is `id - base` in 32-bit arithmetic.
    pub ids: [u32; WAYS],
}

impl Bucket {
    /// A mask of the entries whose tag is `tag(v)`, so that the usual answer (none) takes no
    /// branch per entry.
    #[inline]
    pub fn hits(&self, v: u64) -> u32 {
        let t = tag(v);
        let mut hits = 0u32;
        for (i, &x) in self.tags.iter().enumerate() {
            hits |= u32::from(x == t) << i;
        }
        hits
    }
}

/// The bucket of `v` in a table of `2^bits` buckets: the top bits of a multiplicative hash.
#[inline]
pub(super) fn bucket_index(v: u64, bits: u32) -> usize {
    (v.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

pub(super) struct ValueTable {
    buckets: Vec<Bucket>,
    /// log2 of `buckets.len()`.
    bits: u32,
    /// One bit per bucket: some value of it was spilled into `spill` (cleared on growth).
    spilled: Vec<u64>,
    /// Full value -> full id, for the entries that found their bucket full.
    spill: HashMap<u64, u64>,
    /// (value, id) of the latest inserts, not yet in their buckets: each bucket's line is
    /// asked for when its insert is queued and written `BATCH` inserts later, once it has
    /// arrived, instead of waiting for it at once. Look-ups scan these first.
    queued: [(u64, u64); BATCH],
    n_queued: usize,
}

/// Bits of the value that do not choose its bucket (which comes from the top of a
/// multiplicative hash): the value's own low bits above the always-set lowest one.
#[inline]
pub(super) fn tag(v: u64) -> u32 {
    (v >> 1) as u32
}

impl ValueTable {
    /// Empty, for a ring whose next id is `next` (every entry starts dead: its id is the one
    /// before `next`, which is never in the ring again until ids wrap past 2^32).
    pub fn new(next: u64) -> Self {
        Self::with_buckets(MIN_BUCKETS, next)
    }

    fn with_buckets(n: usize, next: u64) -> Self {
        let dead = (next as u32).wrapping_sub(1);
        ValueTable {
            buckets: vec![Bucket { tags: [0; WAYS], ids: [dead; WAYS] }; n],
            bits: n.trailing_zeros(),
            spilled: vec![0; n.div_ceil(64)],
            spill: HashMap::new(),
            queued: [(0, 0); BATCH],
            n_queued: 0,
        }
    }

    /// A table of the ring's values (`values`, oldest first, the first one's id `base`),
    /// with room for about twice as many.
    pub fn of_ring(base: u64, values: impl ExactSizeIterator<Item = u64>) -> Self {
        let n = (values.len() / (WAYS / 2)).next_power_of_two().max(MIN_BUCKETS);
        Self::filled(n, base, values)
    }

    fn filled(n: usize, base: u64, values: impl ExactSizeIterator<Item = u64>) -> Self {
        let mut t = Self::with_buckets(n, base);
        for (i, v) in values.enumerate() {
            // Never grows here: growth is the caller's (`Tokens::push`), which has the ring.
            t.insert(v, base + i as u64, base, i);
        }
        t
    }

    /// Twice the buckets, refilled from the ring's values (as `of_ring`).
    pub fn grown(&self, base: u64, values: impl ExactSizeIterator<Item = u64>) -> Self {
        Self::filled(self.buckets.len() * 2, base, values)
    }

    #[inline]
    fn bucket(&self, v: u64) -> usize {
        bucket_index(v, self.bits)
    }

    #[inline]
    fn has_spilled(&self, b: usize) -> bool {
        self.spilled[b / 64] & (1 << (b % 64)) != 0
    }

    /// The kept transaction with value `v`: the ring holds ids `base..base + len`, the
    /// `i`-th of them with value `value_of(i)`.
    #[inline]
    pub fn get(&self, v: u64, base: u64, len: usize, value_of: impl Fn(usize) -> u64) -> Option<u64> {
        // The queued inserts first: they are not in their buckets yet.
        for &(qv, id) in &self.queued[..self.n_queued] {
            if qv == v && id.wrapping_sub(base) < len as u64 {
                return Some(id);
            }
        }
        let b = self.bucket(v);
        let bucket = &self.buckets[b];
        let mut hits = bucket.hits(v);
        while hits != 0 {
            let i = hits.trailing_zeros() as usize;
            hits &= hits - 1;
            let off = bucket.ids[i].wrapping_sub(base as u32) as usize;
            if off < len && value_of(off) == v {
                return Some(base + off as u64);
            }
        }
        if self.has_spilled(b) {
            return self.spill.get(&v).copied().filter(|&id| id >= base && id - base < len as u64);
        }
        None
    }

    /// Record `v` -> `id` at once, where the ring holds `base..base + len` and no kept
    /// transaction has `v`. Returns whether the table should grow (its side map has grown
    /// too large).
    pub fn insert(&mut self, v: u64, id: u64, base: u64, len: usize) -> bool {
        self.place(v, id, base, len)
    }

    /// As `insert`, the bucket written a few inserts later (its line asked for now). The
    /// ids queued must stay in the ring until then (the newest ids do: the ring forgets its
    /// oldest, beyond thousands kept).
    #[inline]
    pub fn push(&mut self, v: u64, id: u64, base: u64, len: usize) -> bool {
        crate::cache_hint::prefetch(&self.buckets, self.bucket(v));
        self.queued[self.n_queued] = (v, id);
        self.n_queued += 1;
        if self.n_queued < BATCH {
            return false;
        }
        self.n_queued = 0;
        let mut grow = false;
        for i in 0..BATCH {
            let (v, id) = self.queued[i];
            grow |= self.place(v, id, base, len);
        }
        grow
    }

    /// Write `v` -> `id` into its bucket (or the side map).
    #[inline]
    fn place(&mut self, v: u64, id: u64, base: u64, len: usize) -> bool {
        let b = self.bucket(v);
        let bucket = &mut self.buckets[b];
        // The first dead entry (its id outside the ring). A dead entry of the same value may
        // stay elsewhere in the bucket or the side map: it can never be confirmed by the ring.
        let mut dead = 0u32;
        for (i, &x) in bucket.ids.iter().enumerate() {
            dead |= u32::from(x.wrapping_sub(base as u32) as usize >= len) << i;
        }
        if dead != 0 {
            let s = dead.trailing_zeros() as usize;
            bucket.tags[s] = tag(v);
            bucket.ids[s] = id as u32;
            return false;
        }
        self.spill_insert(b, v, id, base)
    }

    #[cold]
    fn spill_insert(&mut self, b: usize, v: u64, id: u64, base: u64) -> bool {
        self.spilled[b / 64] |= 1 << (b % 64);
        self.spill.insert(v, id);
        if self.spill.len() > self.buckets.len() / 32 {
            self.spill.retain(|_, i| *i >= base);
            return self.spill.len() > self.buckets.len() / 64;
        }
        false
    }

    #[cfg(test)]
    pub fn buckets(&self) -> usize {
        self.buckets.len()
    }

    #[cfg(test)]
    pub fn spilled(&self) -> usize {
        self.spill.len()
    }
}

/// A xorshift stream for the tables' randomized tests (this one and `soon.rs`'s).
#[cfg(test)]
pub(super) fn xorshift() -> impl FnMut() -> u64 {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a plain map of the kept values (the reference), driven as `Tokens` drives
    /// it: ids consecutive, kept from a base that moves on (and sometimes stalls, as the ring
    /// does behind pending work), values from a small range so that buckets fill and spill,
    /// tags collide (values 2^33 apart) and forgotten values come back, growth from the
    /// ring, and a rebuild from the ring half-way (as a restored checkpoint does).
    #[test]
    fn lookups_match_a_map_of_the_kept_values_through_spills_growth_and_rebuilds() {
        // The ring's values by id (all of them; the ring is `all[base..]`).
        let mut all: Vec<u64> = Vec::new();
        let mut base = 0u64;
        let mut t = ValueTable::new(0);
        let mut reference: HashMap<u64, u64> = HashMap::new();
        let mut next = xorshift();
        // Half the values share their low 33 bits with another: their tags collide.
        let value = |r: u64| 2 * (r % 15_000) + 1 + ((r >> 40) & 1) * (1 << 33);
        let (mut spilled, mut grown) = (0, false);
        for id in 0..80_000u64 {
            let v = loop {
                let v = value(next());
                if reference.get(&v).is_none_or(|&i| i < base) {
                    break v;
                }
            };
            // Queued inserts (as `Tokens` makes them) in some stretches, immediate ones in others.
            let len = all.len() - base as usize;
            let grow = if (id / 3_000) % 2 == 0 { t.push(v, id, base, len) } else { t.insert(v, id, base, len) };
            all.push(v);
            if grow {
                t = t.grown(base, all[base as usize..].iter().copied());
            }
            reference.insert(v, id);
            // Kept: the last 2,000 to 12,000 transactions, the base stalling for a while.
            if (id / 10_000) % 2 == 0 || id < base + 2_000 {
                let to = base.max(id.saturating_sub(2_000));
                base = to;
            }
            if id == 40_000 {
                // As a restored checkpoint does.
                t = ValueTable::of_ring(base, all[base as usize..].iter().copied());
            }
            spilled = spilled.max(t.spilled());
            grown |= t.buckets() > MIN_BUCKETS;
            let ring = &all[base as usize..];
            for q in [v, value(next()), v ^ (1 << 33)] {
                let want = reference.get(&q).copied().filter(|&i| i >= base);
                assert_eq!(t.get(q, base, ring.len(), |i| ring[i]), want, "value {q} at id {id}, base {base}");
            }
        }
        assert!(spilled > 0 && grown, "the test spilled ({spilled}) and grew the table");
    }
}
