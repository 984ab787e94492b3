//! The device's background work (a policy's migration) in the time no host command is
//! outstanding. The device is told that it is idle from a time on and, later, that a command
//! arrived; only then does it run the steps it would have started in between, each one only
//! if no command had arrived by its start. It is never told when the next command comes, so a
//! command can arrive during a step and wait for it: that wait is counted.
//!
//! Under a scheduler that steps background work (the queued one), work cannot be placed in
//! time that has passed, so the steps run as events instead: from the idle time on, the die of
//! the next step owes background work, and each time the scheduler asks for some
//! ([`Device::step_background`]) the next page copy is submitted, starting no earlier than the
//! idle timeout and after the step before it, until a command arrives. The scheduler lets host
//! work pass background work at each transaction, so a command waits for at most the copy
//! in progress on its die; what was submitted before the arrival and had not started still
//! runs behind host work (at most the scheduler's stock of background work per die).

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
        if self.core.sched.steps_cleaning() {
            // The steps run as events: the die of the next one owes background work.
            if let Some(die) = self.policy.next_background(&mut self.core) {
                self.core.sched.cleaning_owed(die);
            }
        }
    }

    /// A host command arrived at `t` (called at each command's first contact with the device;
    /// more calls for the same command change nothing). If the device was idle, the
    /// background work it started in the meantime is run now: from the policy's idle timeout
    /// on, one step (a page copy) after another, each started only while no command had
    /// arrived yet; the copy in progress at `t` ends first, and the command may wait for it.
    pub fn command_arrived(&mut self, t: u64) {
        let Some(since) = self.idle_since.take() else { return };
        if self.core.sched.steps_cleaning() {
            // The steps ran as events (`step_background`); a copy still running on its die
            // was preempted by this command.
            if self.core.sched.completed(self.last_step).is_none() {
                self.core.stats.migration_preemptions += 1;
            }
            return;
        }
        let mut next = since.saturating_add(self.policy.idle_timeout_ns());
        while next < t {
            let Some(die) = self.policy.next_background(&mut self.core) else { break };
            // A step waits for its die (a write-back device may still be programming).
            let start = if self.core.sched.timing() { next.max(self.core.sched.die_free_at(die)) } else { next };
            if start >= t {
                break;
            }
            // Idle detection works in plain time; the step waits for its window's start.
            let start = Done::at(start);
            let end = self.policy.background_step(&mut self.core, start).as_time();
            if end > t {
                self.core.stats.migration_preemptions += 1;
                self.preempted = Some(Preempted { die, end });
            }
            next = end;
        }
    }

    /// Under a stepping scheduler, the scheduler asks `die` for background work at `now`: the
    /// next page copy if the device is idle and that copy is on `die`, starting no earlier
    /// than the idle timeout and after the step before it. Returns false when there is none
    /// here (another die's step is owed to that die instead).
    pub fn step_background(&mut self, die: u32, now: Done) -> bool {
        let Some(since) = self.idle_since else { return false };
        match self.policy.next_background(&mut self.core) {
            Some(d) if d == die => {
                // Idle detection works in plain time: the timeout's end is one.
                let due = Done::at(since.saturating_add(self.policy.idle_timeout_ns()));
                let start = now.max(due).max(self.last_step);
                self.last_step = self.policy.background_step(&mut self.core, start);
                true
            }
            Some(d) => {
                self.core.sched.cleaning_owed(d);
                false
            }
            None => false,
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
