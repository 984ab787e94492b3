//! [`Done`]: the completion of earlier work, as the FTL passes it on.

/// The completion of earlier work ("after this read"), or a plain time the caller was given
/// (a request's issue time), in the only form the FTL, host, device and techniques handle
/// it: they pass it back to [`Scheduler::submit`](super::Scheduler::submit) as what a
/// transaction waits for, join two with [`Done::later`], and read it as a time only through
/// [`Done::as_time`].
///
/// A scheduler's [`submit`] returns one; the only other way in from a number is
/// [`Done::at`], for work that waits for a plain time rather than for other work (a request's
/// issue time in the run loop, an idle window's start found by idle detection). No caller
/// can add a duration to one: every duration is the timing layer's. Under the reservation scheduler
/// it holds the time the work completes; under the queued one an estimate of that time
/// (`queued_drive/tokens.rs`) and the id of the transaction it *names*, which the scheduler
/// reads back when the `Done` is passed on as a dependency. Arithmetic on it would be wrong,
/// not just untidy: a time with something added names nothing.
///
/// What the layers above may do with one:
///
/// ```
/// use flashlife::timing::Done;
/// let (read, transfer) = (Done::at(1_000), Done::at(2_001));
/// let both = Done::later(read, transfer); // what work after both waits for
/// assert_eq!(both, transfer);
/// assert_eq!(both.as_time(), 2_001); // read as a time, for a clock of one's own
/// ```
///
/// What they may not:
///
/// ```compile_fail
/// use flashlife::timing::Done;
/// let after_read = Done::at(1_000);
/// // No arithmetic outside the timing layer: durations come from a scheduler.
/// let _program = after_read + 50_000;
/// ```
///
/// ```compile_fail
/// use flashlife::timing::Done;
/// // Nor through the number inside: it is the timing layer's.
/// let _program = Done::at(1_000).0 + 50_000;
/// ```
///
/// [`submit`]: super::Scheduler::submit
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Done(
    /// The time (reservation) or estimate (queued) of the completion, in nanoseconds.
    pub(in crate::timing) u64,
    /// The transaction it names ([`Done::NO_ID`]: none, a plain time).
    pub(in crate::timing) u64,
);

impl Done {
    /// The start of simulated time (nothing to wait for).
    pub const START: Done = Done(0, Done::NO_ID);

    /// The id of a `Done` that names no transaction.
    pub(in crate::timing) const NO_ID: u64 = u64::MAX;

    /// Transaction `id`'s completion, estimated at `t_ns` (a scheduler's answer).
    #[inline]
    pub(in crate::timing) const fn named(t_ns: u64, id: u64) -> Done {
        Done(t_ns, id)
    }

    /// Work that may start at the plain time `t_ns` (nanoseconds), waiting for nothing else:
    /// a request's issue time (the run loop), the start of an idle window (idle detection).
    /// Not for a completion read with [`Done::as_time`] and changed: that would name no
    /// transaction.
    #[inline]
    pub const fn at(t_ns: u64) -> Done {
        Done(t_ns, Done::NO_ID)
    }

    /// Whichever of `a` and `b` completes later: work after both waits for it. The one with
    /// the later time (the queued scheduler's times are estimates, so it keeps the one
    /// estimated to finish later). At equal times, one naming a transaction before a plain
    /// time, and of two transactions the one submitted later (larger id): the one more likely
    /// to have queued behind the other.
    #[inline]
    pub fn later(a: Done, b: Done) -> Done {
        // `NO_ID + 1` wraps to 0: a plain time ranks below every transaction.
        if (a.0, a.1.wrapping_add(1)) >= (b.0, b.1.wrapping_add(1)) {
            a
        } else {
            b
        }
    }

    /// [`Done::later`] as a method: `self` or `other`, whichever completes later.
    #[inline]
    pub fn max(self, other: Done) -> Done {
        Done::later(self, other)
    }

    /// The value read as a time in nanoseconds, for the FTL's own clocks (a block's open
    /// time, a page's age, an idle window's start, a request's finish). Exact under the
    /// reservation scheduler; under the queued one an estimate of when the work it names
    /// completes. Never turn the number back into a `Done` outside the timing layer.
    #[inline]
    pub const fn as_time(self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_is_the_later_time_and_keeps_what_it_names() {
        let (plain, named) = (Done::at(1_000), Done::named(1_001, 4));
        assert_eq!(Done::later(plain, named), named);
        assert_eq!(Done::later(named, plain), named, "order does not matter");
        assert_eq!(Done::later(named, named), named, "equal: the same transaction");
        let (a, b) = (Done::named(7, 1), Done::named(5, 2));
        assert_eq!(Done::later(a, b), a, "the later estimate, with its transaction");
        assert_eq!(Done::later(b, a).as_time(), 7);
        assert_eq!(plain.max(named), Done::later(plain, named));
        assert_eq!(Done::START.max(Done::at(3)), Done::at(3));
        // A plain time equal to an estimate: the transaction is what work after both waits for.
        assert_eq!(Done::later(Done::at(1_001), named), named);
        assert_eq!(Done::later(named, Done::at(1_001)), named);
        // Two transactions estimated at one instant: the later submitted.
        let (first, second) = (Done::named(1_001, 4), Done::named(1_001, 9));
        assert_eq!(Done::later(first, second), second);
        assert_eq!(Done::later(second, first), second);
    }

    #[test]
    fn serialises_time_and_transaction() {
        let d = Done::named(42, 7);
        let v = serde_json::to_string(&d).unwrap();
        assert_eq!(v, "[42,7]");
        assert_eq!(serde_json::from_str::<Done>(&v).unwrap(), d);
    }
}
