"""Checks a summary against `flashlife.summary.Summary`, recursively: the keys each TypedDict
declares (required and optional) and the JSON type of every value. Shared by the tests that
make the summaries (test_summary_types.py, and test_results_safety.py for `run.warnings`)."""

from __future__ import annotations

import types
import typing
from typing import Any

from flashlife.summary import Summary


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and typing.is_typeddict(tp)


def shape_errors(value: Any, tp: Any = Summary, path: str = "summary") -> list[str]:
    """Every place where `value` differs from the type `tp`; empty when it matches."""
    if _is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{path}: {type(value).__name__}, expected an object ({tp.__name__})"]
        required, optional = set(tp.__required_keys__), set(tp.__optional_keys__)
        errors = [f"{path}.{k}: missing (required by {tp.__name__})" for k in sorted(required - value.keys())]
        errors += [
            f"{path}.{k}: not declared in {tp.__name__}" for k in sorted(value.keys() - required - optional)
        ]
        hints = typing.get_type_hints(tp)  # NotRequired[...] stripped
        for k in sorted(value.keys() & hints.keys()):
            errors += shape_errors(value[k], hints[k], f"{path}.{k}")
        return errors
    if isinstance(tp, types.UnionType):  # X | None: null where the core's value is undefined
        args = typing.get_args(tp)
        if value is None:
            return [] if type(None) in args else [f"{path}: null, expected {tp}"]
        (inner,) = [a for a in args if a is not type(None)]
        return shape_errors(value, inner, path)
    if typing.get_origin(tp) is list:
        if not isinstance(value, list):
            return [f"{path}: {type(value).__name__}, expected a list"]
        (item,) = typing.get_args(tp)
        return [e for i, v in enumerate(value) for e in shape_errors(v, item, f"{path}[{i}]")]
    # JSON scalars: the core writes every float with a decimal point, so a float field never
    # reads back as an int; bool is an int subclass in Python and must not pass for one.
    if tp is int and (isinstance(value, bool) or not isinstance(value, int)):
        return [f"{path}: {value!r}, expected an integer"]
    if tp in (float, str, bool) and not isinstance(value, tp):
        return [f"{path}: {value!r}, expected {tp.__name__}"]
    if tp not in (int, float, str, bool):
        return [f"{path}: the check does not know the type {tp}"]
    return []
