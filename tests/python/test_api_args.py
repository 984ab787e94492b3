"""Argument handling of flashlife.run / resolve_config / load_grid: careless or hostile values
are refused with a message naming the key, never turned silently into something else."""

from __future__ import annotations

import os

import numpy as np
import pytest

import flashlife
from flashlife.api import _layers, overrides_from
from flashlife.sweep import load_grid


def test_none_is_refused_naming_the_key():
    with pytest.raises(
        ValueError, match=r"overrides: gc\.victim is None; TOML has no null: leave the key out"
    ):
        flashlife.resolve_config("tiny", overrides={"gc": {"victim": None}})
    with pytest.raises(ValueError, match=r"config: gc\.victim is None"):
        flashlife.resolve_config({"gc.victim": None})
    with pytest.raises(ValueError, match=r"workload: workload\.read_ratio is None"):
        flashlife.run("tiny", {"read_ratio": None}, until="requests:10")
    with pytest.raises(ValueError, match=r"overrides: workload\.sizes is None"):
        flashlife.resolve_config("tiny", overrides={"workload.sizes": [4096, None]})


def test_numpy_values_in_run_dicts():
    r = flashlife.run(
        "tiny",
        {"read_ratio": np.float32(0.5)},
        until="requests:2000",
        overrides={
            "wear_leveling.threshold": np.int64(9),
            "capacity.overprovisioning": np.float64(0.25),
            "ftl.timing": np.bool_(False),
            "workload.sizes": np.array([4096, 8192]),
            "workload.size_weights": np.array([1.0, 1.0]),
        },
    )
    assert r.config["wear_leveling"]["threshold"] == 9
    assert r.config["ftl"]["timing"] is False
    assert r.config["workload"]["sizes"] == [4096, 8192]
    assert r.summary["host"]["read_requests"] > 0


def test_other_value_types_are_refused_naming_the_key():
    with pytest.raises(TypeError, match=r"overrides: gc\.victim = .*object.*expected a string, number"):
        flashlife.resolve_config("tiny", overrides={"gc.victim": object()})
    with pytest.raises(ValueError, match=r"overrides: capacity\.overprovisioning = nan: not a finite number"):
        flashlife.resolve_config("tiny", overrides={"capacity.overprovisioning": float("nan")})


def test_array_of_tables_as_inline_tables():
    mix = [{"kind": "uniform", "weight": 0.25}, {"kind": "zipf", "weight": 0.75}]
    cfg = flashlife.resolve_config("tiny", {"kind": "mix", "mix": mix})
    assert [(m["kind"], m["weight"]) for m in cfg["workload"]["mix"]] == [("uniform", 0.25), ("zipf", 0.75)]


def test_strings_survive_quotes_escapes_and_astral_characters():
    # A value with quotes, a backslash, a newline and a character outside the BMP stays one
    # value (JSON would write a surrogate pair TOML refuses); the core then rejects it by name.
    with pytest.raises(flashlife.FlashlifeError, match="gc.victim"):
        flashlife.resolve_config("tiny", overrides={"gc.victim": 'fi"fo\\\n😀'})


@pytest.mark.parametrize(
    "seed, error, message",
    [
        (1.9, ValueError, r"seed: 1\.9 is not an integer"),
        (float("nan"), ValueError, "seed: nan is not an integer"),
        (True, TypeError, "seed: True is a boolean"),
        (np.bool_(True), TypeError, "is a boolean"),
        ("3", TypeError, r"seed: '3' \(str\) is not an integer"),
        (-1, ValueError, r"seed: -1 is out of range; expected an integer in 0\.\.2\*\*63-1"),
        (2**63, ValueError, "out of range"),
    ],
)
def test_bad_seeds_are_refused(seed, error, message):
    with pytest.raises(error, match=message):
        flashlife.resolve_config("tiny", seed=seed)


