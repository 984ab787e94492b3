//! The configuration's closed sets of names (`gc.victim = "greedy"`, ...) as typed enums: read
//! from and written to TOML by their names, compared in code as values, so a misspelt name is
//! an error at load time (naming the key and the names it takes) and never a silent `else`.

choice! {
    /// `flash.wear_model`.
    WearModelKind { Fixed = "fixed", Oxide = "oxide" }
}

choice! {
    /// `flash.end_of_life`: what a block worn out at its bit mode becomes.
    EndOfLife { Retire = "retire", DropBit = "drop_bit" }
}

choice! {
    /// `ftl.allocation`: which plane a host write's next page goes to.
    Allocation { Rotation = "rotation", LeastLoaded = "least_loaded", Static = "static" }
}

choice! {
    /// `flash.capacity_on_drop`: what a page holds after its block drops a bit per cell.
    CapacityOnDrop { BitsPerCell = "bits_per_cell", PageSize = "page_size" }
}

choice! {
    /// `wear_leveling.measure`: the wear a leveller evens out.
    WearMeasure { Erases = "erases", RemainingLife = "remaining_life" }
}

choice! {
    /// `host.interface`: where the FTL runs.
    Interface { Block = "block", OpenChannel = "open_channel" }
}

choice! {
    /// `host.arrivals`: when requests are issued.
    Arrivals { Closed = "closed", Timestamps = "timestamps" }
}

choice! {
    /// `ftl.precondition`: the drive's state when the run starts.
    Precondition { Empty = "empty", Full = "full", Steady = "steady" }
}

choice! {
    /// The baseline's GC victim policies (`gc.victim` also takes a technique's: `VictimName`).
    VictimKind {
        Greedy = "greedy",
        Fifo = "fifo",
        CostBenefit = "cost_benefit",
        Random = "random",
    }
}

choice! {
    /// `gc.mode`: when cleaning runs and who waits for it.
    GcMode { Standard = "standard", Foreground = "foreground" }
}

choice! {
    /// `gc.stream`: where cleaning writes the units it moves.
    GcStream { Separate = "separate", Shared = "shared" }
}

choice! {
    /// `failures.model`: where program failures come from.
    FailureSource { Injected = "injected", Lognormal = "lognormal" }
}

choice! {
    /// `failures.on_program_failure`: what a failed program does.
    OnProgramFailure { RetireBlock = "retire_block", SkipPage = "skip_page" }
}

choice! {
    /// `run.progress`: how `flashlife run` shows progress.
    ProgressMode { Auto = "auto", On = "on", Off = "off" }
}

choice! {
    /// The baseline's device program-failure managers (`open_channel.device_policy` also
    /// takes a technique's: `DevicePolicyName`).
    DevicePolicyKind { Ocssd = "ocssd" }
}

choice! {
    /// `open_channel.write_completion`: when the device acknowledges a write.
    WriteCompletion { Auto = "auto", WriteThrough = "write_through", WriteBack = "write_back" }
}

choice! {
    /// `open_channel.placement`: where the host FTL puts a write command's pages.
    HostPlacement { Stripe = "stripe", Chunk = "chunk" }
}

choice! {
    /// `reliability.model`: the bit-error model of page reads.
    ReliabilityModel { None = "none", PowerLaw = "power_law" }
}

choice! {
    /// `reliability.rber_set`: the RBER coefficients of `power_law`.
    RberSet { Tlc3d = "tlc-3d", Tlc3dRelaxation = "tlc-3d-relaxation", Mlc2d = "mlc-2d", Custom = "custom" }
}

choice! {
    /// `reliability.read_reclaim`: when a block is rewritten because of its reads.
    ReadReclaim {
        None = "none",
        ReadCount = "read_count",
        ErrorBased = "error_based",
        Hinted = "hinted",
        RetryOnly = "retry_only",
    }
}

choice! {
    /// `reliability.hint_latency`: what a hint's budget is compared with. `request`: the read
    /// request's predicted latency at the host (its pages' attempts, the die's queue and the
    /// host transfer, as the scheduler costs them); `page`: one page's flash attempts alone.
    HintLatency { Request = "request", Page = "page" }
}

choice! {
    /// `reliability.reclaim_when`: when a reclaim the policy asks for is done. `immediate`: right
    /// after the triggering read; `idle`: in the next idle window of the block's die, unless the
    /// block reaches its deadline (halfway from the policy's margin to its limit) first.
    ReclaimWhen { Immediate = "immediate", Idle = "idle" }
}

choice! {
    /// `reusable.retry`: what a failed WOM second write does.
    SecondWriteRetry { SameData = "same_data", ExtraRead = "extra_read", None = "none" }
}

choice! {
    /// `reusable.layout`: where the two halves of a second write go.
    PairLayout { Parallel = "parallel", Sequential = "sequential" }
}

choice! {
    /// `reusable.prefetch_issue`: when the invalid data under a second write is read.
    PrefetchIssue { Idle = "idle", Eager = "eager" }
}

choice! {
    /// `reusable.hot_cold`: the hot/cold classifier of host units.
    HotColdKind { Size = "size", Recency = "recency" }
}

impl GcMode {
    /// The default, left out of a written configuration (see `GcConfig::mode`).
    pub fn is_standard(&self) -> bool {
        *self == GcMode::Standard
    }
}

impl GcStream {
    /// The default, left out of a written configuration (see `GcConfig::stream`).
    pub fn is_separate(&self) -> bool {
        *self == GcStream::Separate
    }
}

impl CapacityOnDrop {
    /// The default (for `skip_serializing_if`).
    pub fn is_bits_per_cell(&self) -> bool {
        *self == CapacityOnDrop::BitsPerCell
    }
}

impl WearMeasure {
    /// The default (for `skip_serializing_if`).
    pub fn is_erases(&self) -> bool {
        *self == WearMeasure::Erases
    }
}

impl ReclaimWhen {
    /// The default (for `skip_serializing_if`: configurations from before the key hash alike).
    pub fn is_immediate(&self) -> bool {
        *self == ReclaimWhen::Immediate
    }
}

impl HintLatency {
    /// The default (for `skip_serializing_if`: configurations from before the key hash alike).
    pub fn is_request(&self) -> bool {
        *self == HintLatency::Request
    }
}

impl HostPlacement {
    /// The default (for `skip_serializing_if`: configurations from before the key hash alike).
    pub fn is_stripe(&self) -> bool {
        *self == HostPlacement::Stripe
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_toml() {
        #[derive(serde::Serialize, serde::Deserialize)]
        struct T {
            v: VictimKind,
        }
        let t: T = toml::from_str("v = \"cost_benefit\"").unwrap();
        assert_eq!(t.v, VictimKind::CostBenefit);
        assert_eq!(toml::to_string(&t).unwrap().trim(), "v = \"cost_benefit\"");
        assert_eq!(VictimKind::NAMES, ["greedy", "fifo", "cost_benefit", "random"]);
        assert_eq!(DevicePolicyKind::Ocssd.to_string(), "ocssd");
    }
}
