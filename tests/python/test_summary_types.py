"""flashlife.summary.Summary is summary.json's schema: real runs of every kind have exactly the
keys its TypedDicts declare, recursively, with values of the declared types, so the types
cannot drift from the core."""

from __future__ import annotations

import importlib
import json
import typing
from pathlib import Path

import pytest
from summary_shape import shape_errors

import flashlife
from flashlife import summary as s


def _all_typeddicts() -> list[type]:
    return [
        v
        for v in vars(s).values()
        if isinstance(v, type) and typing.is_typeddict(v) and v.__module__ == s.__name__
    ]


@pytest.fixture(scope="module")
def block_run() -> flashlife.Result:
    return flashlife.run("tiny", until="writes:0.5dw", seed=2)


def test_a_block_run_matches_the_summary_type(block_run: flashlife.Result) -> None:
    assert shape_errors(block_run.summary) == []
    # The optional sections are absent, not null, for a block drive without Reusable SSD.
    assert "open_channel" not in block_run.summary and "techniques" not in block_run.summary
    # The queued scheduler (the default) reports its section; reservation has none.
    assert block_run.summary["provenance"]["scheduler"] == "queued" and "scheduler" in block_run.summary
    r = flashlife.run("tiny", until="requests:2000", overrides={"timing.scheduler": "reservation"})
    assert shape_errors(r.summary) == [] and "scheduler" not in r.summary
    assert isinstance(block_run.summary["write_amplification"], float)


def test_an_open_channel_run_matches_the_summary_type() -> None:
    # A program failure fills the device's optional *_at_failure fields, so they are checked too.
    r = flashlife.run("ftpassd-small", until="requests:300", overrides={"failures.program_fail_nth": 50})
    assert shape_errors(r.summary) == []
    oc = r.summary["open_channel"]
    assert oc["memory"] is not None and oc["device"]["first_failure_ns"] is not None


def test_a_host_write_path_run_matches_the_summary_type() -> None:
    r = flashlife.run(
        "ftpassd-small",
        until="requests:300",
        overrides={
            "ftl.mapping_unit": 4096,
            "open_channel.host_buffer_kib": 64,
            "open_channel.min_write_kib": 32,
            "open_channel.placement": "chunk",
        },
    )
    assert shape_errors(r.summary) == []
    hp = r.summary["open_channel"]["host_path"]
    assert hp["min_write_bytes"] == 32 * 1024 and hp["host_buffer"]["capacity_bytes"] == 64 * 1024


def test_an_ocssd_run_has_no_memory_report() -> None:
    r = flashlife.run(
        "ftpassd-small", until="requests:300", overrides={"open_channel.device_policy": "ocssd"}
    )
    assert shape_errors(r.summary) == []
    assert r.summary["open_channel"]["memory"] is None


def test_a_queued_run_matches_the_summary_type() -> None:
    r = flashlife.run(
        "tiny",
        until="requests:3000",
        overrides={"timing.scheduler": "queued", "timing.suspension": True, "workload.read_ratio": 0.3},
    )
    assert shape_errors(r.summary) == []
    sched = r.summary["scheduler"]
    assert sched["kind"] == "queued" and 0.0 < sched["die_busy"]["mean"] <= 1.0
    assert sched["transactions"] > 0


def test_a_sampled_run_matches_the_summary_type() -> None:
    # Reads only in a write run: the windows' read sections are empty (zeros), and one window
    # of the two is cut short by the stop.
    r = flashlife.run(
        "tiny",
        until="requests:9000",
        overrides={
            "sampling.enabled": True,
            "sampling.every": "50%",
            "sampling.warmup_requests": 500,
            "sampling.window_requests": 1000,
        },
    )
    assert shape_errors(r.summary) == []
    sampling = r.summary["sampling"]
    assert len(sampling["windows"]) == 2 and sampling["measured_requests"] == 2000
    assert sampling["estimate"]["read"]["mean"]["value"] is None
    assert sampling["estimate"]["write"]["mean"]["low"] is not None
    assert r.timeseries["measured_requests"].sum() == 2000


