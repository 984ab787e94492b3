//! The transactions the queued scheduler keeps, by id.
//!
//! The FTL holds completions as `Done`, joins them with `Done::later` and threads them into
//! later submissions as "after this". The queued scheduler cannot say when a transaction
//! completes at submission, so its `Done` carries the transaction's id and an *estimate* of
//! its completion: its input's estimate or the clock, plus its own uncontended cost. The
//! estimate is a time for the FTL's own use (a block's open time, a page's age) and orders two
//! completions in `Done::later`; the id is what a later submission's `after` names: a
//! dependency while that transaction is kept and its estimate matches, a plain time
//! otherwise (an arrival time, an idle window's start, work forgotten).
//!
//! Estimates are not forced to rise with submission order: one long chain of dependent work
//! (a failed block's pages moved one after another) would otherwise drag every later
//! estimate, related or not, as far ahead, and an old one read back as a time would then hold
//! its dependant back by the whole chain. Nor need they be unique: two transactions estimated
//! to finish at one instant are told apart by their ids. (Until 2026-11-30 a `Done` was the
//! bare estimate, made odd and unique so that it could be looked up.)
//!
//! The ring keeps every transaction still pending and the last `KEEP` finished ones; an id
//! older than the ring belongs to work finished long ago, whose estimate is no later than its
//! real completion (each estimate is its inputs' plus an uncontended cost), so reading it as a
//! time is safe.

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

/// Transactions by id, oldest first (ids are consecutive): a ring of a power-of-two size
/// indexed by the id's low bits, grown (doubled) when full. Checkpoints store the kept
/// transactions in order and the oldest one's id.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(into = "TokensData", from = "TokensData")]
pub(super) struct Tokens {
    buf: Vec<Tok>,
    /// `buf.len() - 1` (0 while empty).
    mask: u64,
    /// Id of the oldest kept transaction.
    base: u64,
    /// Id the next transaction gets.
    next: u64,
}

/// The stored form of [`Tokens`].
#[derive(serde::Serialize, serde::Deserialize)]
struct TokensData {
    ring: Vec<Tok>,
    /// Id of `ring[0]`.
    base: u64,
}

impl From<Tokens> for TokensData {
    fn from(t: Tokens) -> Self {
        TokensData { ring: (t.base..t.next).map(|id| *t.get(id)).collect(), base: t.base }
    }
}

impl From<TokensData> for Tokens {
    fn from(d: TokensData) -> Self {
        let mut t = Tokens { buf: Vec::new(), mask: 0, base: d.base, next: d.base };
        for tok in d.ring {
            t.push(tok);
        }
        t
    }
}

impl Tokens {
    pub fn new() -> Self {
        Tokens { buf: Vec::new(), mask: 0, base: 0, next: 0 }
    }

    /// Keep `t`; returns its id.
    #[inline]
    pub fn push(&mut self, t: Tok) -> u64 {
        if self.next - self.base == self.buf.len() as u64 {
            self.grow();
        }
        let id = self.next;
        self.buf[(id & self.mask) as usize] = t;
        self.next += 1;
        id
    }

    /// Double the ring (at least 64), each kept transaction at its id's place in the new one.
    #[cold]
    fn grow(&mut self) {
        let size = (2 * self.buf.len()).max(64);
        let filler = Tok::pending(0, 0, 0);
        let mut buf = vec![filler; size];
        let mask = size as u64 - 1;
        for id in self.base..self.next {
            buf[(id & mask) as usize] = self.buf[(id & self.mask) as usize];
        }
        self.buf = buf;
        self.mask = mask;
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
        (id >= self.base && id < self.next).then(|| &self.buf[(id & self.mask) as usize])
    }

    #[inline]
    pub fn get(&self, id: u64) -> &Tok {
        debug_assert!(id >= self.base && id < self.next, "transaction {id} is not kept");
        &self.buf[(id & self.mask) as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: u64) -> &mut Tok {
        debug_assert!(id >= self.base && id < self.next, "transaction {id} is not kept");
        &mut self.buf[(id & self.mask) as usize]
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
        if self.next - self.base > TRIM_AHEAD as u64 {
            crate::cache_hint::prefetch(&self.buf, ((self.base + TRIM_AHEAD as u64) & self.mask) as usize);
        }
        while self.next - self.base > KEEP as u64 {
            let f = self.get(self.base);
            if f.finish == PENDING || f.parked != NONE {
                break;
            }
            self.base += 1;
        }
    }

    /// Transactions kept (pending ones and recent finished ones).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        (self.next - self.base) as usize
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
    fn a_done_names_its_transaction_and_nothing_else() {
        let mut t = Tokens::new();
        let a = t.push(tok(11));
        let b = t.push(tok(11));
        assert!(names(&t, 11, a) && names(&t, 11, b), "one estimate, two transactions, each named");
        assert!(!names(&t, 13, b), "an estimate with something added is a time, not a dependency");
        assert!(t.named(Done::at(11)).is_none(), "a plain time never names a transaction");
        assert_eq!(t.id_of(a as u32), a);
        // A later transaction may be estimated to finish earlier: estimates need not rise.
        let c = t.push(tok(5));
        assert!(names(&t, 5, c));
    }

    #[test]
    fn finished_work_is_forgotten_oldest_first_but_pending_work_never() {
        let mut t = Tokens::new();
        for v in 1..=(KEEP as u64 + 10) {
            t.push(tok(2 * v + 1));
        }
        t.trim();
        assert_eq!(t.len(), KEEP + 10, "pending transactions are kept");
        for id in 0..20 {
            t.get_mut(id).finish = 5;
        }
        t.trim();
        assert_eq!(t.len(), KEEP);
        // Ids 0..10 (estimates 3..=21) were the oldest finished ones beyond KEEP.
        assert!(!names(&t, 21, 9), "forgotten");
        assert!(names(&t, 23, 10));
        assert_eq!(t.id_of(10), 10);
        // A new transaction with a forgotten one's estimate is named by its own id only.
        let again = t.push(tok(21));
        assert!(names(&t, 21, again) && !names(&t, 21, 9));
    }

    /// Ids keep naming their transactions as the ring wraps, grows and goes through its
    /// stored form: against a plain list of every transaction pushed.
    #[test]
    fn the_ring_wraps_grows_and_round_trips() {
        let mut t = Tokens::new();
        let mut all = Vec::new();
        for round in 0..6u64 {
            for k in 0..(KEEP as u64 / 2 + 77 * round) {
                let v = 1000 * round + k;
                all.push((t.push(tok(v)), v));
            }
            // Finish all but the newest few, then forget beyond `KEEP`.
            let newest = all.len().saturating_sub(5);
            for &(id, _) in &all[..newest] {
                if t.find_id(id).is_some() {
                    t.get_mut(id).finish = 1;
                }
            }
            t.trim();
            let json = serde_json::to_string(&t).unwrap();
            t = serde_json::from_str(&json).unwrap();
            assert!(t.len() <= KEEP + 5);
            for &(id, v) in &all {
                let kept = id >= all[all.len() - t.len()].0;
                assert_eq!(names(&t, v, id), kept, "id {id}");
            }
        }
    }
}
