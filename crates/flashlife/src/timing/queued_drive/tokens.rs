//! Dependencies between transactions, recovered from the values the FTL passes around.
//!
//! The FTL holds completion values as `Done`, joins them with `Done::later` (their `max`) and
//! threads them into later submissions as "after this". The queued scheduler cannot say when a transaction completes at submission,
//! so it hands back a *value* instead: an estimate of the completion (its input's estimate or
//! the clock, plus its own uncontended cost), made odd and, if another kept transaction
//! already has it, moved on by 2 ns until it is unique. A value therefore names exactly one
//! transaction and stays meaningful as a time for the FTL's own use (a block's open time, a
//! page's age). A later submission's `after` is looked up here: a value handed out names a
//! dependency on that transaction; anything else (an arrival time, an idle window's start, one
//! too old to be kept) is a plain time.
//!
//! Values are not forced to rise with submission order: one long chain of dependent work
//! (a failed block's pages moved one after another) would otherwise drag every later value,
//! related or not, as far ahead, and an old value read back as a time would then hold its
//! dependant back by the whole chain.
//!
//! The ring keeps every transaction still pending and the last `KEEP` finished ones; a value
//! older than the ring belongs to work finished long ago, whose estimate is no later than its
//! real completion (each estimate is its inputs' plus an uncontended cost), so reading it as a
//! time is safe. An even time never collides with a value; an odd one that equals a kept
//! value is taken for that transaction (a rare, at worst one-operation, error).

use std::collections::VecDeque;

use super::soon::{Inserted, Soon};
use super::values::ValueTable;
use super::NONE;

/// A finished transaction's `finish` while it is still pending.
pub(super) const PENDING: u64 = u64::MAX;

/// Finished transactions kept for lookups after they complete.
const KEEP: usize = 1 << 14;

/// How far ahead of the ring's front `trim` asks for records.
const TRIM_AHEAD: usize = 8;

/// One submitted transaction, as the dependency tracking sees it.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(super) struct Tok {
    /// The value handed back for it.
    pub value: u64,
    /// When it finished (`PENDING` until then).
    pub finish: u64,
    /// First transaction parked until this one finishes (`NONE`: none).
    pub parked: u32,
    /// The host request it belongs to (`NONE`: background or untagged work).
    pub request: u32,
    pub die: u32,
    /// Its uncontended cost, while it counts in its die's host backlog (0 otherwise).
    pub host_backlog_ns: u64,
    /// Host transactions parked on it (each holds its die urgent until it finishes).
    pub urgent_holds: u32,
    /// Its die's hard-threshold epoch when it was submitted.
    pub epoch: u32,
    /// A background erase, counted in its die's owed erases until it runs.
    pub owes_erase: bool,
    /// Background work on a die, counted in its stock (`stock.rs`) until it finishes.
    pub stock: bool,
    /// Requests waiting for it that it is not part of (`Scheduler::wait_for`): first node.
    pub waiters: u32,
    /// Background work (GC, levelling, reclaim, bad-block moves), not the host's: host work
    /// waiting for it puts its die at the hard threshold. (Detached host work, a write-back
    /// device's buffered programs, belongs to no request but is not background.)
    pub background: bool,
}

impl Tok {
    /// A transaction just submitted with `value` on `die` in its hard-threshold `epoch`:
    /// pending, nothing parked on it or waiting for it, nobody's work, off the host backlog,
    /// not background, nothing owed; the submitter sets what differs.
    pub fn pending(value: u64, die: u32, epoch: u32) -> Tok {
        Tok {
            value,
            finish: PENDING,
            parked: NONE,
            request: NONE,
            die,
            host_backlog_ns: 0,
            urgent_holds: 0,
            epoch,
            waiters: NONE,
            background: false,
            owes_erase: false,
            stock: false,
        }
    }
}

/// Transactions by id, oldest first (ids are consecutive), and by value.
pub(super) struct Tokens {
    ring: VecDeque<Tok>,
    /// Id of `ring[0]`.
    base: u64,
    /// Where to look for a value in `ring` (`values.rs`): built from the ring, so checkpoints
    /// store the ring's own values instead.
    by_value: ValueTable,
    /// The kept values at or after the clock, for the uniqueness check (`soon.rs`): built
    /// from the ring too.
    soon: Soon,
    /// Recent estimates and the last value handed out for each: a burst of transactions
    /// with one estimate (a victim's page reads, decided at one instant) starts probing
    /// where the previous one ended instead of walking the whole burst again.
    recent: Vec<(u64, u64)>,
    /// (value, id) of recently handed-out transactions, direct-mapped by value: most
    /// look-ups are of a value handed out moments before (a read's, for its program), and
    /// this answers them without touching the large map.
    cache: Vec<(u64, u64)>,
}

