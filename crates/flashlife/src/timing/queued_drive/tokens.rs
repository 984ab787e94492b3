//! Dependencies between transactions, recovered from the values the FTL passes around.
//!
//! The FTL joins completion values with `max` and threads them into later submissions as
//! "after this". The queued scheduler cannot say when a transaction completes at submission,
//! so it hands back a *value* instead: an estimate of the completion (its input's estimate or
//! the clock, plus its own uncontended cost), nudged to be strictly larger than every value
//! handed out before. Values therefore rise with submission order, name exactly one
//! transaction each, and stay meaningful as times for the FTL's own use (a block's open time,
//! a page's age). A later submission's `after` is looked up here: a value handed out names a
//! dependency on that transaction; anything else (an arrival time, a value with an overhead
//! added, one too old to be kept) is a plain time.
//!
//! The ring keeps every transaction still pending and the last `KEEP` finished ones; a value
//! older than the ring belongs to work finished long ago, whose estimate is no later than its
//! real completion, so reading it as a time is safe.

use std::collections::VecDeque;

use super::NONE;

/// A finished transaction's `finish` while it is still pending.
pub(super) const PENDING: u64 = u64::MAX;

/// Finished transactions kept for lookups after they complete.
const KEEP: usize = 1 << 14;

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
}

/// Transactions by id, oldest first; ids are consecutive, values strictly increasing.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Tokens {
    ring: VecDeque<Tok>,
    /// Id of `ring[0]`.
    base: u64,
}

impl Tokens {
    pub fn new() -> Self {
        Tokens { ring: VecDeque::new(), base: 0 }
    }

    /// The value of the last transaction handed out (0 before the first).
    pub fn last_value(&self) -> u64 {
        self.ring.back().map_or(0, |t| t.value)
    }

    pub fn push(&mut self, t: Tok) -> u64 {
        debug_assert!(t.value > self.last_value() || self.ring.is_empty());
        self.ring.push_back(t);
        self.base + self.ring.len() as u64 - 1
    }

    /// The transaction `value` was handed out for, if it is still kept.
    #[inline]
    pub fn find(&self, value: u64) -> Option<u64> {
        let (front, back) = (self.ring.front()?, self.ring.back()?);
        if value < front.value || value > back.value {
            return None;
        }
        self.ring.binary_search_by_key(&value, |t| t.value).ok().map(|i| self.base + i as u64)
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
        Tok {
            value,
            finish: PENDING,
            parked: NONE,
            request: NONE,
            die: 0,
            host_backlog_ns: 0,
            urgent_holds: 0,
            epoch: 0,
            owes_erase: false,
        }
    }

    #[test]
    fn values_name_their_transaction_and_nothing_else() {
        let mut t = Tokens::new();
        let a = t.push(tok(10));
        let b = t.push(tok(25));
        assert_eq!(t.find(10), Some(a));
        assert_eq!(t.find(25), Some(b));
        assert_eq!(t.find(11), None, "a value with something added is a time, not a dependency");
        assert_eq!(t.find(9), None);
        assert_eq!(t.id_of(a as u32), a);
    }

    #[test]
    fn finished_work_is_forgotten_oldest_first_but_pending_work_never() {
        let mut t = Tokens::new();
        for v in 1..=(KEEP as u64 + 10) {
            t.push(tok(v));
        }
        t.trim();
        assert_eq!(t.len(), KEEP + 10, "pending transactions are kept");
        for id in 0..20 {
            t.get_mut(id).finish = 5;
        }
        t.trim();
        assert_eq!(t.len(), KEEP);
        assert_eq!(t.find(10), None);
        let id = t.find(11).unwrap();
        assert_eq!(t.get(id).value, 11);
        assert_eq!(t.id_of(id as u32), id);
    }
}
