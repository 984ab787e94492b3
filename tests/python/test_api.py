"""flashlife.run: configurations from presets, dicts, TOML files and overrides; errors; the GIL."""

from __future__ import annotations

import threading
import time

import pandas as pd
import pytest

import flashlife
from flashlife.sweep import WALL_FIELDS

QUICK = "writes:0.5dw"

# The summary contract (design.md section 4).
CONTRACT = {
    "host": ["read_requests", "write_requests", "read_bytes", "write_bytes"],
    "flash": ["page_reads", "page_programs", "block_erases"],
    "throughput": ["iops", "mb_per_s"],
    "lifetime": ["dead", "host_bytes_written", "drive_writes", "dead_blocks", "blocks_by_mode"],
    "failures": ["program", "erase", "uncorrectable_reads", "bad_pages"],
    "run": ["seed", "simulated_ns", "wall_seconds", "page_ops", "page_ops_per_second", "peak_rss_bytes"],
}
CAUSES = ["host", "gc", "reclaim", "migration", "second_write"]


def _deterministic(summary: dict) -> dict:
    s = flashlife.flatten_summary(summary)
    for k in WALL_FIELDS:
        s.pop(k)
    return s


def test_preset_run_summary_follows_the_contract():
    r = flashlife.run("tiny", until=QUICK, seed=3)
    s = r.summary
    assert isinstance(s["write_amplification"], float) and s["write_amplification"] >= 1.0
    for section, keys in CONTRACT.items():
        for k in keys:
            assert k in s[section], f"{section}.{k} missing"
    for op in ("read", "write", "all"):
        assert set(s["latency_us"][op]) >= {"mean", "p50", "p99", "p999", "max"}
    for cause in CAUSES:
        assert cause in s["flash"]["block_erases_by_cause"]
    assert s["run"]["seed"] == 3
    assert s["lifetime"]["drive_writes"] == pytest.approx(0.5)
    assert isinstance(r.timeseries, pd.DataFrame) and len(r.timeseries) > 0
    assert {"time_s", "host_bytes_written", "p99_latency_us", "wa_cumulative"} <= set(r.timeseries.columns)
    assert list(r.erase_histogram.columns) == ["erase_count", "blocks"]
    assert r.config["seed"] == 3 and r.config["run"]["until"] == QUICK
    assert "write" in str(r).lower()


def test_same_seed_same_result_other_seed_differs():
    a = flashlife.run("tiny", until=QUICK, seed=7)
    b = flashlife.run("tiny", until=QUICK, seed=7)
    c = flashlife.run("tiny", until=QUICK, seed=8)
    assert _deterministic(a.summary) == _deterministic(b.summary)
    assert _deterministic(a.summary) != _deterministic(c.summary)


def test_dict_config_equals_the_preset_it_resolves_to():
    full = flashlife.resolve_config("tiny")
    assert full["geometry"]["blocks_per_plane"] == 64
    a = flashlife.run("tiny", until=QUICK)
    b = flashlife.run(full, until=QUICK)
    assert _deterministic(a.summary) == _deterministic(b.summary)


def test_nested_and_dotted_dict_configs_agree():
    nested = flashlife.resolve_config({"gc": {"victim": "fifo"}, "capacity": {"overprovisioning": 0.2}})
    dotted = flashlife.resolve_config({"gc.victim": "fifo", "capacity.overprovisioning": 0.2})
    assert nested == dotted
    assert dotted["gc"]["victim"] == "fifo"


def test_toml_file_config(tmp_path):
    cfg = tmp_path / "drive.toml"
    cfg.write_text(
        "[geometry]\nchannels = 2\nblocks_per_plane = 64\npages_per_block = 32\n"
        '[gc]\nvictim = "fifo"\n[workload]\nread_ratio = 0.25\n'
    )
    r = flashlife.run(cfg, until="requests:2000")
    assert r.config["gc"]["victim"] == "fifo"
    assert r.config["geometry"]["blocks_per_plane"] == 64
    assert r.summary["host"]["read_requests"] + r.summary["host"]["write_requests"] == 2000
    assert r.summary["host"]["read_requests"] > 0


