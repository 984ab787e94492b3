"""Read latency relaxation from Python: the `reliability` section of a hinted run on the
read-relaxation drive of `flashlife reproduce readrelax` (whose hint trends are checked in
test_reproduce.py)."""

from __future__ import annotations

import pytest

import flashlife
from flashlife.reproduce.readrelax import readrelax_drive

# The summary's `reliability` section (docs/techniques/read-relaxation.md, Outputs).
RELIABILITY = [
    "model",
    "read_reclaim",
    "retry_steps_histogram",
    "mean_retry_steps",
    "read_retries_by_cause",
    "long_read_threshold_us",
    "long_reads",
    "long_read_share",
    "uncorrectable_reads",
    "hinted_reads",
    "reclaimed_blocks",
    "reclaim_page_programs",
    "reclaim_erases",
    "reclaim_share_of_pe_budget",
    "reclaim_share_of_erases",
]


def test_reliability_section_of_a_hinted_run():
    o = dict(
        readrelax_drive(True, 20.0),
        **{"reliability.read_reclaim": "hinted", "reliability.default_budget_us": 250},
    )
    wl = {
        "kind": "uniform",
        "read_ratio": 1.0,
        "request_size": 16384,
        "arrival": {"process": "poisson", "rate_iops": 5},
    }
    s = flashlife.run(o, wl, until="time:4d", seed=1).summary  # 4 days: reclaim runs (105 blocks)
    r = s["reliability"]
    for k in RELIABILITY:
        assert k in r, k
    assert r["model"] == "power_law" and r["read_reclaim"] == "hinted"
    # Every sensed host page read is in the retry histogram, once.
    assert sum(r["retry_steps_histogram"]) == s["flash"]["page_reads_by_cause"]["host"] > 0
    assert r["read_retries_by_cause"]["host"] == sum(
        i * n for i, n in enumerate(r["retry_steps_histogram"][:-1])
    )
    assert r["retry_steps_histogram"][-1] == r["uncorrectable_reads"] == s["failures"]["uncorrectable_reads"]
    # Each reclaimed block (counted where reclaim picks it) is erased once under the reclaim
    # cause, and the flash array's own erase count equals the FTL's sum by cause.
    assert r["reclaim_erases"] == r["reclaimed_blocks"] > 0
    assert s["integrity"]["physical_block_erases"] == s["flash"]["block_erases"]
    # Spent lifetime by reads = reclaim erases / (blocks x rated cycles).
    assert r["reclaim_share_of_pe_budget"] == pytest.approx(r["reclaim_erases"] / (128 * 3000), rel=1e-9)
    assert r["hinted_reads"] == 0, "a default budget is not a hint"