/// The checkpoint's form, unchanged since the value map was a `HashMap`: the ring, its
/// base, and a value -> id map (now written from the ring: the kept transactions only).
#[derive(serde::Serialize)]
struct Stored<'a> {
    ring: &'a VecDeque<Tok>,
    base: u64,
    by_value: KeptValues<'a>,
}

struct KeptValues<'a>(&'a VecDeque<Tok>, u64);

impl serde::Serialize for KeptValues<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Id order: a checkpoint's bytes depend on the ring alone.
        s.collect_map(self.0.iter().enumerate().map(|(i, t)| (t.value, self.1 + i as u64)))
    }
}

#[derive(serde::Deserialize)]
struct Restored {
    ring: VecDeque<Tok>,
    base: u64,
    /// Read and dropped: the ring says the same of the kept transactions (older checkpoints
    /// also list forgotten ones, which count as absent anyway).
    #[allow(dead_code)]
    by_value: std::collections::HashMap<u64, u64>,
}

impl serde::Serialize for Tokens {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Stored { ring: &self.ring, base: self.base, by_value: KeptValues(&self.ring, self.base) }.serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Tokens {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Restored { ring, base, .. } = Restored::deserialize(d)?;
        let by_value = ValueTable::of_ring(base, ring.iter().map(|t| t.value));
        // Every kept value, whatever the clock: a superset of those at or after it.
        let soon = Soon::rebuilt(0, 0, base, ring.iter().map(|t| t.value));
        Ok(Tokens { ring, base, by_value, soon, recent: no_recent(), cache: no_cache() })
    }
}

const CACHE: usize = 1024;

fn no_cache() -> Vec<(u64, u64)> {
    vec![(u64::MAX, 0); CACHE]
}

#[inline]
fn cache_slot(value: u64) -> usize {
    (value.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54) as usize % CACHE
}

const RECENT: usize = 64;

fn no_recent() -> Vec<(u64, u64)> {
    vec![(u64::MAX, 0); RECENT]
}

impl Tokens {
    pub fn new() -> Self {
        Tokens {
            ring: VecDeque::new(),
            base: 0,
            by_value: ValueTable::new(0),
            soon: Soon::new(),
            recent: no_recent(),
            cache: no_cache(),
        }
    }

