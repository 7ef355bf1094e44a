"""The fast solver-score writer: byte-identical to ``dumps_json`` of the per-instance dicts."""

from __future__ import annotations

import math

import numpy as np
import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from benchscore.common.atomic import dumps_json
from benchscore.tcsexam.records import STATUS_NAMES
from benchscore.tcsexam.scoring import InstanceColumns, SolverScore, dumps_solver_output

NASTY_NAMES = ['g"1', "a\\", "\\", '","', '"', "é", "\u2028", "\x01", "\n", "x:y", "\U0001f600", ":"]
any_float = st.floats(allow_nan=True, allow_infinity=True, width=64)
names_st = st.one_of(st.sampled_from(NASTY_NAMES), st.text(min_size=1, max_size=8))


def summary(task: str = "t", unscored=()) -> dict:
    return {
        "task": task,
        "kind": "objective",
        "direction": "maximize",
        "relative_score": 0.25,
        "scored_instance_count": 2,
        "instances": None,
        "unscored_instances": list(unscored),
        "reference_id": "ref",
        "reference_sha256": "0" * 64,
        "provenance": {"metric_id": "fixed_reference_relative", "inputs": {"records": {"name": "r.json"}}},
    }


@st.composite
def columns(draw) -> InstanceColumns:
    names = draw(st.lists(names_st, min_size=1, max_size=12, unique=True))
    n = len(names)

    def col():
        return np.array(draw(st.lists(any_float, min_size=n, max_size=n)), dtype=float)

    codes = np.array(
        draw(st.lists(st.integers(0, len(STATUS_NAMES) - 1), min_size=n, max_size=n)), dtype=np.int8
    )
    return InstanceColumns(names, col(), col(), col(), col(), col(), codes)


@settings(max_examples=300, deadline=None)
@given(columns(), names_st, st.lists(names_st, max_size=3))
def test_fast_writer_bytes_equal_the_dict_path(inst, task, unscored):
    result = SolverScore(summary(task, unscored), inst)
    assert result.to_json() == dumps_json(result.to_dict())


def test_fast_writer_keeps_the_reference_order_of_keys_and_values():
    inst = InstanceColumns(
        ["g1", "g2"],
        np.array([0.5, 0.0]),
        np.array([12.0, np.nan]),
        np.array([12.0, 5.75]),
        np.array([2.0, 0.115]),
        np.array([0.0, np.nan]),
        np.array([0, STATUS_NAMES.index("timeout")], dtype=np.int8),
    )
    out = orjson.loads(dumps_solver_output(summary(), inst))
    assert list(out) == list(summary())
    assert out["instances"] == {
        "g1": {"score": 0.5, "A": 12.0, "mu": 12.0, "scale": 2.0, "z": 0.0, "status": "ok"},
        "g2": {"score": 0.0, "A": None, "mu": 5.75, "scale": 0.115, "z": None, "status": "timeout"},
    }


def test_empty_instances_are_an_empty_map():
    empty = np.zeros(0)
    inst = InstanceColumns([], empty, empty, empty, empty, empty, np.zeros(0, dtype=np.int8))
    result = SolverScore(summary(), inst)
    assert result.to_json() == dumps_json(result.to_dict())


@settings(max_examples=500, deadline=None)
@given(st.lists(any_float, min_size=1, max_size=20))
def test_orjson_writes_numpy_float64_like_a_python_float(values):
    """The writer relies on this: an array's text equals the list's text, NaN/inf as null."""
    arr = np.array(values, dtype=np.float64)
    as_numpy = orjson.dumps(arr, option=orjson.OPT_SERIALIZE_NUMPY)
    as_python = orjson.dumps([None if not math.isfinite(v) else v for v in values])
    assert as_numpy == as_python
    assert as_numpy == orjson.dumps(values)
