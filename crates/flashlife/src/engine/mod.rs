//! The engine: integer-nanosecond resource timelines for the host link, channel buses and
//! dies.
//!
//! Each resource keeps the time it next becomes free. An operation is placed on the
//! resources it needs, in order, at the earliest time all are free and its inputs are
//! ready; the engine returns when it finishes. This reservation model costs a few additions
//! per page operation (no event objects, no allocation), which is what makes whole-lifetime
//! runs fast. Planes of a die share the die: a multi-plane operation is one die operation
//! that moves the data of every plane it covers over the channel.
//!
//! With timing off (fast-forward), every operation finishes when it is ready.

/// Picoseconds per byte for a bandwidth in MB/s (10^6 bytes per second).
fn ps_per_byte(mb_per_s: f64) -> u64 {
    (1e6 / mb_per_s).round().max(1.0) as u64
}

/// Busy time accumulated per resource kind, for utilisation figures.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Utilisation {
    pub link_busy_ns: u64,
    pub channel_busy_ns: u64,
    pub die_busy_ns: u64,
}

/// Resource timelines.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Engine {
    timing: bool,
    link_free: u64,
    link_ps_per_byte: u64,
    command_ns: u64,
    channel_free: Vec<u64>,
    channel_ps_per_byte: u64,
    die_free: Vec<u64>,
    /// Channel of each die.
    die_channel: Vec<u32>,
    pub busy: Utilisation,
}

impl Engine {
    /// `die_channel[d]` is the channel die `d` sits on.
    pub fn new(
        timing: bool,
        link_mb_per_s: f64,
        command_overhead_us: f64,
        channel_mb_per_s: f64,
        channels: u32,
        die_channel: Vec<u32>,
    ) -> Self {
        Engine {
            timing,
            link_free: 0,
            link_ps_per_byte: ps_per_byte(link_mb_per_s),
            command_ns: (command_overhead_us * 1000.0).round() as u64,
            channel_free: vec![0; channels as usize],
            channel_ps_per_byte: ps_per_byte(channel_mb_per_s),
            die_free: vec![0; die_channel.len()],
            die_channel,
            busy: Utilisation::default(),
        }
    }

    /// Is the timing model on?
    #[inline]
    pub fn timing(&self) -> bool {
        self.timing
    }

    /// Switch timing on or off (fast-forward preconditioning runs with it off).
    pub fn set_timing(&mut self, on: bool) {
        self.timing = on;
    }

    #[inline]
    fn channel_ns(&self, bytes: u64) -> u64 {
        bytes * self.channel_ps_per_byte / 1000
    }

    /// Channel time for `bytes` (for planning background work into idle windows).
    #[inline]
    pub fn channel_ns_for(&self, bytes: u64) -> u64 {
        self.channel_ns(bytes)
    }

    /// A command with `bytes` of data crosses the host link, ready at `ready`.
    #[inline]
    pub fn host_transfer(&mut self, ready: u64, bytes: u64) -> u64 {
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
    pub fn read(&mut self, die: u32, ready: u64, sense_ns: u64, bytes: u64) -> u64 {
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
    pub fn program(&mut self, die: u32, ready: u64, bytes: u64, program_ns: u64) -> u64 {
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
    pub fn erase(&mut self, die: u32, ready: u64, erase_ns: u64) -> u64 {
        if !self.timing {
            return ready;
        }
        let d = die as usize;
        let done = ready.max(self.die_free[d]) + erase_ns;
        self.die_free[d] = done;
        self.busy.die_busy_ns += erase_ns;
        done
    }

    /// When `die` next becomes free.
    #[inline]
    pub fn die_free_at(&self, die: u32) -> u64 {
        self.die_free[die as usize]
    }

    /// When the channel of `die` is next free.
    pub fn channel_free_at(&self, die: u32) -> u64 {
        self.channel_free[self.die_channel[die as usize] as usize]
    }

    /// The latest time any resource is busy until.
    pub fn horizon(&self) -> u64 {
        let d = self.die_free.iter().copied().max().unwrap_or(0);
        let c = self.channel_free.iter().copied().max().unwrap_or(0);
        d.max(c).max(self.link_free)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine() -> Engine {
        // 1000 MB/s channel: 1 ns per byte; 500 MB/s link: 2 ns per byte; no command cost.
        Engine::new(true, 500.0, 0.0, 1000.0, 2, vec![0, 0, 1, 1])
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
        let mut e = Engine::new(true, 300.0, 10.0, 400.0, 1, vec![0]);
        // 4096 bytes at 300 MB/s = 13653 ns (3333 ps per byte), plus 10 us.
        assert_eq!(e.host_transfer(0, 4096), 10_000 + 4096 * 3333 / 1000);
    }
}
