//! `[[flows]]`: several host flows at once (NVMe multi-queue), each its own workload, queue
//! depth or arrival process, slice of the logical space and priority class.
//!
//! No `[[flows]]` table (the default) is today's single `[workload]`; the list is then left
//! out of a written configuration, so configurations that predate it keep their text (and
//! hash). With flows, `[workload]` is not used.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::workload::WorkloadConfig;

choice! {
    /// `flows.priority`: the flow's class under the queued scheduler (its host operations
    /// wait ahead of a `normal` flow's in each die's queues). The reservation scheduler books
    /// work in the order it is decided and has no queues to order: there it changes nothing.
    FlowPriority { Normal = "normal", High = "high" }
}

/// Most flows a run may have (a flow costs a few histograms; NVMe allows 65535 queues).
pub const MAX_FLOWS: usize = 64;

/// One `[[flows]]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlowConfig {
    /// The flow's name in the summary and as the prefix of its `timeseries.csv` columns;
    /// empty: `flowN` (N its position from 0). Letters, digits and `_` only.
    pub name: String,
    /// Requests this flow keeps outstanding at most (its submission queue): closed loop, it
    /// keeps this many in flight; open loop, an arrival waits while this many are. 0: `host.queue_depth`.
    pub queue_depth: u32,
    /// `normal` or `high` (see [`FlowPriority`]).
    pub priority: FlowPriority,
    /// The flow's slice of the logical space, `[start, end)` as fractions of it, aligned down
    /// to mapping units: its workload sees a drive of that size and its addresses are
    /// offset to the slice's start.
    pub range: [f64; 2],
    /// May this flow's range overlap another's? Only two flows that both say `true` may
    /// share logical space (one dataset read by one flow and written by another); otherwise
    /// overlapping ranges are refused, since one flow would then silently change another's data.
    pub shared: bool,
    /// The flow's workload: the `[workload]` schema (`[flows.workload]`, `[flows.workload.trace]`,
    /// ...). Its arrival process or trace timestamps make it open or closed loop.
    pub workload: WorkloadConfig,
}

impl Default for FlowConfig {
    fn default() -> Self {
        FlowConfig {
            name: String::new(),
            queue_depth: 0,
            priority: FlowPriority::Normal,
            range: [0.0, 1.0],
            shared: false,
            workload: WorkloadConfig::default(),
        }
    }
}

impl FlowConfig {
    /// The name, or `flowN` for flow `i` without one.
    pub fn name_of(&self, i: usize) -> String {
        if self.name.is_empty() {
            format!("flow{i}")
        } else {
            self.name.clone()
        }
    }

    /// The queue depth, `host_qd` where it is 0.
    pub fn depth(&self, host_qd: u32) -> u32 {
        if self.queue_depth == 0 {
            host_qd
        } else {
            self.queue_depth
        }
    }

    /// `[first, end)` mapping units of a drive of `logical_units`.
    pub fn units(&self, logical_units: u64) -> (u64, u64) {
        let at = |f: f64| ((f * logical_units as f64).floor() as u64).min(logical_units);
        (at(self.range[0]), at(self.range[1]))
    }
}

/// Check every flow and the flows together; errors name `flows[i].key`.
pub fn validate(flows: &[FlowConfig], host_qd: u32, max_qd: u32) -> Result<()> {
    if flows.len() > MAX_FLOWS {
        return Err(Error::config("flows", format!("{} tables", flows.len()), format!("at most {MAX_FLOWS} flows")));
    }
    let mut names = std::collections::HashSet::new();
    for (i, f) in flows.iter().enumerate() {
        let k = |name: &str| format!("flows[{i}].{name}");
        if !f.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(Error::config(k("name"), &f.name, "letters, digits and _ only (it prefixes CSV columns)"));
        }
        if !names.insert(f.name_of(i)) {
            return Err(Error::config(k("name"), f.name_of(i), "a name no other flow has"));
        }
        if f.depth(host_qd) > max_qd {
            return Err(Error::config(k("queue_depth"), f.queue_depth, format!("at most {max_qd}")));
        }
        let [a, b] = f.range;
        if !(a.is_finite() && b.is_finite() && 0.0 <= a && a < b && b <= 1.0) {
            return Err(Error::config(
                k("range"),
                format!("[{a}, {b}]"),
                "[start, end) fractions of the logical space with 0 <= start < end <= 1",
            ));
        }
        f.workload.validate_at(&k("workload"), true)?;
    }
    // Overlap: ranges are compared as fractions (their units are the same function of them).
    for (i, f) in flows.iter().enumerate() {
        for (j, g) in flows.iter().enumerate().skip(i + 1) {
            let overlap = f.range[0] < g.range[1] && g.range[0] < f.range[1];
            if overlap && !(f.shared && g.shared) {
                return Err(Error::config(
                    format!("flows[{j}].range"),
                    format!("[{}, {}]", g.range[0], g.range[1]),
                    format!(
                        "a range clear of flows[{i}].range [{}, {}], or shared = true in both flows",
                        f.range[0], f.range[1]
                    ),
                ));
            }
        }
    }
    Ok(())
}
