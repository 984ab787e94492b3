//! The reservation scheduler: integer-nanosecond resource timelines for the host link,
//! channel buses and dies.
//!
//! Each resource keeps the time it next becomes free. A transaction is placed on the
//! resources it needs, in order, at the earliest time all are free and its inputs are
//! ready, and its completion is known at once. This costs a few additions per page operation
//! (no event objects, no allocation), which is what makes whole-lifetime runs fast; the price
//! is that work is served strictly in booking order. Planes of a die share the die: a
//! multi-plane operation is one die operation that moves the data of every plane it covers.
//!
//! With timing off (fast-forward), every operation finishes when it is ready.

use super::{Done, Op, Scheduler, Transaction, Wait};
use crate::flash::ArrayTimes;

/// Picoseconds per byte for a bandwidth in MB/s (10^6 bytes per second). Shared with the
/// queued scheduler, whose per-operation costs must equal these.
pub(super) fn ps_per_byte(mb_per_s: f64) -> u64 {
    (1e6 / mb_per_s).round().max(1.0) as u64
}

/// Busy time accumulated per resource kind, for utilisation figures.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Utilisation {
    pub link_busy_ns: u64,
    pub channel_busy_ns: u64,
    pub die_busy_ns: u64,
}

/// Resource timelines, booked in order.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Reservation {
    timing: bool,
    link_free: u64,
    link_ps_per_byte: u64,
    command_ns: u64,
    /// A DRAM data cache access (`Op::Dram`), ns; 0 without a cache.
    #[serde(default)]
    dram_ns: u64,
    channel_free: Vec<u64>,
    channel_ps_per_byte: u64,
    die_free: Vec<u64>,
    /// Channel of each die.
    die_channel: Vec<u32>,
    busy: Utilisation,
    /// The array's operation times.
    times: ArrayTimes,
}

impl Reservation {
    /// `die_channel[d]` is the channel die `d` sits on; `times` are the array's latencies.
    pub fn new(
        times: ArrayTimes,
        timing: bool,
        link_mb_per_s: f64,
        command_overhead_us: f64,
        channel_mb_per_s: f64,
        channels: u32,
        die_channel: Vec<u32>,
    ) -> Self {
        Reservation {
            timing,
            link_free: 0,
            link_ps_per_byte: ps_per_byte(link_mb_per_s),
            command_ns: (command_overhead_us * 1000.0).round() as u64,
            dram_ns: 0,
            channel_free: vec![0; channels as usize],
            channel_ps_per_byte: ps_per_byte(channel_mb_per_s),
            die_free: vec![0; die_channel.len()],
            die_channel,
            busy: Utilisation::default(),
            times,
        }
    }

    /// Time DRAM data cache accesses (`Op::Dram`) at `ns` each.
    pub fn with_dram_ns(mut self, ns: u64) -> Self {
        self.dram_ns = ns;
        self
    }

    #[inline]
    fn channel_ns(&self, bytes: u64) -> u64 {
        bytes * self.channel_ps_per_byte / 1000
    }

    /// A command with `bytes` of data crosses the host link, ready at `ready`.
    #[inline]
    fn host_transfer(&mut self, ready: u64, bytes: u64) -> u64 {
        if !self.timing {
            return ready;
        }
        let start = ready.max(self.link_free);
        let dur = self.command_ns + bytes * self.link_ps_per_byte / 1000;
        self.link_free = start + dur;
        self.busy.link_busy_ns += dur;
        self.link_free
    }

    /// Read: the die senses for `sense_ns`, then `bytes` cross the die's channel. The die
    /// stays busy until its page register is drained.
    #[inline]
    fn read(&mut self, die: u32, ready: u64, sense_ns: u64, bytes: u64) -> u64 {
        if !self.timing {
            return ready;
        }
        let d = die as usize;
        let ch = self.die_channel[d] as usize;
        let sensed = ready.max(self.die_free[d]) + sense_ns;
        let xfer = self.channel_ns(bytes);
        let start = sensed.max(self.channel_free[ch]);
        let done = start + xfer;
        self.channel_free[ch] = done;
        self.busy.channel_busy_ns += xfer;
        self.busy.die_busy_ns += done - (sensed - sense_ns);
        self.die_free[d] = done;
        done
    }

