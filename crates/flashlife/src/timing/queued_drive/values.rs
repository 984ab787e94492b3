//! Value -> id of the kept transactions (`tokens.rs`), looked up on every submission (is
//! this value taken? which transaction does `after` name?) and written once per transaction.
//!
//! Ids are consecutive and forgotten oldest first, so "kept" is just `id >= base`: an entry
//! whose id has fallen below the ring's base is dead where it lies. A general hash map
//! cannot reuse such entries in place (with open addressing a later key may have probed past
//! them), so the map it replaces kept them until a sweep rebuilt it (`retain` over twice the
//! kept transactions, about once per 16,384 of them): under callgrind the inserts and sweeps
//! cost about 100 instructions per transaction. Here a value lives only in its own bucket
//! (four entries, one cache line), so a dead entry is simply a free one: inserting takes the
//! first free entry of the bucket, looking up scans it, and nothing is ever swept. A full
//! bucket spills into a small side map, marked per bucket so that look-ups of other buckets
//! never touch it; when the side map grows the buckets double.

use std::collections::HashMap;

/// No value is even (`tokens.rs`): 0 marks an entry never used.
const EMPTY: u64 = 0;
const WAYS: usize = 4;
const MIN_BUCKETS: usize = 1 << 12;

/// One cache line: a look-up reads one line.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Bucket([(u64, u64); WAYS]);

pub(super) struct ValueTable {
    buckets: Vec<Bucket>,
    /// log2 of `buckets.len()`.
    bits: u32,
    /// One bit per bucket: some value of it was spilled into `spill` (cleared on growth).
    spilled: Vec<u64>,
    spill: HashMap<u64, u64>,
}

impl ValueTable {
    pub fn new() -> Self {
        Self::with_buckets(MIN_BUCKETS)
    }

    fn with_buckets(n: usize) -> Self {
        ValueTable {
            buckets: vec![Bucket([(EMPTY, 0); WAYS]); n],
            bits: n.trailing_zeros(),
            spilled: vec![0; n.div_ceil(64)],
            spill: HashMap::new(),
        }
    }

    #[inline]
    fn bucket(&self, v: u64) -> usize {
        (v.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize
    }

    #[inline]
    fn has_spilled(&self, b: usize) -> bool {
        self.spilled[b / 64] & (1 << (b % 64)) != 0
    }

    /// The kept (id at least `base`) transaction with value `v`.
    #[inline]
    pub fn get(&self, v: u64, base: u64) -> Option<u64> {
        let b = self.bucket(v);
        for &(value, id) in &self.buckets[b].0 {
            if value == v && id >= base {
                return Some(id);
            }
        }
        if self.has_spilled(b) {
            return self.spill.get(&v).copied().filter(|&id| id >= base);
        }
        None
    }

    /// Record `v` -> `id`; no kept transaction has `v` (ids below `base` are dead).
    #[inline]
    pub fn insert(&mut self, v: u64, id: u64, base: u64) {
        debug_assert!(self.get(v, base).is_none(), "a value names one transaction");
        let b = self.bucket(v);
        // A dead entry of the same value first, so that a bucket holds a value once.
        let bucket = &mut self.buckets[b].0;
        let slot = bucket
            .iter()
            .position(|&(value, _)| value == v)
            .or_else(|| bucket.iter().position(|&(value, i)| value == EMPTY || i < base));
        match slot {
            Some(s) => {
                bucket[s] = (v, id);
                // A value is stored once in the whole table: a dead copy may have spilled.
                if self.has_spilled(b) {
                    self.spill.remove(&v);
                }
            }
            None => self.spill_insert(b, v, id, base),
        }
    }

    #[cold]
    fn spill_insert(&mut self, b: usize, v: u64, id: u64, base: u64) {
        self.spilled[b / 64] |= 1 << (b % 64);
        self.spill.insert(v, id);
        if self.spill.len() > self.buckets.len() / 32 {
            self.spill.retain(|_, i| *i >= base);
            if self.spill.len() > self.buckets.len() / 64 {
                self.grow(base);
            }
        }
    }

    /// Twice the buckets, with only the kept entries.
    fn grow(&mut self, base: u64) {
        let mut bigger = Self::with_buckets(self.buckets.len() * 2);
        for (v, id) in self.entries() {
            if id >= base {
                bigger.insert(v, id, base);
            }
        }
        *self = bigger;
    }

    /// Every entry, dead ones included (the map this replaced kept them too until a sweep).
    fn entries(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let used = self.buckets.iter().flat_map(|b| b.0).filter(|&(v, _)| v != EMPTY);
        used.chain(self.spill.iter().map(|(&v, &id)| (v, id)))
    }
}

/// As a map of value -> id, the form checkpoints have always stored (dead entries come back
/// dead: their ids are below the restored ring's base).
impl serde::Serialize for ValueTable {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        // The length first: the checkpoint's encoding (postcard) needs it up front.
        let mut m = s.serialize_map(Some(self.entries().count()))?;
        for (v, id) in self.entries() {
            m.serialize_entry(&v, &id)?;
        }
        m.end()
    }
}