    /// A value for a transaction estimated to finish at `estimate` (at or after the clock,
    /// `now`): odd, and no kept transaction's.
    #[inline]
    pub fn unique_value(&mut self, estimate: u64, now: u64) -> u64 {
        debug_assert!(estimate >= now);
        let slot = (estimate.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize % RECENT;
        let (seen, last) = self.recent[slot];
        let mut v = if seen == estimate { last + 2 } else { estimate | 1 };
        if self.taken(v) {
            // Taken (a dense run of values from other estimates): jump a pseudo-random even
            // step of up to 2 us from the id, so that runs do not have to be walked.
            let id = self.base + self.ring.len() as u64;
            v += 2 * (1 + (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54));
            while self.taken(v) {
                v += 2;
            }
        }
        self.recent[slot] = (estimate, v);
        v
    }

    /// Does a kept transaction have value `v` (at or after the clock)?
    #[inline]
    fn taken(&self, v: u64) -> bool {
        self.soon.taken(v, self.base, self.ring.len())
    }

    /// The kept transaction with value `v`, from the table.
    #[inline]
    fn lookup(&self, v: u64) -> Option<u64> {
        let ring = &self.ring;
        self.by_value.get(v, self.base, ring.len(), |i| ring[i].value)
    }

    /// Keep `t` (its value from `unique_value` at clock `now`); returns its id.
    pub fn push(&mut self, t: Tok, now: u64) -> u64 {
        let id = self.base + self.ring.len() as u64;
        let grow = self.by_value.push(t.value, id, self.base, self.ring.len());
        let soon = self.soon.insert(t.value, id, now, self.base, self.ring.len());
        self.cache[cache_slot(t.value)] = (t.value, id);
        self.ring.push_back(t);
        if grow {
            self.by_value = self.by_value.grown(self.base, self.ring.iter().map(|t| t.value));
        }
        if let Inserted::Rebuild { buckets } = soon {
            self.soon = Soon::rebuilt(buckets, now, self.base, self.ring.iter().map(|t| t.value));
        }
        id
    }

    /// The transaction `value` was handed out for, if it is still kept.
    #[inline]
    pub fn find(&self, value: u64) -> Option<u64> {
        if value & 1 == 0 {
            return None;
        }
        let (v, id) = self.cache[cache_slot(value)];
        if v == value && id >= self.base {
            return Some(id);
        }
        self.lookup(value)
    }

    /// Transaction `id`, if still kept.
    #[inline]
    pub fn find_id(&self, id: u64) -> Option<&Tok> {
        id.checked_sub(self.base).and_then(|i| self.ring.get(i as usize))
    }

    #[inline]
    pub fn get(&self, id: u64) -> &Tok {
        &self.ring[(id - self.base) as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: u64) -> &mut Tok {
        &mut self.ring[(id - self.base) as usize]
    }

    /// The id of the engine's 32-bit token (ids in the ring span less than 2^32).
    #[inline]
    pub fn id_of(&self, token: u32) -> u64 {
        self.base + token.wrapping_sub(self.base as u32) as u64
    }

    /// Forget the oldest finished transactions beyond the ones kept.
    pub fn trim(&mut self) {
        // The front is thousands of records back, long out of cache: ask for the records a
        // few trims ahead (about one is forgotten per transaction), so the check below finds
        // its record in cache.
        if let Some(ahead) = self.ring.get(TRIM_AHEAD) {
            crate::cache_hint::prefetch(std::slice::from_ref(ahead), 0);
        }
        while self.ring.len() > KEEP {
            let f = self.ring.front().expect("non-empty");
            if f.finish == PENDING || f.parked != NONE {
                break;
            }
            self.ring.pop_front();
            self.base += 1;
        }
    }

    /// Transactions kept (pending ones and recent finished ones).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.ring.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(value: u64) -> Tok {
        Tok { background: true, ..Tok::pending(value, 0, 0) }
    }

    #[test]
    fn values_name_their_transaction_and_nothing_else() {
        let mut t = Tokens::new();
        let v = t.unique_value(10, 0);
        let a = t.push(tok(v), 0);
        assert_eq!(t.get(a).value, 11, "values are odd");
        let v = t.unique_value(11, 0);
        let b = t.push(tok(v), 0);
        let bv = t.get(b).value;
        assert!(bv % 2 == 1 && bv > 11 && bv <= 11 + 2050, "a value already kept moves on, within 2 us: {bv}");
        assert_eq!(t.find(11), Some(a));
        assert_eq!(t.find(bv), Some(b));
        assert_eq!(t.find(bv + 2), None, "a value with something added is a time, not a dependency");
        assert_eq!(t.find(12), None, "an even time is never a value");
        assert_eq!(t.id_of(a as u32), a);
        // A later transaction may be estimated to finish earlier: values need not rise.
        let v = t.unique_value(4, 0);
        let c = t.push(tok(v), 0);
        assert_eq!(t.find(5), Some(c));
    }

    #[test]
    fn finished_work_is_forgotten_oldest_first_but_pending_work_never() {
        let mut t = Tokens::new();
        for v in 1..=(KEEP as u64 + 10) {
            let u = t.unique_value(2 * v, 0);
            t.push(tok(u), 0);
        }
        t.trim();
        assert_eq!(t.len(), KEEP + 10, "pending transactions are kept");
        for id in 0..20 {
            t.get_mut(id).finish = 5;
        }
        t.trim();
        assert_eq!(t.len(), KEEP);
        // Ids 0..10 (values 3..=21) were the oldest finished ones beyond KEEP.
        assert_eq!(t.find(2 * 10 + 1), None, "forgotten");
        let id = t.find(2 * 11 + 1).unwrap();
        assert_eq!((id, t.get(id).value), (10, 23));
        assert_eq!(t.id_of(id as u32), id);
        // A forgotten value (still in the map until a sweep) is free again, and names its
        // new transaction once handed out.
        assert_eq!(t.unique_value(20, 0), 21, "a forgotten value is not taken");
        let again = t.push(tok(21), 0);
        assert_eq!(t.find(21), Some(again));
    }
}
