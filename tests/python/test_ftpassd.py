"""FT-PASSD from Python: the open-channel presets run, and `compare` puts a device policy
beside the OCSSD baseline (Lee et al., IEEE Access 2020: FT-PASSD cuts the average write
response time against OCSSD)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import flashlife

TRACES = Path(__file__).resolve().parents[2] / ".." / "shared" / "traces"
MSR = TRACES / "msr" / "hm_0-window.csv"

# A real trace ten times faster than recorded, one program failure at a seeded random program.
TRACE_KEYS = {
    "workload.trace.time_scale": 0.1,
    "failures.program_fail_nth_random_within": 1400,
    "run.progress": "off",
}


def _need_trace() -> None:
    if not MSR.is_file():
        pytest.skip(f"sample trace not found at {MSR} (expected beside the checkout)")


def test_run_ftpassd_small_has_the_open_channel_section():
    r = flashlife.run("ftpassd-small", until="requests:300", overrides={"failures.program_fail_nth": 50})
    oc = r.summary["open_channel"]
    assert oc["device_policy"] == "ft_passd" and oc["write_back"] is True
    dev = oc["device"]
    assert dev["failures_handled"] == 1 and dev["failures_reported"] == 0
    assert 0.0 < dev["buffer_utilisation_at_failure"] <= 1.0
    assert dev["first_failure_page"] is not None and dev["first_failure_ns"] is not None
    assert oc["memory"]["total_bytes"] > 0
    assert r.summary["integrity"]["oracle"] and r.summary["integrity"]["checks"] > 0
    assert r.config["failures"]["program_fail_nth"] == 50
    assert r.config["host"]["interface"] == "open_channel"


@pytest.mark.parametrize("policy", ["ocssd", "ft_passd_no_shift", "ft_passd"])
def test_every_policy_runs_a_trace(policy):
    _need_trace()
    r = flashlife.run(
        "ftpassd-small", MSR, until="end", overrides={**TRACE_KEYS, "open_channel.device_policy": policy}
    )
    assert r.summary["open_channel"]["device_policy"] == policy
    assert r.summary["failures"]["program"] == 1
    # The drawn program is recorded, so the run can be repeated exactly.
    assert 1 <= r.config["failures"]["program_fail_nth"] <= 1400
    assert r.config["failures"]["program_fail_nth_random_within"] == 0


def test_compare_ft_passd_against_ocssd_on_an_msr_trace():
    _need_trace()
    df = flashlife.compare(
        {"open_channel.device_policy": "ft_passd"},
        {"open_channel.device_policy": "ocssd"},
        MSR,
        base="ftpassd-small",
        until="end",
        overrides=TRACE_KEYS,
        metrics=[
            "latency_us.write.mean",
            "latency_us.write.max",
            "failures.program",
            "open_channel.device.failures_handled",
            "open_channel.device.max_retry_us",
            "open_channel.host_rewrites",
        ],
    )
    assert df.loc["latency_us.write.mean", "ratio"] < 0.5
    assert df.loc["latency_us.write.max", "ratio"] <= 1.0
    assert df.loc["failures.program", "technique"] == df.loc["failures.program", "baseline"] == 1
    assert df.loc["open_channel.host_rewrites", "baseline"] == 1
    assert df.loc["open_channel.host_rewrites", "technique"] == 0
    assert df.loc["open_channel.device.max_retry_us", "technique"] < 10_000
    assert df.attrs["technique"]["open_channel"]["device_policy"] == "ft_passd"


def test_cli_compare_with_policy_sets():
    cmd = [
        sys.executable,
        "-m",
        "flashlife.cli",
        "compare",
        "--base",
        "ftpassd-small",
        "--technique-set",
        "open_channel.device_policy=ft_passd",
        "--baseline-set",
        "open_channel.device_policy=ocssd",
        "--until",
        "requests:200",
        "--set",
        "workload.request_size=16384",
        "--metric",
        "latency_us.write.mean",
        "--csv",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=300).stdout
    lines = out.strip().splitlines()
    assert lines[0] == "metric,baseline,technique,ratio"
    metric, baseline, technique, ratio = lines[1].split(",")
    assert metric == "latency_us.write.mean"
    assert float(technique) < float(baseline)