def test_a_trim_run_matches_the_summary_type() -> None:
    r = flashlife.run("tiny", {"read_ratio": 0.2, "trim_ratio": 0.2}, until="writes:0.5dw")
    assert shape_errors(r.summary) == []
    assert r.summary["trim"]["mapped_units"] > 0
    assert "trim" not in flashlife.run("tiny", until="requests:200").summary


def test_a_cached_run_matches_the_summary_type() -> None:
    r = flashlife.run(
        "tiny",
        {"kind": "zipf", "read_ratio": 0.5},
        until="writes:0.2dw",
        overrides={"cache.size_bytes": 1 << 20},
    )
    assert shape_errors(r.summary) == []
    assert r.summary["cache"]["read_hits"] > 0
    assert "cache" not in flashlife.run("tiny", until="requests:200").summary
    # No reads: the hit ratio is undefined, null.
    r = flashlife.run("tiny", until="requests:500", overrides={"cache.size_bytes": 1 << 20})
    assert shape_errors(r.summary) == [] and r.summary["cache"]["read_hit_ratio"] is None


def test_a_mapping_cache_run_matches_the_summary_type() -> None:
    r = flashlife.run(
        "tiny",
        {"kind": "zipf", "read_ratio": 0.5},
        until="writes:0.5dw",
        overrides={"mapping_cache.size_bytes": 1024},
    )
    assert shape_errors(r.summary) == []
    m = r.summary["mapping_cache"]
    assert m["misses"] > 0 and m["translation_programs"] > 0
    assert r.summary["flash"]["page_programs_by_cause"]["mapping"] == m["translation_programs"]
    plain = flashlife.run("tiny", until="requests:200").summary
    assert "mapping_cache" not in plain
    assert "mapping" not in plain["flash"]["page_programs_by_cause"]


def test_a_run_with_flows_matches_the_summary_type_and_flattens_by_flow_name() -> None:
    flows = [
        {
            "name": "reader",
            "queue_depth": 4,
            "range": [0.0, 0.5],
            "workload": {"kind": "uniform", "read_ratio": 1.0},
        },
        {"name": "writer", "range": [0.5, 1.0], "priority": "high", "workload": {"kind": "zipf"}},
    ]
    r = flashlife.run("tiny", until="writes:0.5dw", overrides={"flows": flows})
    assert shape_errors(r.summary) == []
    assert [f["name"] for f in r.summary["flows"]] == ["reader", "writer"]
    assert r.summary["flows"][0]["write_requests"] == 0 and r.summary["flows"][1]["read_requests"] == 0
    flat = s.flatten_summary(r.summary)
    assert flat["flows.writer.latency_us.write.p99"] == r.summary["flows"][1]["latency_us"]["write"]["p99"]
    assert flat["flows.reader.range_bytes"] == r.summary["flows"][0]["range_bytes"]
    flow_keys = [k for k in flat if k.startswith("flows.")]
    assert flow_keys and all(s.is_flow_field(k) for k in flow_keys)
    assert not s.is_flow_field("flows.reader.name") and not s.is_flow_field("latency_us.read.p99")
    assert {"reader_iops", "writer_mean_latency_us"} <= set(r.timeseries.columns)
    assert "flows" not in flashlife.run("tiny", until="requests:200").summary


def test_a_reusable_ssd_run_matches_the_summary_type() -> None:
    r = flashlife.run("reusable-small", until="writes:0.5dw")
    assert shape_errors(r.summary) == []
    assert r.summary["techniques"]["reusable"]["units"] > 0
    assert "salvage" not in r.summary["techniques"]


def test_a_salvage_run_matches_the_summary_type() -> None:
    r = flashlife.run(
        "tiny",
        until="writes:1dw",
        overrides={
            "failures.on_program_failure": "skip_page",
            "failures.program_fail_at": [[3, 4], [7, 0]],
        },
    )
    assert shape_errors(r.summary) == []
    assert r.summary["techniques"]["salvage"]["bad_page_table"]["peak_entries"] >= 1


