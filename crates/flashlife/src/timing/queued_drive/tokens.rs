//! The transactions the queued scheduler keeps, and the values it hands out for them.
//!
//! The FTL holds completions as `Done`, joins them with `Done::later` and threads them into
//! later submissions as "after this". The queued scheduler cannot say when a transaction
//! completes at submission, so its `Done` carries the transaction's id and an estimate of its
//! completion (its input's estimate or the clock, plus its own uncontended cost), made odd
//! and, if another kept transaction already has it, moved on by 2 ns until it is unique. The
//! estimate stays meaningful as a time for the FTL's own use (a block's open time, a page's
//! age) and orders two completions in `Done::later`: unique, so equal estimates are one
//! transaction. A later submission's `after` names a dependency on its id while that is kept
//! and its estimate matches; anything else (an arrival time, an idle window's start, work
//! forgotten) is a plain time.
//!
//! Values are not forced to rise with submission order: one long chain of dependent work
//! (a failed block's pages moved one after another) would otherwise drag every later value,
//! related or not, as far ahead, and an old value read back as a time would then hold its
//! dependant back by the whole chain.
//!
//! The ring keeps every transaction still pending and the last `KEEP` finished ones; an id
//! older than the ring belongs to work finished long ago, whose estimate is no later than its
//! real completion (each estimate is its inputs' plus an uncontended cost), so reading it as a
//! time is safe.

use std::collections::VecDeque;

use super::soon::{Inserted, Soon};
use super::NONE;
use crate::timing::Done;

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

/// Transactions by id, oldest first (ids are consecutive).
pub(super) struct Tokens {
    ring: VecDeque<Tok>,
    /// Id of `ring[0]`.
    base: u64,
    /// The kept values at or after the clock, for the uniqueness check (`soon.rs`): built
    /// from the ring, so checkpoints do not store it.
    soon: Soon,
    /// Recent estimates and the last value handed out for each: a burst of transactions
    /// with one estimate (a victim's page reads, decided at one instant) starts probing
    /// where the previous one ended instead of walking the whole burst again.
    recent: Vec<(u64, u64)>,
}

/// The checkpoint's form: the ring and its base (the rest is built from them).
#[derive(serde::Serialize)]
struct Stored<'a> {
    ring: &'a VecDeque<Tok>,
    base: u64,
}

#[derive(serde::Deserialize)]
struct Restored {
    ring: VecDeque<Tok>,
    base: u64,
}

impl serde::Serialize for Tokens {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Stored { ring: &self.ring, base: self.base }.serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Tokens {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Restored { ring, base } = Restored::deserialize(d)?;
        // Every kept value, whatever the clock: a superset of those at or after it.
        let soon = Soon::rebuilt(0, 0, base, ring.iter().map(|t| t.value));
        Ok(Tokens { ring, base, soon, recent: no_recent() })
    }
}

const RECENT: usize = 64;

fn no_recent() -> Vec<(u64, u64)> {
    vec![(u64::MAX, 0); RECENT]
}

impl Tokens {
    pub fn new() -> Self {
        Tokens { ring: VecDeque::new(), base: 0, soon: Soon::new(), recent: no_recent() }
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

    /// Keep `t` (its value from `unique_value` at clock `now`); returns its id.
    pub fn push(&mut self, t: Tok, now: u64) -> u64 {
        let id = self.base + self.ring.len() as u64;
        let soon = self.soon.insert(t.value, id, now, self.base, self.ring.len());
        self.ring.push_back(t);
        if let Inserted::Rebuild { buckets } = soon {
            self.soon = Soon::rebuilt(buckets, now, self.base, self.ring.iter().map(|t| t.value));
        }
        id
    }

    /// The transaction `d` names, if it names one that is still kept (its id, `d.1`).
    /// The estimate must match too: a `Done` from before a transaction was forgotten is
    /// never taken for another one.
    #[inline]
    pub fn named(&self, d: Done) -> Option<&Tok> {
        self.find_id(d.1).filter(|t| t.value == d.0)
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

    /// Does `Done` (`v`, `id`) name a kept transaction?
    fn names(t: &Tokens, v: u64, id: u64) -> bool {
        t.named(Done::named(v, id)).is_some()
    }

    #[test]
    fn values_are_odd_unique_and_name_their_transaction_and_nothing_else() {
        let mut t = Tokens::new();
        let v = t.unique_value(10, 0);
        let a = t.push(tok(v), 0);
        assert_eq!(t.get(a).value, 11, "values are odd");
        let v = t.unique_value(11, 0);
        let b = t.push(tok(v), 0);
        let bv = t.get(b).value;
        assert!(bv % 2 == 1 && bv > 11 && bv <= 11 + 2050, "a value already kept moves on, within 2 us: {bv}");
        assert!(names(&t, 11, a) && names(&t, bv, b));
        assert!(!names(&t, bv + 2, b), "a value with something added is a time, not a dependency");
        assert!(!names(&t, 11, b), "an id with another's value names nothing");
        assert!(t.named(Done::at(11)).is_none(), "a plain time never names a transaction");
        assert_eq!(t.id_of(a as u32), a);
        // A later transaction may be estimated to finish earlier: values need not rise.
        let v = t.unique_value(4, 0);
        let c = t.push(tok(v), 0);
        assert!(names(&t, 5, c));
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
        assert!(!names(&t, 21, 9), "forgotten");
        assert!(names(&t, 23, 10));
        assert_eq!(t.id_of(10), 10);
        // A forgotten value is free again, and names only its new transaction once handed out.
        assert_eq!(t.unique_value(20, 0), 21, "a forgotten value is not taken");
        let again = t.push(tok(21), 0);
        assert!(names(&t, 21, again) && !names(&t, 21, 9));
    }
}
