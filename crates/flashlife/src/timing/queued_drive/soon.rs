//! The uniqueness check of fresh values (`Tokens::unique_value`): is `v` some kept
//! transaction's value?
//!
//! Every submission asks, and nearly always the answer is no. A table of every kept
//! transaction (tens of thousands on `bench-16g`) would answer with a random line of half a
//! megabyte: one cache miss per transaction. A fresh value is never in the past, though: it
//! is an estimate from the clock or later (`estimate >= now`, moved on only upwards). So only kept values at or after the clock
//! can be taken, and those belong to the few transactions still in flight or just
//! finished early: a small table that stays in cache.
//!
//! Entries are never removed: one whose value has fallen behind the clock is free, as is one
//! whose transaction has left the ring (its id outside it). The clock given to `insert`
//! must not go back between calls (a scheduler's clock does not; were it to, the table is
//! rebuilt, `Soon::insert` says so), so an entry counted free can never match a later
//! probe, whose values are at or after that clock. A bucket with no free entry makes the
//! table grow (rebuilt twice the size from the ring): the answers are exactly "some kept
//! transaction at or after the clock has `v`".
//!
//! An entry is a 32-bit tag of the value and the low 32 bits of its id, eight to a cache
//! line, with the full values beside them: a probe compares the eight tags at once and reads
//! a full value only when a tag matches.

const MIN_BUCKETS: usize = 1 << 6;

const WAYS: usize = 8;

/// One cache line: a look-up reads one line. Tags and ids apart, so the eight tags compare
/// as one vector.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Bucket {
    tags: [u32; WAYS],
    /// The low 32 bits of each entry's id (ids in the ring span less than 2^32, as the
    /// engine's tokens do): its offset in the ring is `id - base` in 32-bit arithmetic.
    ids: [u32; WAYS],
}

