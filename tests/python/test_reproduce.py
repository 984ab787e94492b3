"""`flashlife reproduce`: every paper end to end at the smoke scale, from the installed package.

One module-scoped run of `reproduce("all", scale="smoke")` (about half a minute on two cores)
feeds the per-paper checks: the report holds each section's table with the rows it claims, the
figures exist, the numbers are numbers. The command line is checked on FT-PASSD (seconds):
report and figures written, refusal to overwrite, `--overwrite`, absent traces skipped with a
message.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

import flashlife
from flashlife.cli import main
from flashlife.reproduce import PAPERS, SECTION_KEYS, Reproduction, Section

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT.parent / "shared" / "traces"

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Reproduction:
    out = tmp_path_factory.mktemp("reproduce") / "all"
    return flashlife.reproduce("all", scale="smoke", out_dir=out, traces=TRACES)


def _tables(report: str) -> dict[str, list[list[str]]]:
    """Each section's first table after its 'Ours:' line, by the section's title."""
    out: dict[str, list[list[str]]] = {}
    title = None
    lines = report.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("### "):
            title = line[4:]
        if line == "Ours:" and title is not None:
            rows = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in row.strip("|").split("|")])
            out[title] = rows[2:]  # past the header and the rule
    return out


def _check_section(rep: Reproduction, paper: str, key: str, expected_rows: int) -> Section:
    s = rep.section(paper, key)
    assert s.skipped is None, s.skipped
    assert len(s.rows) == expected_rows, [r[:3] for r in s.rows]
    table = _tables(rep.report.read_text())[s.title]
    assert table == s.rows, "the report's table is the section's rows"
    assert all(len(r) == len(s.columns) for r in s.rows)
    assert s.paper and s.setup, "the paper's numbers and the setup differences are named"
    assert s.figure is not None and (rep.out_dir / s.figure).stat().st_size > 1000
    # Numbers, not placeholders: at least one finite number in every row.
    for r in s.rows:
        assert any(re.search(r"\d", c) for c in r[1:]), r
    return s


def test_report_and_files(everything: Reproduction) -> None:
    text = everything.report.read_text()
    for name in PAPERS:
        assert f"## {name}: " in text
    # The keys `sections=` selects by are the keys the sections report, in order.
    assert {p.name: tuple(s.key for s in p.sections) for p in everything.papers} == SECTION_KEYS
    assert "Paper:" in text and "Setup differences:" in text and "26.3%" in text
    assert (everything.out_dir / "data" / "salvage").is_dir()
    # Every section's figure is linked from the report.
    for p in everything.papers:
        for s in p.sections:
            if s.figure:
                assert f"]({s.figure})" in text


def test_zombienand_tables(everything: Reproduction) -> None:
    s = _check_section(everything, "zombienand", "fig3", 2 * 2)  # 2 modes x 2 reserves (smoke)
    ratios = [d["ratio"] for d in s.data]
    assert len(ratios) == 2 * 2 * 2 and all(r >= 0.99 for r in ratios)
    # The latency half: each drive's mean over its whole life, timed (never 0 or missing).
    assert all(math.isfinite(d["latency_ratio"]) and d["latency_ratio"] > 0.5 for d in s.data)
    s = _check_section(everything, "zombienand", "pool", 2)  # TLC 7% and 30% reserve, whole drive
    assert all(d["off_min"] >= 0.99 for d in s.data), "without the pool, never below the baseline"
    assert all(d["on_min"] > 0 for d in s.data)
    if (TRACES / "umass/Financial1-first10k.ascii").is_file():
        s = _check_section(everything, "zombienand", "fig5", 1)  # Fin1, TLC, 30% reserve
        assert s.data[0]["ratio"] > 0
        s = _check_section(everything, "zombienand", "fig6", 1)  # the same runs over their lives
        assert math.isfinite(s.data[0]["while_baseline_lives"])


def test_zombienand_life_axis() -> None:
    """Figure 6's axis: the baseline's death is 100, the zombie drive's 200, linear between
    and before; each interval carries the requests it completed (its weight)."""
    import pandas as pd

    from flashlife.reproduce.zombienand import _life_axis, _weighted_mean

    ts = pd.DataFrame(
        {
            "time_s": [1.0, 2.0, 4.0, 5.0],
            "host_bytes_written": [25.0, 50.0, 100.0, 300.0],
            "mean_latency_us": [10.0, 20.0, 30.0, 40.0],
            "iops": [100.0, 100.0, 50.0, 0.0],
        }
    )
    z = _life_axis(ts, base_bytes=100.0, own_bytes=300.0)
    assert list(z["life"]) == [25.0, 50.0, 100.0]  # the idle last interval carries no request
    assert list(z["requests"]) == [100.0, 100.0, 100.0]
    assert _weighted_mean(z) == 20.0
    ts.loc[3, "iops"] = 100.0
    assert list(_life_axis(ts, 100.0, 300.0)["life"]) == [25.0, 50.0, 100.0, 200.0]
    # A drive that did not outlive the baseline stays on 0-100.
    assert _life_axis(ts, 300.0, 300.0)["life"].max() == 100.0


def test_zombienand_figure6_draws_one_point_per_unit_of_life() -> None:
    """Figure 6 as the paper draws it, a 200-point axis: the intervals within one unit of life
    become one point, their latencies weighted by their requests; the death at 200 falls in
    the last unit."""
    import pandas as pd

    from flashlife.reproduce.zombienand import _per_point

    ts = pd.DataFrame(
        {
            "life": [0.2, 0.7, 1.5, 199.4, 200.0],
            "mean_latency_us": [10.0, 30.0, 7.0, 1.0, 3.0],
            "requests": [1.0, 3.0, 5.0, 1.0, 1.0],
        }
    )
    p = _per_point(ts)
    assert list(p["life"]) == [0.5, 1.5, 199.5]
    assert list(p["mean_latency_us"]) == [25.0, 7.0, 2.0]  # (10 + 90) / 4, alone, (1 + 3) / 2


def test_reusable_tables(everything: Reproduction) -> None:
    # Smoke: zipf(2) and tpcc (when the traces are there) at op 28%, DiskSim's foreground GC.
    has_tpcc = (TRACES / "mqsim/tpcc-small.trace").is_file()
    s = _check_section(everything, "reusable", "fig7_8", 1 + has_tpcc)
    assert 0 < s.data[0]["rel_erasures"] < 1  # fewer erasures: the technique at work
    assert all(d["gc_mode"] == "foreground" for d in s.data)
    assert all(0 < d["second_write_share"] < 1 for d in s.data), s.data
    if has_tpcc:
        (caption, columns, rows), *_ = s.extra
        assert caption.startswith("Trace drives sized") and rows[0][1] == "tpcc"
        # Its drive holds its footprint, to rounding: the trace fills it, so both drives clean.
        assert 1.0 <= float(rows[0][-1]) < 1.02, rows
        tpcc = s.data[1]
        assert tpcc["workload"] == "tpcc" and tpcc["wa_std"] > 1.05, tpcc
    else:
        assert any("Skipped" in n for n in s.notes)
    s = _check_section(everything, "reusable", "ablations", 3)  # design, no prefetch, sequential
    design, no_prefetch, sequential = (d["rel_response"] for d in s.data)
    # The paper's two design choices each pay: without them a second write waits for its read,
    # or its two halves run one after the other.
    assert no_prefetch > design and sequential > design


def test_salvage_tables(everything: Reproduction) -> None:
    s = _check_section(everything, "salvage", "fig4", 2)  # two RBERs, synthetic mix (smoke)
    lo, hi = s.data
    assert lo["rber"] < hi["rber"] and hi["bb_base"] > lo["bb_base"]
    assert 0 < hi["expected_bad_block_ratio"] < 0.05
    # Saturated (QD32, closed loop) over seeds (smoke: 3e-11, seeds 1-2): the spread is given,
    # and by Little's law the throughput ratio is the reciprocal of the mean-latency ratio.
    s = _check_section(everything, "salvage", "fig4_qd32", 1)
    (d,) = s.data
    assert d["seeds"] == 2 and len(d["per_seed_latency"]) == 2 and d["latency_sd"] >= 0
    assert d["throughput"] == pytest.approx(1 / d["latency"], rel=0.03)
    assert d["bb_base"] > 0, "3e-11 fails blocks"
    # The soft-window headline needs a larger drive than the smoke one: skipped, and said so.
    assert "smoke" in (everything.section("salvage", "fig4_qd32_soft").skipped or "")


def test_salvage_approximated_workloads(everything: Reproduction) -> None:
    """The paper's four workloads approximated from published statistics (the package's TOMLs),
    closed loop at QD32, RBER 1e-12 and 3e-11, seeds 1-2 (smoke)."""
    s = _check_section(everything, "salvage", "fig4_approx", 4 * 2)
    by = {(d["workload"], d["rber"]): d for d in s.data}
    assert {w for w, _ in by} == {"alibaba", "exchange", "msnfs", "vdi"}
    assert all(d["seeds"] == 2 and d["arrivals"] == "closed" for d in s.data)
    assert any("approximated from published statistics" in t for t in [s.title, *s.setup])
    for w in ("alibaba", "exchange", "msnfs", "vdi"):
        lo, hi = by[(w, 1e-12)], by[(w, 3e-11)]
        # The bad-block share rises with the RBER, on both drives.
        assert hi["bb_base"] > lo["bb_base"] and hi["bb_salvage"] > lo["bb_salvage"], w
        # With (almost) nothing to salvage the two policies agree within the seeds' spread.
        for k in ("latency", "throughput", "wa"):
            assert abs(lo[k] - 1) <= 3 * lo[f"{k}_sd"] + 0.01, (w, k, lo[k], lo[f"{k}_sd"])
    # Where blocks fail, salvage keeps their pages: less write amplification and fewer valid
    # pages per GC victim than retiring them, over the four.
    at = [by[(w, 3e-11)] for w in ("alibaba", "exchange", "msnfs", "vdi")]
    assert sum(d["wa"] for d in at) / 4 < 1.0
    assert sum(d["vpv_salvage"] for d in at) < sum(d["vpv_base"] for d in at)


def test_salvage_approximated_workload_files() -> None:
    """The shipped definitions load, name their arrival rate (a quarter of what the drive
    sustains, docs/techniques/salvage.md), and an unknown name is refused."""
    from flashlife.reproduce.salvage_approx import WORKLOADS, _mean_rate, approximated_workload

    rates = {w: _mean_rate(approximated_workload(w)) for w, _ in WORKLOADS}
    assert rates == pytest.approx({"alibaba": 67.5, "exchange": 153.5, "msnfs": 114.8, "vdi": 15.1}, rel=1e-3)
    with pytest.raises(ValueError, match="not one of alibaba"):
        approximated_workload("nfs")


def test_ftpassd_tables(everything: Reproduction) -> None:
    s = _check_section(everything, "ftpassd", "memory", 4)
    block_map, shift, both, page_map = s.data
    # The paper's drive: 8192 blocks of 1536 pages; 64 reserved blocks are not mapped.
    assert (block_map["bits"], shift["bits"], page_map["bits"]) == (13, 11, 24)
    assert both["bytes"] == block_map["bytes"] + shift["bytes"] == 8128 * 24 // 8
    assert page_map["bytes"] == page_map["entries"] * 24 // 8
    _check_section(everything, "ftpassd", "fig14", 2 * 2 * 3)  # workloads x buffers x policies
    s = _check_section(everything, "ftpassd", "fig14_pblk", 2 * 2 * 3)
    mean = {(d["workload"], d["buffer_kib"], d["policy"]): d["mean_ms"] for d in s.data}
    # The pblk-like path (a command on one chip): partial writes gain with the buffer, OCSSD
    # does not move; sequential writes keep the chip busy and gain little (Figure 14(a), (b)).
    p, q = "partial 1 MiB", "sequential 16 MiB"
    assert mean[(p, 2048, "ft_passd")] < 0.5 * mean[(p, 256, "ft_passd")]
    assert mean[(p, 256, "ocssd")] == pytest.approx(mean[(p, 2048, "ocssd")], rel=0.01)
    for b in (256, 2048):
        assert 0.8 * mean[(q, b, "ocssd")] < mean[(q, b, "ft_passd")] <= mean[(q, b, "ocssd")]
    # The minimum write unit: one page (16 KiB) is the default path, Figure 14's runs to the
    # digit; a write-back device is never slower than write-through, whatever the unit.
    s = _check_section(everything, "ftpassd", "fig14_unit", 2 * 2 * 2)  # workloads x units x buffers
    fig14 = {
        (d["workload"], d["buffer_kib"], d["policy"]): d["mean_ms"]
        for d in everything.section("ftpassd", "fig14").data
    }
    assert {d["unit_kib"] for d in s.data} == {16, 128}
    for d in s.data:
        if d["unit_kib"] == 16:
            assert d["ocssd_ms"] == fig14[(d["workload"], d["buffer_kib"], "ocssd")]
            assert d["ft_passd_ms"] == fig14[(d["workload"], d["buffer_kib"], "ft_passd")]
        assert d["ft_passd_ms"] <= d["ocssd_ms"], d
    _check_section(everything, "ftpassd", "fig13", 2 * 2 + 1)  # policies x buffers + copy time
    if (TRACES / "msr/wdev_1.csv").is_file():
        s = _check_section(everything, "ftpassd", "fig15", 3)
        assert all(math.isfinite(d["mean_vs_ocssd"]) for d in s.data)
        # Figure 16 from Figure 15's runs: the same page fails under every policy; w/o shift
        # copies exactly the pages before it, one 1.5 ms program each, before the retry's own
        # program; with shift the retry is one program (paper: within 10 ms).
        (d,) = _check_section(everything, "ftpassd", "fig16", 1).data
        offsets = set(d["failed_page"].values())
        assert len(offsets) == 1 and d["copied_pages"] == offsets.pop()
        assert d["retry_no_shift_ms"] >= 1.5 * (d["copied_pages"] + 1)
        assert 1.5 <= d["retry_shift_ms"] < 10
        assert all(0 < u <= 1 for u in d["use"].values())
    if (TRACES / "msr/hm_0-window.csv").is_file():
        # hm_0 at queue depth 32, recorded and 100x faster: FT-PASSD's cut shrinks as the load
        # grows (the paper: a busy drive gains least), and only w/o shift loses to OCSSD there.
        s = _check_section(everything, "ftpassd", "load", 2)
        rec, fast = sorted(s.data, key=lambda d: -d["time_scale"])
        assert (rec["time_scale"], fast["time_scale"], rec["queue_depth"]) == (1.0, 0.01, 32)
        assert rec["ft_passd_mean_vs_ocssd"] < fast["ft_passd_mean_vs_ocssd"] < 0
        assert fast["ft_passd_no_shift_mean_vs_ocssd"] > fast["ft_passd_mean_vs_ocssd"]
        assert [len(rows) for _, _, rows in s.extra] == [2]
        # Host waits for migration copies, counted one by one under either scheduler: a wait
        # is at most one copy (read 100 us + program 1.5 ms + two 16 KiB transfers, 1.67 ms).
        for d in s.data:
            assert (d["migration_waits"] > 0) == (d["max_migration_wait_ms"] > 0), d
            assert d["max_migration_wait_ms"] <= 1.67, d


def test_readrelax_tables(everything: Reproduction) -> None:
    s = _check_section(everything, "readrelax", "longterm", 4)
    assert {d["policy"] for d in s.data} == {"none", "retry_only", "read_count", "error_based"}
    by = {d["policy"]: d for d in s.data}
    # Retry-only firmware keeps its long reads (smoke: 45 days, before its last resort).
    assert by["retry_only"]["reclaim_erases"] == 0 and by["none"]["reclaim_erases"] == 0
    assert by["error_based"]["rewrites"] > 1
    s = _check_section(everything, "readrelax", "hints", 4)  # file server only (smoke: 10 days)
    agg, none, h400, h250 = s.data
    assert agg["policy"].startswith("aggressive") and agg["reclaim_erases"] > 50, "reclaim is exercised"
    assert none["reclaim_erases"] == 0 and none["spent_lifetime"] == 0
    # The trend: a larger budget spends less lifetime. 250 us allows no retry once the request's
    # host transfer is counted (2 attempts of 111 us + 29 us = 251 us): that hint is aggressive.
    assert h400["reclaim_erases"] < h250["reclaim_erases"] == agg["reclaim_erases"]
    assert h400["spent_lifetime"] < agg["spent_lifetime"]
    # ... at a small read-latency cost (the paper: 2%), every read carrying the hint command's budget.
    for h in (h400, h250):
        assert h["read_mean_vs_aggressive"] < 0.03 and h["hinted_share"] == 1.0
    assert all(d["uncorrectable"] == 0 for d in s.data)
    # The smoke scale sub-samples the hint sections (1 read for 20) and says so in their titles.
    assert all(d["sampling"] == 20 for d in s.data) and "sub-sampled, 1 simulated for 20" in s.title
    # The trade-off curve: a larger budget never rewrites more (smoke: 100, 400, 1000 us).
    s = _check_section(everything, "readrelax", "budget_sweep", 4)  # aggressive + three budgets
    erases = [d["reclaim_erases"] for d in s.data]
    assert [d["budget_us"] for d in s.data] == [100, 400, 1000]
    assert erases == sorted(erases, reverse=True) and erases[-1] < erases[0]
    assert "sub-sampled" in s.title
    for d in s.data:
        # The promise, measured: at every budget the hinted reads exceed it no more often than the
        # aggressive drive's reads exceed the same threshold (100 us: no read can meet it, one
        # attempt takes 111 us, so both are 100%).
        assert d["over_budget_share"] <= d["aggressive_over_budget_share"], d
        assert d["aggressive_reclaim_erases"] == s.data[0]["aggressive_reclaim_erases"]
    assert s.data[0]["over_budget_share"] == s.data[0]["aggressive_over_budget_share"] == 1.0
    # At 400 us the aggressive drive's reads over the budget are its long reads (same run).
    at400 = next(d for d in s.data if d["budget_us"] == 400)
    assert at400["aggressive_over_budget_share"] == at400["aggressive_long_read_share"]
    assert 0 < at400["over_budget_share"] < 0.001
    # Sub-sampling checked against simulating every read (smoke: 1 day of the file server).
    s = _check_section(everything, "readrelax", "sampling_check", 3)
    for d in s.data:
        assert d["reads_full"] == pytest.approx(20 * d["reads_sampled"], rel=0.02)
        if d["policy"].startswith("aggressive") or d["policy"].endswith("page time"):
            # No queue in the decision: sub-sampling keeps the wear (page-level hints measured
            # 5 / 5 at 5 days, experiments/readrelax/sampling_cause.py).
            assert abs(d["erases_sampled"] - d["erases_full"]) <= max(3, 0.3 * d["erases_full"])
        else:
            # Request-level hints count the dies' queue, longer when every read is simulated
            # (20 times the arrivals): the full run allows fewer retries and reclaims more.
            assert d["erases_sampled"] <= d["erases_full"]
        assert d["read_mean_sampled"] == pytest.approx(d["read_mean_full"], rel=0.02)
    if (TRACES / "mqsim/wsrch-small.trace").is_file():
        # Per-request budgets from a real trace (smoke: 2 days).
        s = _check_section(everything, "readrelax", "hints_trace", 4)
        agg, none, h400, half = s.data
        assert agg["reclaim_erases"] > 100
        # The promise kept: hinted reads are long no more often than under aggressive reclaim (at
        # 400 us the trace's two-page requests allow no retry, so the hints save little or nothing).
        assert h400["reclaim_erases"] <= agg["reclaim_erases"] and h400["hinted_share"] == 1.0
        assert h400["long_read_share"] <= agg["long_read_share"]
        assert 0.45 < half["hinted_share"] < 0.55 and half["reclaim_erases"] <= agg["reclaim_erases"]
        # Without reclaim the disturbed blocks make reads slow.
        assert none["reclaim_erases"] == 0 and none["long_read_share"] > 10 * agg["long_read_share"]
        assert none["read_mean_us"] > agg["read_mean_us"]


def test_readrelax_hinted_trace(tmp_path: Path) -> None:
    """Each rule puts a budget on the reads it names, none on writes."""
    from flashlife.reproduce.readrelax import hinted_trace

    src = tmp_path / "t.trace"
    # time_ns device lba sectors read: three reads (LBAs 0, 8, 1024) and a write.
    src.write_text("0 0 0 8 1\n10 0 8 8 1\n20 0 16 8 0\n30 0 1024 8 1\n")
    logical = 1024 * 512  # the first half: LBAs below 512

    def budgets(rule: str) -> list[str]:
        out = hinted_trace(src, rule, tmp_path / f"{rule}.csv", logical).read_text().splitlines()
        assert out[0] == "time_ns,op,offset,size,stream,budget_us"
        return [line.rsplit(",", 1)[1] for line in out[1:]]

    assert budgets("none") == ["", "", "", ""]
    assert budgets("all250") == ["250", "250", "", "250"]
    assert budgets("half400") == ["400", "", "", "400"]
    assert budgets("space400") == ["400", "400", "", "400"]  # LBA 1024 folds onto 0


def test_cli_writes_refuses_and_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ft"
    empty = tmp_path / "no-traces"
    empty.mkdir()
    args = ["reproduce", "ftpassd", "--scale", "smoke", "--out", str(out), "--traces", str(empty), "-q"]
    assert main(args) == 0
    report = (out / "report.md").read_text()
    assert (out / "figures" / "ftpassd_fig14.png").is_file()
    assert "| partial 1 MiB | 256 KiB | OCSSD |" in report
    # No traces: the trace figure is skipped with a message, the rest ran.
    assert "**Skipped:** no trace found under" in report
    assert "skipped (no traces): ftpassd/fig15" in capsys.readouterr().out
    # A second run into the same folder is refused, and nothing changes.
    before = (out / "report.md").stat().st_mtime_ns
    assert main(args) == 2
    assert "is not empty" in capsys.readouterr().err
    assert (out / "report.md").stat().st_mtime_ns == before
    with pytest.raises(flashlife.FlashlifeError, match="--overwrite"):
        flashlife.reproduce("ftpassd", scale="smoke", out_dir=out, traces=empty)
    # --overwrite replaces our outputs and leaves other files alone.
    (out / "notes.txt").write_text("mine")
    assert main([*args, "--overwrite"]) == 0
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "report.md").stat().st_mtime_ns != before


def test_cli_resume_reads_back_saved_points(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--resume` goes on with an interrupted reproduction: saved sweep points are read back, not
    run again, the missing ones run, and the report says how many of each."""
    out = tmp_path / "ft"
    empty = tmp_path / "no-traces"
    empty.mkdir()
    args = ["reproduce", "ftpassd", "--scale", "smoke", "--out", str(out), "--traces", str(empty), "-q"]
    assert main(args) == 0
    points = sorted(p for p in (out / "data").glob("*/*/points/*.json") if not p.name.endswith(".error.json"))
    assert len(points) >= 4, points
    # As if the run had been stopped before its last point: that point's files are missing.
    lost = points[-1]
    for f in lost.parent.glob(lost.stem + ".*"):
        f.unlink()
    kept = {p: p.stat().st_mtime_ns for p in points[:-1]}
    # Without --resume the folder is refused; with it and --overwrite too, as well.
    assert main(args) == 2
    assert "--resume" in capsys.readouterr().err
    assert main([*args, "--resume", "--overwrite"]) == 2
    capsys.readouterr()
    assert main([*args, "--resume"]) == 0
    report = (out / "report.md").read_text()
    assert f"Resumed: {len(points) - 1} sweep points were read back" in report and " and 1 run now" in report
    assert lost.is_file(), "the missing point ran again"
    assert {p: p.stat().st_mtime_ns for p in kept} == kept, "saved points are read, not rewritten"
    # Nothing to resume where no reproduction ran.
    fresh = ["reproduce", "ftpassd", "--scale", "smoke", "--out", str(tmp_path / "new"), "--resume", "-q"]
    assert main(fresh) == 2
    assert "nothing to resume" in capsys.readouterr().err


