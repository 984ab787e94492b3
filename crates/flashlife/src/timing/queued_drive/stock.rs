//! Which dies want background work decided for them (the scheduler's half of stepped
//! cleaning; the run loop asks the FTL to step, see [`crate::timing::EventDriven`]).
//!
//! A controller does not decide a whole clean-up when a pool falls below its low watermark:
//! it keeps a little GC work queued on each die and decides the next page move when the die
//! is about to run short. Here the FTL says which dies owe cleaning ([`Stock::owe`]); each
//! die's *stock* is the background transactions submitted on it and not finished; a die that
//! owes cleaning and whose stock has fallen below [`STOCK`] is listed, and the run loop takes
//! the list and has the FTL decide one more step (a page's moves, or an erase) for each.
//!
//! The stock is kept a few transactions deep rather than empty, so that a die's policy always
//! has background work to choose when it is background's turn (`timing.gc_ratio`, or a die
//! with no host work): refilled only after a completion, an empty queue would leave the die to
//! host work at the instant it picks. A few transactions ahead is also all the staleness a
//! decided move can have: a host write that invalidates a victim's page before its move is
//! decided saves the move.

use std::collections::VecDeque;

/// Background transactions (submitted, not finished) a die keeps before it stops asking:
/// two page moves (a read and a program each) in flight, so one is queued while the other
/// runs.
pub(super) const STOCK: u32 = 4;

/// Per die: background stock and whether it owes cleaning; the dies to ask for, in turn.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub(super) struct Stock {
    stock: Vec<u32>,
    owed: Vec<bool>,
    listed: Vec<bool>,
    wanting: VecDeque<u32>,
}

impl Stock {
    pub fn new(dies: u32) -> Self {
        let n = dies as usize;
        Stock { stock: vec![0; n], owed: vec![false; n], listed: vec![false; n], wanting: VecDeque::new() }
    }

    /// Does `die` want a step decided now?
    #[inline]
    fn wants(&self, die: u32) -> bool {
        self.owed[die as usize] && self.stock[die as usize] < STOCK
    }

    #[inline]
    fn list_if_wanting(&mut self, die: u32) {
        if self.wants(die) && !self.listed[die as usize] {
            self.listed[die as usize] = true;
            self.wanting.push_back(die);
        }
    }

    /// Background transactions in flight on `die`.
    #[inline]
    pub fn of(&self, die: u32) -> u32 {
        self.stock[die as usize]
    }

    /// The FTL has cleaning to step on `die`.
    pub fn owe(&mut self, die: u32) {
        self.owed[die as usize] = true;
        self.list_if_wanting(die);
    }

    /// A background transaction was submitted on `die`.
    #[inline]
    pub fn submitted(&mut self, die: u32) {
        self.stock[die as usize] += 1;
    }

    /// A background transaction of `die` finished.
    #[inline]
    pub fn finished(&mut self, die: u32) {
        self.stock[die as usize] -= 1;
        self.list_if_wanting(die);
    }

    /// Is any die listed (it may no longer want a step: `next_wanting` tells)?
    #[inline]
    pub fn any_listed(&self) -> bool {
        !self.wanting.is_empty()
    }

    /// The next die that wants a step, if any (taken off the list).
    pub fn next_wanting(&mut self) -> Option<u32> {
        while let Some(die) = self.wanting.pop_front() {
            self.listed[die as usize] = false;
            if self.wants(die) {
                return Some(die);
            }
        }
        None
    }

    /// The FTL stepped `die` (`more`: it may have more; otherwise it owes nothing there until
    /// it says so again). A die still short goes to the back of the list, so dies take turns.
    pub fn stepped(&mut self, die: u32, more: bool) {
        if more {
            self.list_if_wanting(die);
        } else {
            self.owed[die as usize] = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invariant: a die is offered while it owes cleaning and is short of stock, in turn with
    /// others, and not once it is stocked, owes nothing, or has been offered and not refilled.
    #[test]
    fn dies_are_offered_while_they_owe_and_run_short() {
        let mut s = Stock::new(3);
        assert_eq!(s.next_wanting(), None, "nothing owed");
        s.owe(2);
        s.owe(0);
        s.owe(2); // listed once
        assert_eq!(s.next_wanting(), Some(2));
        for _ in 0..STOCK {
            s.submitted(2);
        }
        s.stepped(2, true); // stocked: not listed again
        assert_eq!(s.next_wanting(), Some(0));
        s.stepped(0, false); // owes nothing more
        assert_eq!(s.next_wanting(), None);
        s.finished(2); // short again
        assert_eq!(s.next_wanting(), Some(2));
        s.submitted(0);
        s.finished(0);
        assert_eq!(s.next_wanting(), None, "die 0 owes nothing");
    }
}