impl Bucket {
    /// A mask of the entries whose tag is `tag(v)`, so that the usual answer (none) takes no
    /// branch per entry.
    #[inline]
    fn hits(&self, v: u64) -> u32 {
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
fn bucket_index(v: u64, bits: u32) -> usize {
    (v.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// Bits of the value that do not choose its bucket (which comes from the top of a
/// multiplicative hash): the value's own low bits above the always-set lowest one.
#[inline]
fn tag(v: u64) -> u32 {
    (v >> 1) as u32
}

pub(super) struct Soon {
    buckets: Vec<Bucket>,
    /// Each entry's full value (0 for one never used: values are odd), read to confirm a
    /// tag and when inserting.
    values: Vec<[u64; WAYS]>,
    /// log2 of `buckets.len()`.
    bits: u32,
    /// The latest clock `insert` was given: entries before it are free.
    clock: u64,
}

/// What `Soon::insert` asks of its caller.
#[must_use]
pub(super) enum Inserted {
    Done,
    /// No room (or the clock went back): rebuild from the ring, `Soon::rebuilt`, with
    /// `buckets` (the new value included in the ring).
    Rebuild {
        buckets: usize,
    },
}

impl Soon {
    pub fn new() -> Self {
        Self::with_buckets(MIN_BUCKETS)
    }

    fn with_buckets(n: usize) -> Self {
        Soon {
            buckets: vec![Bucket { tags: [0; WAYS], ids: [0; WAYS] }; n],
            values: vec![[0; WAYS]; n],
            bits: n.trailing_zeros(),
            clock: 0,
        }
    }

    /// A table of the ring's values at or after `now` (`values` oldest first, the first one's
    /// id `base`), with at least `buckets` buckets (more if a bucket would overflow).
    pub fn rebuilt(buckets: usize, now: u64, base: u64, values: impl Iterator<Item = u64> + Clone) -> Self {
        let mut n = buckets.max(MIN_BUCKETS);
        'size: loop {
            let mut t = Self::with_buckets(n);
            t.clock = now;
            for (i, v) in values.clone().enumerate() {
                // The ring as far as `i`: every entry placed so far is live.
                if v >= now && !t.place(v, base + i as u64, now, base, i) {
                    n *= 2;
                    continue 'size;
                }
            }
            return t;
        }
    }

    /// The number of buckets.
    pub fn buckets(&self) -> usize {
        self.buckets.len()
    }

    #[inline]
    fn bucket(&self, v: u64) -> usize {
        bucket_index(v, self.bits)
    }

    /// Does a kept transaction (the ring holding ids `base..base + len`) have value `v`,
    /// where `v` is at or after the clock of the last `insert`?
    #[inline]
    pub fn taken(&self, v: u64, base: u64, len: usize) -> bool {
        debug_assert!(v >= self.clock, "a probe behind the clock");
        let b = self.bucket(v);
        let bucket = &self.buckets[b];
        let mut hits = bucket.hits(v);
        while hits != 0 {
            let i = hits.trailing_zeros() as usize;
            hits &= hits - 1;
            if self.values[b][i] == v && (bucket.ids[i].wrapping_sub(base as u32) as usize) < len {
                return true;
            }
        }
        false
    }

    /// Record `v` -> `id` at clock `now` (`v >= now`; the ring holds `base..base + len`, not
    /// yet `id`).
    #[inline]
    pub fn insert(&mut self, v: u64, id: u64, now: u64, base: u64, len: usize) -> Inserted {
        if now < self.clock {
            return Inserted::Rebuild { buckets: self.buckets() };
        }
        self.clock = now;
        if self.place(v, id, now, base, len) {
            Inserted::Done
        } else {
            Inserted::Rebuild { buckets: self.buckets() * 2 }
        }
    }

    /// Write `v` -> `id` into a free entry of its bucket; false if there is none.
    #[inline]
    fn place(&mut self, v: u64, id: u64, now: u64, base: u64, len: usize) -> bool {
        let b = self.bucket(v);
        let values = &mut self.values[b];
        let bucket = &mut self.buckets[b];
        // Free: behind the clock (never-used entries, 0, included).
        let cut = now.max(1);
        let mut free = 0u32;
        for (i, &x) in values.iter().enumerate() {
            free |= u32::from(x < cut) << i;
        }
        if free == 0 {
            // Or forgotten: its transaction left the ring.
            for (i, &x) in bucket.ids.iter().enumerate() {
                free |= u32::from(x.wrapping_sub(base as u32) as usize >= len) << i;
            }
            if free == 0 {
                return false;
            }
        }
        let s = free.trailing_zeros() as usize;
        values[s] = v;
        bucket.tags[s] = tag(v);
        bucket.ids[s] = id as u32;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A xorshift stream for the randomized test.
    fn xorshift() -> impl FnMut() -> u64 {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// Against a plain map of the kept values, driven as `Tokens` drives it: a clock that
    /// moves on, fresh values at or after it (many in a short span, so that buckets fill and
    /// the table grows), ids kept from a base that moves on and sometimes stalls, probes of
    /// values just handed out, of values near them and of fresh candidates.
    #[test]
    fn answers_match_a_map_of_the_kept_values_at_or_after_the_clock() {
        let mut all: Vec<u64> = Vec::new();
        let mut base = 0u64;
        let mut t = Soon::new();
        let mut reference: HashMap<u64, u64> = HashMap::new();
        let mut next = xorshift();
        let (mut now, mut grew) = (0u64, 0);
        let kept = |reference: &HashMap<u64, u64>, v: u64, base: u64| reference.get(&v).is_some_and(|&i| i >= base);
        for id in 0..60_000u64 {
            now += next() % 7;
            // Values within 4 us of the clock, odd: collisions with kept ones are common.
            let mut v = (now + next() % 4_000) | 1;
            while kept(&reference, v, base) {
                assert!(t.taken(v, base, all.len() - base as usize), "value {v} is kept at id {id}");
                v += 2;
            }
            assert!(!t.taken(v, base, all.len() - base as usize), "value {v} is free at id {id}");
            let len = all.len() - base as usize;
            let r = t.insert(v, id, now, base, len);
            all.push(v);
            reference.insert(v, id);
            if let Inserted::Rebuild { buckets } = r {
                t = Soon::rebuilt(buckets, now, base, all[base as usize..].iter().copied());
                grew += 1;
            }
            if (id / 10_000) % 2 == 0 || id < base + 2_000 {
                base = base.max(id.saturating_sub(2_000));
            }
            if id == 30_000 {
                // As a restored checkpoint does: every kept value, whatever the clock.
                t = Soon::rebuilt(t.buckets(), 0, base, all[base as usize..].iter().copied());
            }
            let len = all.len() - base as usize;
            for q in [v, v + 2, (now + next() % 4_000) | 1] {
                assert_eq!(t.taken(q, base, len), kept(&reference, q, base), "value {q} at id {id}, base {base}");
            }
        }
        assert!(grew > 0, "the test grew the table");
    }
}