    /// Program: `bytes` cross the channel into the die (once the die is free), then the die
    /// programs for `program_ns`. Returns when the program finishes.
    #[inline]
    fn program(&mut self, die: u32, ready: u64, bytes: u64, program_ns: u64) -> u64 {
        if !self.timing {
            return ready;
        }
        let d = die as usize;
        let ch = self.die_channel[d] as usize;
        let xfer = self.channel_ns(bytes);
        let start = ready.max(self.die_free[d]).max(self.channel_free[ch]);
        let loaded = start + xfer;
        self.channel_free[ch] = loaded;
        let done = loaded + program_ns;
        self.die_free[d] = done;
        self.busy.channel_busy_ns += xfer;
        self.busy.die_busy_ns += xfer + program_ns;
        done
    }

    /// Erase a block on `die`.
    #[inline]
    fn erase(&mut self, die: u32, ready: u64, erase_ns: u64) -> u64 {
        if !self.timing {
            return ready;
        }
        let d = die as usize;
        let done = ready.max(self.die_free[d]) + erase_ns;
        self.die_free[d] = done;
        self.busy.die_busy_ns += erase_ns;
        done
    }
}

#[typetag::serde(name = "reservation")]
impl Scheduler for Reservation {
    fn name(&self) -> &'static str {
        "reservation"
    }

    #[inline]
    fn submit(&mut self, tx: &Transaction, after: Done) -> Done {
        // Fast-forward: every operation finishes when it may start (each path below says so
        // too; returning here skips looking up the operation's time).
        if !self.timing {
            return after;
        }
        // Here a completion is the time the work completes: the value is read as is.
        let after = after.0;
        Done::at(match tx.op {
            Op::Read => {
                let sense = self.times.read_ns(tx.mode, tx.page);
                self.read(tx.die, after, sense, tx.bytes)
            }
            Op::Program => {
                let program = self.times.program_ns(tx.mode, tx.page);
                self.program(tx.die, after, tx.bytes, program)
            }
            Op::Erase => {
                let erase = self.times.erase_ns(tx.mode);
                self.erase(tx.die, after, erase)
            }
            Op::HostTransfer => self.host_transfer(after, tx.bytes),
            Op::Dram => after + self.dram_ns,
            Op::Encode => after + self.times.read_ns(tx.mode, tx.page) / 2,
            Op::Join => after,
        })
    }

    #[inline]
    fn timing(&self) -> bool {
        self.timing
    }

    fn set_timing(&mut self, on: bool) {
        self.timing = on;
    }

    #[inline]
    fn die_free_at(&self, die: u32) -> u64 {
        self.die_free[die as usize]
    }

    fn die_free_offsets(&self) -> Option<(u64, &[u64])> {
        Some((0, &self.die_free))
    }

    fn idle_start(&self, die: u32, from: u64, until: u64) -> Option<Done> {
        let start = self.die_free[die as usize].max(from);
        (start < until).then_some(Done::at(start))
    }

    /// The timelines as they stand (with timing off they do not move, so the answer is as of
    /// when timing was last on); the work's time is the sum of its array and channel times.
    fn fits_before(&self, txs: &[Transaction], from: u64, until: u64, wait: Wait) -> bool {
        let mut start = from;
        let mut cost = 0;
        for tx in txs {
            let d = tx.die as usize;
            start = start.max(self.die_free[d]);
            if wait == Wait::DiesAndChannels {
                start = start.max(self.channel_free[self.die_channel[d] as usize]);
            }
            cost += self.cost_ns(tx);
        }
        start + cost <= until
    }

    /// The transaction's array and channel (or link) times, summed.
    fn cost_ns(&self, tx: &Transaction) -> u64 {
        match tx.op {
            Op::Read => self.times.read_ns(tx.mode, tx.page) + self.channel_ns(tx.bytes),
            Op::Program => self.times.program_ns(tx.mode, tx.page) + self.channel_ns(tx.bytes),
            Op::Erase => self.times.erase_ns(tx.mode),
            Op::HostTransfer => self.command_ns + tx.bytes * self.link_ps_per_byte / 1000,
            Op::Dram => self.dram_ns,
            Op::Encode => self.times.read_ns(tx.mode, tx.page) / 2,
            Op::Join => 0,
        }
    }

    fn utilisation(&self) -> Utilisation {
        self.busy.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::FlashConfig;
    use crate::flash::BitMode;
    use crate::stats::Cause;

    fn times() -> ArrayTimes {
        ArrayTimes::new(&FlashConfig::default())
    }

    fn engine() -> Reservation {
        // 1000 MB/s channel: 1 ns per byte; 500 MB/s link: 2 ns per byte; no command cost.
        Reservation::new(times(), true, 500.0, 0.0, 1000.0, 2, vec![0, 0, 1, 1])
    }

    #[test]
    fn a_transaction_takes_the_array_time_of_its_mode_and_page_type() {
        let t = times();
        let mode = BitMode::Tlc;
        let mut e = engine();
        let tx = Transaction::program(0, 3, 1, mode, 4096, Cause::Host);
        assert_eq!(e.submit(&tx, Done::at(0)).0, 4096 + t.program_ns(mode, 1));
        let rd = Transaction::read(2, 9, 0, mode, 4096, Cause::Gc);
        assert_eq!(e.submit(&rd, Done::at(10)).0, 10 + t.read_ns(mode, 0) + 4096);
        let er = Transaction::erase(0, 3, mode, Cause::Gc);
        assert_eq!(e.submit(&er, Done::at(0)).0, 4096 + t.program_ns(mode, 1) + t.erase_ns(mode));
    }

    #[test]
    fn an_encoder_run_is_half_a_read_and_books_nothing() {
        let t = times();
        let mode = BitMode::Tlc;
        let mut e = engine();
        let enc = Transaction::encode(0, 3, 2, mode, Cause::SecondWrite);
        assert_eq!(e.submit(&enc, Done::at(1000)).0, 1000 + t.read_ns(mode, 2) / 2);
        assert_eq!(e.die_free_at(0), 0, "the encoder is the controller's, not the die's");
        e.set_timing(false);
        assert_eq!(e.submit(&enc, Done::at(1000)), Done::at(1000), "fast-forward: work ends when it may start");
    }

    #[test]
    fn idle_start_is_when_the_die_frees_inside_the_window() {
        let mut e = engine();
        let done = e.program(0, 0, 4096, 100_000);
        assert_eq!(e.idle_start(0, 0, done + 1), Some(Done::at(done)));
        assert_eq!(e.idle_start(0, 0, done), None, "busy until the window closes");
        assert_eq!(e.idle_start(2, 50, 60), Some(Done::at(50)), "an idle die starts at the window's start");
    }

    #[test]
    fn fits_before_waits_for_the_named_resources_and_sums_the_work() {
        let t = times();
        let mode = BitMode::Tlc;
        let mut e = engine();
        // Die 1 reads: its channel (shared with die 0) is busy until `bus`, die 0 stays idle.
        let bus = e.read(1, 0, 50_000, 4096);
        let work = [Transaction::read(0, 0, 0, mode, 4096, Cause::SecondWrite)];
        let need = t.read_ns(mode, 0) + 4096;
        assert!(e.fits_before(&work, 0, need, Wait::Dies));
        assert!(!e.fits_before(&work, 0, need, Wait::DiesAndChannels));
        assert!(e.fits_before(&work, 0, bus + need, Wait::DiesAndChannels));
        assert!(!e.fits_before(&work, 0, bus + need - 1, Wait::DiesAndChannels));
        assert_eq!(e.utilisation().channel_busy_ns, 4096, "planning books nothing");
    }

    #[test]
    fn program_then_read_on_one_die_serialise() {
        let mut e = engine();
        let p = e.program(0, 0, 4096, 100_000);
        assert_eq!(p, 4096 + 100_000);
        let r = e.read(0, 0, 50_000, 4096);
        assert_eq!(r, p + 50_000 + 4096);
    }

    #[test]
    fn dies_on_different_channels_overlap() {
        let mut e = engine();
        let a = e.program(0, 0, 4096, 100_000);
        let b = e.program(2, 0, 4096, 100_000);
        assert_eq!(a, b);
    }

    #[test]
    fn dies_on_one_channel_share_the_bus_only_for_transfers() {
        let mut e = engine();
        let a = e.program(0, 0, 4096, 100_000);
        let b = e.program(1, 0, 4096, 100_000);
        assert_eq!(b, a + 4096);
    }

    #[test]
    fn fast_forward_takes_no_time() {
        let mut e = engine();
        e.set_timing(false);
        assert_eq!(e.program(0, 7, 4096, 100_000), 7);
        assert_eq!(e.host_transfer(7, 1 << 20), 7);
    }

    #[test]
    fn link_charges_overhead_and_bandwidth() {
        let mut e = Reservation::new(times(), true, 300.0, 10.0, 400.0, 1, vec![0]);
        // 4096 bytes at 300 MB/s = 13653 ns (3333 ps per byte), plus 10 us.
        assert_eq!(e.host_transfer(0, 4096), 10_000 + 4096 * 3333 / 1000);
    }
}