def _schedulers(out: Path) -> dict[str, int]:
    """`provenance.scheduler` (the resolved `timing.scheduler`) of every saved point, counted."""
    seen: dict[str, int] = {}
    for f in (out / "data").glob("*/*/points/*.json"):
        if f.name.endswith(".error.json"):
            continue
        name = json.loads(f.read_text())["row"]["provenance.scheduler"]
        seen[name] = seen.get(name, 0) + 1
    return seen


def test_default_scheduler_is_reservation(everything: Reproduction) -> None:
    assert everything.scheduler == "reservation"
    assert "scheduler `reservation`" in everything.report.read_text()
    assert set(_schedulers(everything.out_dir)) == {"reservation"}


def test_cli_queued_scheduler(tmp_path: Path) -> None:
    out = tmp_path / "q"
    empty = tmp_path / "no-traces"
    empty.mkdir()
    args = ["reproduce", "ftpassd", "--scale", "smoke", "--out", str(out), "--traces", str(empty), "-q"]
    assert main([*args, "--scheduler", "queued"]) == 0
    report = (out / "report.md").read_text()
    assert "scheduler `queued`" in report and "scheduler `reservation`" not in report
    # Every run of every sweep (both FT-PASSD sections) resolved timing.scheduler = "queued".
    seen = _schedulers(out)
    assert set(seen) == {"queued"} and seen["queued"] >= 2 * 2 * 3 + 2 * 2, seen
    sweeps = {p.name for p in (out / "data" / "ftpassd").iterdir()}
    assert "fig14" in sweeps and any(n.startswith("fig13") for n in sweeps), sweeps
    assert all(any((out / "data" / "ftpassd" / n / "points").glob("*.json")) for n in sweeps)


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="paper must be one of"):
        flashlife.reproduce("nope", out_dir=tmp_path / "x")
    with pytest.raises(ValueError, match="scale must be one of"):
        flashlife.reproduce("salvage", scale="huge", out_dir=tmp_path / "x")
    with pytest.raises(ValueError, match="scheduler must be one of"):
        flashlife.reproduce("salvage", scheduler="fifo", out_dir=tmp_path / "x")
    with pytest.raises(ValueError, match=r"sections must be among .*fig4_qd32.* not 'fig13'"):
        flashlife.reproduce("salvage", sections=["fig13"], out_dir=tmp_path / "x")
    with pytest.raises(ValueError, match="read_sampling must be a number >= 1"):
        flashlife.reproduce("readrelax", read_sampling=0.5, out_dir=tmp_path / "x")
    assert not (tmp_path / "x").exists()
    assert main(["reproduce", "salvage", "--sections", "fig5", "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()


def test_cli_sections(tmp_path: Path) -> None:
    """`--sections` runs only the sections named; the report holds only those."""
    out = tmp_path / "mem"
    args = ["reproduce", "ftpassd", "--scale", "smoke", "--sections", "memory", "--out", str(out), "-q"]
    assert main(args) == 0
    report = (out / "report.md").read_text()
    assert report.count("\n### ") == 1 and "Figure 14" not in report
    assert not (out / "data" / "ftpassd" / "fig14").exists()


def test_a_sweep_runs_what_run_runs_under_the_reproductions_scheduler(tmp_path: Path) -> None:
    """A section's sweep and a `run` with the same arguments are the same simulation: the sweep's
    base is resolved with the reproduction's scheduler, not the simulator's default (which
    brought queued's `ftl.allocation` into reservation sweeps until 2026-11-28)."""
    from flashlife.reproduce._common import Context

    ctx = Context("salvage", "smoke", tmp_path, tmp_path, 1, lambda _m: None, "reservation")
    over = {"geometry.blocks_per_plane": 64, "ftl.precondition_drive_writes": 0.2, "run.progress": "off"}
    df = ctx.sweep(
        "t", "salvage-small", grid={"host.queue_depth": [32]}, until="requests:3000", overrides=over
    )
    one = ctx.run("salvage-small", until="requests:3000", seed=1, overrides={**over, "host.queue_depth": 32})
    assert one.config["ftl"]["allocation"] == "rotation"
    assert df["latency_us.all.mean"].iloc[0] == one.summary["latency_us"]["all"]["mean"]