def test_numpy_and_integral_float_seeds():
    assert flashlife.resolve_config("tiny", seed=np.int64(7))["seed"] == 7
    assert flashlife.resolve_config("tiny", seed=np.uint64(2**63 - 1))["seed"] == 2**63 - 1
    assert flashlife.resolve_config("tiny", seed=3.0)["seed"] == 3
    # sweep validates its seeds the same way.
    with pytest.raises(ValueError, match=r"seed: 1\.5 is not an integer"):
        flashlife.sweep("tiny", {"gc.victim": ["greedy"]}, seeds=[1.5], until="requests:10")


def test_string_overrides_are_refused():
    with pytest.raises(
        TypeError, match="overrides takes a mapping or a list of 'key=value' strings, not a str"
    ):
        flashlife.run("tiny", overrides="gc.victim=fifo")
    with pytest.raises(TypeError, match=r"overrides: 3 \(int\) is not a 'key=value' string"):
        flashlife.resolve_config("tiny", overrides=["gc.victim=fifo", 3])


def test_override_with_a_line_break_is_refused():
    with pytest.raises(ValueError, match=r"overrides: 'gc\.victim=fifo\\nseed=3' holds a line break"):
        flashlife.resolve_config("tiny", overrides=["gc.victim=fifo\nseed=3"])
    with pytest.raises(ValueError, match="holds a line break"):
        flashlife.run("tiny", overrides=["seed=3\r"])


def test_keys_that_would_set_another_key_are_refused():
    with pytest.raises(ValueError, match=r"key 'gc\.victim=fifo' is not a configuration key"):
        overrides_from({"gc": {"victim=fifo": "x"}})
    with pytest.raises(ValueError, match="not a configuration key"):
        overrides_from({"gc\nseed": 3})


def test_deeply_nested_mapping_is_a_value_error():
    deep: dict = {}
    cur = deep
    for _ in range(5000):
        cur["a"] = {}
        cur = cur["a"]
    with pytest.raises(ValueError, match="nested more than 64 tables deep"):
        _layers(deep, None, None, None, None)
    with pytest.raises(ValueError, match="nested more than"):
        flashlife.sweep("tiny", deep, until="requests:10")
    nested: list = []
    for _ in range(5000):
        nested = [nested]
    with pytest.raises(ValueError, match="nested more than 64 arrays deep"):
        overrides_from({"workload.sizes": nested})


def test_deeply_nested_grid_file_is_a_value_error(tmp_path):
    cases = {
        "tables": 'base = "tiny"\n[grid' + ".a" * 10_000 + "]\nx = [1]\n",
        "arrays": 'base = "tiny"\n[grid]\nx = ' + "[" * 10_000 + "]" * 10_000 + "\n",
        "inline": 'base = "tiny"\ngrid = ' + "{a = " * 5000 + "1" + "}" * 5000 + "\n",
    }
    for name, text in cases.items():
        path = tmp_path / f"{name}.toml"
        path.write_text(text)
        with pytest.raises(ValueError, match=rf"{path.name}: nested too deeply"):
            load_grid(path)
    bad = tmp_path / "bad.toml"
    bad.write_text('base = "tiny"\n[grid\n')
    with pytest.raises(ValueError, match=r"bad\.toml: .*line 2"):
        load_grid(bad)


def test_relative_trace_path_is_made_absolute(tmp_path, monkeypatch):
    trace = tmp_path / "t.csv"
    trace.write_text("".join(f"{128166372003061629 + i},h,0,Write,{4096 * i},4096,1\n" for i in range(50)))
    monkeypatch.chdir(tmp_path)
    cfg = flashlife.resolve_config("tiny", "t.csv")
    assert cfg["workload"]["trace"]["path"] == str(trace)
    r = flashlife.run("tiny", "t.csv", until="end", out_dir="run")
    assert r.config["workload"]["trace"]["path"] == str(trace)
    assert r.summary["host"]["write_requests"] == 50
    # The written configuration still runs from another directory.
    monkeypatch.chdir(os.path.dirname(tmp_path))
    again = flashlife.run(str(tmp_path / "run" / "config.toml"), until="end")
    assert again.summary["host"]["write_requests"] == 50
