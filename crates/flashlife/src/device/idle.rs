//! The device's background work (a policy's migration) in the time no host command is
//! outstanding. The device is told that it is idle from a time on and, later, that a command
//! arrived; only then does it run the steps it would have started in between, each one only
//! if no command had arrived by its start. It is never told when the next command comes, so a
//! command can arrive during a step and wait for it: that wait is counted.

use super::Device;
use crate::timing::Done;

/// The background copy in progress when a host command arrived: its die and its end.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(super) struct Preempted {
    die: u32,
    end: u64,
}

impl Device {
    /// No host command is outstanding from `t` on. The device learns when the idle time
    /// ends only when the next command arrives ([`Device::command_arrived`]).
    pub fn idle_since(&mut self, t: u64) {
        self.idle_since = Some(t);
    }

    /// A host command arrived at `t` (called at each command's first contact with the device;
    /// more calls for the same command change nothing). If the device was idle, the
    /// background work it started in the meantime is run now: from the policy's idle timeout
    /// on, one step (a page copy) after another, each started only while no command had
    /// arrived yet; the copy in progress at `t` ends first, and the command may wait for it.
    pub fn command_arrived(&mut self, t: u64) {
        let Some(since) = self.idle_since.take() else { return };
        let mut next = since.saturating_add(self.policy.idle_timeout_ns());
        while next < t {
            let Some(die) = self.policy.next_background(&mut self.core) else { break };
            // A step waits for its die (a write-back device may still be programming).
            let start = if self.core.sched.timing() { next.max(self.core.sched.die_free_at(die)) } else { next };
            if start >= t {
                break;
            }
            // Idle detection works in plain time; the step waits for its window's start.
            let end = self.policy.background_step(&mut self.core, Done::at(start)).as_time();
            if end > t {
                self.core.stats.migration_preemptions += 1;
                self.preempted = Some(Preempted { die, end });
            }
            next = end;
        }
    }

    /// A host-path operation on `pbn`, ready at `ready`: if a preempted background copy still
    /// holds its die, it waits until the copy ends.
    #[inline]
    pub(super) fn behind_background(&mut self, pbn: u32, ready: Done) {
        let Some(p) = self.preempted else { return };
        // Idle detection works in plain time: how long the operation would wait.
        let ready = ready.as_time();
        if ready >= p.end || self.core.die_of(pbn) != p.die {
            return;
        }
        let s = &mut self.core.stats;
        s.migration_waits += 1;
        s.max_migration_wait_us = s.max_migration_wait_us.max((p.end - ready) as f64 / 1e3);
    }
}