def test_workload_dict_and_dotted_overrides():
    r = flashlife.run(
        "tiny",
        {"kind": "uniform", "read_ratio": 0.5, "working_set": 0.5},
        until="requests:4000",
        overrides={"gc.victim": "fifo", "ftl.timing": False},
    )
    assert r.config["workload"]["read_ratio"] == 0.5
    assert r.config["gc"]["victim"] == "fifo"
    assert r.config["ftl"]["timing"] is False
    reads = r.summary["host"]["read_requests"]
    assert 1500 < reads < 2500
    # Overrides as `key=value` strings, as on the command line.
    r2 = flashlife.run("tiny", until=QUICK, overrides=['gc.victim="fifo"', "capacity.overprovisioning=0.28"])
    assert r2.config["gc"]["victim"] == "fifo"
    assert r2.summary["capacity"]["overprovisioning"] == pytest.approx(0.28, rel=0.02)


def test_out_dir_writes_the_run_files(tmp_path):
    flashlife.run("tiny", until=QUICK, out_dir=tmp_path / "run")
    for name in ("summary.json", "timeseries.csv", "erase_histogram.csv", "config.toml"):
        assert (tmp_path / "run" / name).stat().st_size > 0


def test_unknown_key_error_suggests_the_right_one():
    with pytest.raises(flashlife.FlashlifeError) as e:
        flashlife.run("tiny", overrides={"gc.victm": "fifo"})
    msg = str(e.value)
    assert "gc.victm" in msg and "unknown key" in msg and "gc.victim" in msg


def test_bad_value_error_names_key_and_choices():
    with pytest.raises(flashlife.FlashlifeError) as e:
        flashlife.run("tiny", overrides={"gc.victim": "fiffo"})
    msg = str(e.value)
    assert "gc.victim" in msg and "fiffo" in msg and "greedy" in msg
    with pytest.raises(flashlife.FlashlifeError, match="capacity.overprovisioning"):
        flashlife.run("tiny", overrides={"capacity.overprovisioning": -1})


def test_unknown_preset_and_missing_file():
    with pytest.raises(flashlife.FlashlifeError, match="tiny"):
        flashlife.run("no-such-preset")
    with pytest.raises(flashlife.FlashlifeError):
        flashlife.run("/nonexistent/drive.toml")


def test_error_is_an_exception_subclass_and_pickles():
    import pickle

    assert issubclass(flashlife.FlashlifeError, Exception)
    e = pickle.loads(pickle.dumps(flashlife.FlashlifeError("boom")))
    assert isinstance(e, flashlife.FlashlifeError) and str(e) == "boom"


def test_presets_listed():
    p = flashlife.presets()
    assert "tiny" in p and "default" in p and all(isinstance(v, str) and v for v in p.values())


# A run long enough (a few tenths of a second) to watch another thread during it.
LONG = {"geometry.blocks_per_plane": 1024, "geometry.pages_per_block": 64}


def test_gil_is_released_while_the_core_runs():
    ticks = 0
    stop = threading.Event()

    def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.002)

    t = threading.Thread(target=ticker)
    t.start()
    time.sleep(0.02)
    start_ticks = ticks
    t0 = time.perf_counter()
    flashlife.run("tiny", until="writes:2dw", overrides=LONG)
    elapsed = time.perf_counter() - t0
    during = ticks - start_ticks
    stop.set()
    t.join()
    assert elapsed > 0.1, "the run was too short to tell"
    # A thread sleeping 2 ms per tick gets at most elapsed / 2 ms ticks; with the GIL held it
    # would get none (or one at the start).
    assert during >= 0.25 * elapsed / 0.002, (during, elapsed)


def test_runs_in_two_python_threads_match_sequential_runs():
    alone = {
        seed: flashlife.run("tiny", until="writes:1dw", seed=seed, overrides=LONG).summary for seed in (1, 2)
    }
    results: dict[int, dict] = {}
    inside = threading.Barrier(2)

    def work(seed: int) -> None:
        inside.wait()
        results[seed] = flashlife.run("tiny", until="writes:1dw", seed=seed, overrides=LONG).summary

    threads = [threading.Thread(target=work, args=(s,)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # (That the calls overlap is shown by the ticking thread above; wall-time speed-ups are not
    # asserted, as they depend on how busy the machine is.)
    for seed in (1, 2):
        assert _deterministic(alone[seed]) == _deterministic(results[seed])


def test_a_result_shows_itself_as_a_table_in_a_notebook():
    r = flashlife.run("tiny", {"read_ratio": 1.0}, until="requests:2000")
    page = r._repr_html_()
    assert page.startswith("<table>") and page.endswith("</table>")
    assert "<td>n/a</td>" in page, "undefined write amplification shows as n/a"
    assert f"<td>{r.summary['run']['stop']}</td>" in page
    r.summary["run"]["warnings"] = ["<b>disk</b> full"]
    assert "<td>&lt;b&gt;disk&lt;/b&gt; full</td>" in r._repr_html_(), "values are escaped"