def test_undefined_ratios_are_none_and_match_the_summary_type() -> None:
    # Read-only: no host writes (write amplification) and no GC victims.
    r = flashlife.run("tiny", {"read_ratio": 1.0}, until="requests:2000")
    assert shape_errors(r.summary) == []
    assert r.summary["write_amplification"] is None and r.summary["gc"]["mean_valid_per_victim"] is None
    # No request, no simulated time: the rates are undefined too.
    r = flashlife.run("tiny", {"read_ratio": 1.0}, until="requests:0")
    assert shape_errors(r.summary) == []
    assert r.summary["throughput"] == {"iops": None, "mb_per_s": None, "offered_iops": None}


def test_summary_json_on_disk_is_the_results_summary(tmp_path: Path) -> None:
    r = flashlife.run("tiny", until="requests:500", out_dir=tmp_path)
    assert r.summary_json == (tmp_path / "summary.json").read_text().rstrip("\n")
    assert json.loads(r.summary_json) == r.summary
    assert "summary_json" not in repr(r)


def test_the_check_catches_drift(block_run: flashlife.Result) -> None:
    summary = json.loads(json.dumps(block_run.summary))
    summary["gc"]["new_field"] = 1
    del summary["run"]["seed"]
    summary["lifetime"]["drive_writes"] = "many"
    summary["flash"]["page_reads_by_cause"]["host"] = True
    assert shape_errors(summary) == [
        "summary.flash.page_reads_by_cause.host: True, expected an integer",
        "summary.gc.new_field: not declared in Gc",
        "summary.lifetime.drive_writes: 'many', expected float",
        "summary.run.seed: missing (required by RunInfo)",
    ]


def test_every_typeddict_is_documented_and_reachable_from_summary() -> None:
    reachable: set[type] = set()
    todo: list[typing.Any] = [s.Summary]
    while todo:
        tp = todo.pop()
        if isinstance(tp, type) and typing.is_typeddict(tp):
            if tp not in reachable:
                reachable.add(tp)
                todo.extend(typing.get_type_hints(tp).values())
        else:
            todo.extend(typing.get_args(tp))
    declared = set(_all_typeddicts())
    assert declared == reachable, declared ^ reachable
    assert all(tp.__doc__ for tp in declared)
    assert sorted(tp.__name__ for tp in declared) == sorted(
        n for n in s.__all__ if n not in ("flatten_summary", "summary_fields", "is_flow_field")
    )


def test_flatten_summary_is_shared() -> None:
    # flashlife.sweep and flashlife.compare are the functions; the modules are in sys.modules.
    for module in ("flashlife", "flashlife.sweep", "flashlife.compare", "flashlife.plots"):
        assert importlib.import_module(module).flatten_summary is s.flatten_summary, module
    flat = s.flatten_summary({"a": 1, "b": {"c": [1, 2], "d": {"e": None}}})
    assert flat == {"a": 1, "b.c": [1, 2], "b.d.e": None}


def _dotted_fields(tp: typing.Any, prefix: str = "") -> set[str]:
    """The dotted names `flatten_summary` gives the scalar fields of a TypedDict."""
    out: set[str] = set()
    for k, sub in typing.get_type_hints(tp).items():
        name = f"{prefix}.{k}" if prefix else k
        inner = [a for a in typing.get_args(sub) if a is not type(None)] or [sub]
        if isinstance(inner[0], type) and typing.is_typeddict(inner[0]):
            out |= _dotted_fields(inner[0], name)
        else:
            out.add(name)
    return out


def test_compare_default_metrics_are_summary_fields(block_run: flashlife.Result) -> None:
    from flashlife.compare import DEFAULT_METRICS

    fields = _dotted_fields(s.Summary)
    assert set(DEFAULT_METRICS) <= fields, set(DEFAULT_METRICS) - fields
    # And the flattening of a real summary names exactly the declared fields it holds.
    assert set(s.flatten_summary(block_run.summary)) <= fields
