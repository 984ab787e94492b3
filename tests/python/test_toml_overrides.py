"""Dicts given to run / resolve_config / sweep reach the core as a TOML document written by
tomli-w: lists of tables, nested tables and strings of any content arrive exactly."""

from __future__ import annotations

import math
import random
import tomllib

import pytest

import flashlife
from flashlife.api import _layers, _toml_document, _toml_literal, _toml_value, overrides_from

MIX = [
    {"kind": "zipf", "weight": 0.8, "zipf": {"alpha": 2.0}, "sizes": [4096, 8192], "size_weights": [3, 1]},
    {"kind": "sequential", "weight": 0.2, "request_size": 131072},
]


def _same(a, b) -> bool:
    """Equal values of the same types all the way down (True is not 1, 1 is not 1.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return set(a) == set(b) and all(_same(a[k], b[k]) for k in a)  # TOML tables have no order
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


#: Quotes, backslashes, control characters, DEL, line separators, astral characters.
ALPHABET = ['"', "\\", "\n", "\r", "\t", "\x00", "\x1f", "\x7f", "\u2028", "é", "😀", "a", " ", "'", "="]
#: Table keys: bare, and ones TOML must quote.
KEYS = ["kind", "a b", "x.y", "é", "w"]


def _random_value(rng: random.Random, depth: int = 0):
    kinds = ["int", "float", "bool", "str"] + (["list", "tables"] if depth < 3 else [])
    kind = rng.choice(kinds)
    if kind == "int":
        return rng.choice([0, -1, 2**63 - 1, -(2**63), rng.randrange(-(10**12), 10**12)])
    if kind == "float":
        return rng.choice([0.1, -0.0, 1e300, 5e-324, 1.5e16, rng.uniform(-1e6, 1e6)])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "str":
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 12)))
    if kind == "list":
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(0, 40))]
    # A list of tables, whose values may be tables and lists of tables again.
    return [
        {rng.choice(KEYS) + str(i): _random_value(rng, depth + 1) for i in range(3)}
        for _ in range(rng.randrange(1, 4))
    ]


def test_random_values_round_trip_through_the_writer():
    rng = random.Random(20)
    for _ in range(400):
        value = _random_value(rng)
        doc = {"workload": {"mix": value}} if isinstance(value, list) else {"seed": value}
        assert _same(tomllib.loads(_toml_document(doc)), doc), doc
        assert _same(tomllib.loads(f"v = {_toml_literal(value)}")["v"], value), value
        assert "\n" not in _toml_literal(value)


def test_list_of_tables_in_every_kind_of_dict():
    for cfg in (
        flashlife.resolve_config({"workload": {"kind": "mix", "mix": MIX}}),
        flashlife.resolve_config("tiny", {"kind": "mix", "mix": MIX}),
        flashlife.resolve_config("tiny", overrides={"workload.kind": "mix", "workload.mix": MIX}),
        flashlife.resolve_config("tiny", overrides={"workload": {"kind": "mix", "mix": MIX}}),
    ):
        mix = cfg["workload"]["mix"]
        assert [(m["kind"], m["weight"]) for m in mix] == [("zipf", 0.8), ("sequential", 0.2)]
        assert mix[0]["zipf"]["alpha"] == 2.0 and mix[0]["sizes"] == [4096, 8192]
        assert mix[0]["size_weights"] == [3.0, 1.0] and mix[1]["request_size"] == 131072


def test_list_of_tables_runs():
    r = flashlife.run("tiny", {"kind": "mix", "mix": MIX}, until="requests:3000", seed=1)
    assert r.summary["host"]["write_requests"] == 3000
    assert [m["kind"] for m in r.config["workload"]["mix"]] == ["zipf", "sequential"]


def test_the_layer_is_a_toml_document_with_arrays_of_tables():
    layers = _layers("tiny", {"kind": "mix", "mix": MIX}, "requests:10", 3, {"gc.victim": "fifo"})
    assert layers["preset"] == "tiny" and layers["overrides"] == []
    doc = tomllib.loads(layers["toml_text"])
    assert doc == {
        "workload": {"kind": "mix", "mix": MIX},
        "run": {"until": "requests:10"},
        "seed": 3,
        "gc": {"victim": "fifo"},
    }
    # Strings stay `key=value` strings, read after the document.
    assert _layers(None, None, None, None, ["gc.victim=fifo"])["overrides"] == ["gc.victim=fifo"]
    assert _layers(None, None, None, None, None)["toml_text"] is None


def test_strings_of_any_content_reach_the_core_unchanged():
    rng = random.Random(7)
    alphabet = ['"', "\\", "\n", "\r", "\t", "\x01", "\x7f", "\u2028", "é", "😀", "a", "'", "=", "#", "]"]
    for _ in range(20):
        s = "".join(rng.choice(alphabet) for _ in range(16))
        cfg = flashlife.resolve_config("tiny", overrides={"workload.trace.path": s})
        assert cfg["workload"]["trace"]["path"] == s


def test_later_keys_win_in_the_order_given():
    cfg = flashlife.resolve_config("tiny", overrides={"gc": {"victim": "fifo"}, "gc.victim": "greedy"})
    assert cfg["gc"]["victim"] == "greedy"
    # A config dict, then the workload, then overrides: as separate `--set`s would.
    cfg = flashlife.resolve_config(
        {"workload.read_ratio": 0.1}, {"read_ratio": 0.2}, overrides={"workload.read_ratio": 0.3}
    )
    assert cfg["workload"]["read_ratio"] == 0.3
    # A list replaces the list before it, never merges with it.
    cfg = flashlife.resolve_config({"workload.mix": MIX}, overrides={"workload.mix": MIX[1:]})
    assert [m["kind"] for m in cfg["workload"]["mix"]] == ["sequential"]


def test_capacity_is_stated_one_way_the_last_one_given():
    cfg = flashlife.resolve_config({"capacity.reserve": 0.1}, overrides={"capacity.overprovisioning": 0.2})
    assert cfg["capacity"] == {"overprovisioning": 0.2}
    cfg = flashlife.resolve_config("tiny", overrides={"capacity": {"overprovisioning": 0.2, "reserve": 0.1}})
    assert cfg["capacity"] == {"reserve": 0.1}


def test_integers_beyond_64_bits_are_refused_not_turned_into_strings():
    # The core reads an assignment it cannot parse as a bare string; the writer refuses first.
    with pytest.raises(ValueError, match=r"overrides: host\.queue_depth = 9223372036854775808: out of range"):
        flashlife.resolve_config("tiny", overrides={"host.queue_depth": 2**63})
    with pytest.raises(ValueError, match=r"workload: workload\.sizes = -9223372036854775809"):
        flashlife.resolve_config("tiny", {"sizes": [-(2**63) - 1]})
    assert _toml_value(2**63 - 1) == 2**63 - 1


def test_key_value_strings_for_trace_options():
    assert overrides_from({"workload.trace": {"time_unit": "ms", "time_scale": 0.5}}) == [
        'workload.trace.time_unit="ms"',
        "workload.trace.time_scale=0.5",
    ]
    long = list(range(100))
    (assignment,) = overrides_from({"workload.sizes": long})
    assert "\n" not in assignment and tomllib.loads(f"v = {assignment.split('=', 1)[1]}")["v"] == long
