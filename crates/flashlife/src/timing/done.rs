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
/// the value is the time the work completes; under the queued one it *names* a transaction
/// (an odd estimate of its completion, `queued_drive/tokens.rs`), which is why arithmetic on
/// it would be wrong, not just untidy: a value with something added names nothing.
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
#[serde(transparent)] // checkpoints keep the bytes of the `u64` it replaced
pub struct Done(pub(in crate::timing) u64);

impl Done {
    /// The start of simulated time (nothing to wait for).
    pub const START: Done = Done(0);

    /// Work that may start at the plain time `t_ns` (nanoseconds), waiting for nothing else:
    /// a request's issue time (the run loop), the start of an idle window (idle detection).
    /// Not for a completion read with [`Done::as_time`] and changed: that would name no
    /// transaction.
    #[inline]
    pub const fn at(t_ns: u64) -> Done {
        Done(t_ns)
    }

    /// Whichever of `a` and `b` completes later: work after both waits for it. Exactly `max`
    /// of the values (the queued scheduler's values are estimates, so it keeps the one
    /// estimated to finish later; equal values name the same transaction).
    #[inline]
    pub fn later(a: Done, b: Done) -> Done {
        Done(a.0.max(b.0))
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
    fn later_is_max_of_the_values() {
        let (even, odd) = (Done(1_000), Done(1_001));
        assert_eq!(Done::later(even, odd), odd);
        assert_eq!(Done::later(odd, even), odd, "order does not matter");
        assert_eq!(Done::later(odd, odd), odd, "equal values: the same transaction");
        assert_eq!(Done::later(Done(7), Done(5)), Done(7), "odd values: the later estimate");
        assert_eq!(Done::later(Done(5), Done(7)).as_time(), 7);
        assert_eq!(even.max(odd), Done::later(even, odd));
        assert_eq!(Done::START.max(Done::at(3)), Done(3));
    }

    #[test]
    fn serialises_as_the_bare_number() {
        let v = serde_json::to_string(&Done(42)).unwrap();
        assert_eq!(v, "42");
        assert_eq!(serde_json::from_str::<Done>("42").unwrap(), Done(42));
    }
}