impl<'de> serde::Deserialize<'de> for ValueTable {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map: HashMap<u64, u64> = serde::Deserialize::deserialize(d)?;
        let mut t = Self::with_buckets((map.len() / 2).next_power_of_two().max(MIN_BUCKETS));
        // In id order, so that the layout (and a later checkpoint's bytes) does not depend
        // on the map's iteration order; with no base known nothing counts as dead here.
        let mut entries: Vec<(u64, u64)> = map.into_iter().collect();
        entries.sort_unstable_by_key(|&(_, id)| id);
        for (v, id) in entries {
            t.put(v, id);
        }
        Ok(t)
    }
}

impl ValueTable {
    /// Insert or overwrite `v` while refilling (no base known).
    fn put(&mut self, v: u64, id: u64) {
        let b = self.bucket(v);
        let bucket = &mut self.buckets[b].0;
        match bucket.iter().position(|&(value, _)| value == v || value == EMPTY) {
            Some(s) => bucket[s] = (v, id),
            None => {
                self.spilled[b / 64] |= 1 << (b % 64);
                self.spill.insert(v, id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a plain map of the kept values (the reference): ids consecutive, kept from a
    /// base that moves on (and sometimes stalls, as the ring does behind pending work),
    /// values from a small range so that buckets fill and spill and forgotten values come
    /// back, and a checkpoint round trip half-way.
    #[test]
    fn lookups_match_a_map_of_the_kept_values_through_spills_growth_and_restores() {
        let mut t = ValueTable::new();
        let mut reference: HashMap<u64, u64> = HashMap::new();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut base = 0u64;
        let (mut spilled, mut grown) = (0, false);
        for id in 0..80_000u64 {
            let v = loop {
                let v = 2 * (next() % 30_000) + 1;
                if reference.get(&v).is_none_or(|&i| i < base) {
                    break v;
                }
            };
            t.insert(v, id, base);
            reference.insert(v, id);
            // Kept: the last 2,000 to 12,000 transactions, the base stalling for a while.
            if (id / 10_000) % 2 == 0 || id < base + 2_000 {
                base = base.max(id.saturating_sub(2_000));
            }
            if id == 40_000 {
                // Through the checkpoint's encoding (which needs a map's length up front).
                let bytes = postcard::to_stdvec(&t).unwrap();
                t = postcard::from_bytes(&bytes).unwrap();
            }
            spilled = spilled.max(t.spill.len());
            if id % 500 == 0 {
                // A value is stored once (a checkpoint's map could not hold it twice).
                let mut values: Vec<u64> = t.entries().map(|(v, _)| v).collect();
                let n = values.len();
                values.sort_unstable();
                values.dedup();
                assert_eq!(values.len(), n, "a value stored twice at id {id}");
            }
            grown |= t.buckets.len() > MIN_BUCKETS;
            for q in [v, 2 * (next() % 30_000) + 1] {
                let want = reference.get(&q).copied().filter(|&i| i >= base);
                assert_eq!(t.get(q, base), want, "value {q} at id {id}, base {base}");
            }
        }
        assert!(spilled > 0 && grown, "the test spilled ({spilled}) and grew the table");
    }
}
