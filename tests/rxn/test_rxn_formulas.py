"""Seed section 8 (effective and relative scores), section 9 spacing, the Denmark ee conversion."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchscore.rxn.formulas import (
    best_indices,
    denmark_ee,
    effective_score,
    relative_scores,
    spaced_positions,
)
from benchscore.rxn.parsers import parse_dr

yields = st.floats(min_value=0, max_value=100, allow_nan=False)
ees = st.floats(min_value=-100, max_value=100, allow_nan=False)
drs = st.floats(min_value=1, max_value=1e6, allow_nan=False)


def test_seed_effective_score_example():
    # seed section 8: dr parsed as major/minor, 20:1 -> 20; effective = yield x (100+ee)/200 x dr/(dr+1)
    dr = parse_dr("20:1")
    assert dr == 20
    assert effective_score(80.0, 90.0, dr) == pytest.approx(80 * 190 / 200 * 20 / 21)


def test_missing_ee_and_dr_are_one():
    assert effective_score(73.0) == 73.0
    assert effective_score(73.0, None, 4.0) == pytest.approx(73 * 0.8)
    assert effective_score(73.0, 50.0, None) == pytest.approx(73 * 0.75)


def test_no_yield_table_is_scored_on_selectivity():
    assert effective_score(None, 90.0) == pytest.approx(100 * 0.95)
    assert effective_score(None, -100.0) == 0.0


def test_relative_scores_and_ties():
    rel = relative_scores([10.0, 40.0, 40.0, 0.0])
    assert rel == [0.25, 1.0, 1.0, 0.0]
    assert best_indices(rel) == [1, 2]


def test_relative_scores_refuse_zero_best():
    with pytest.raises(ValueError):
        relative_scores([0.0, 0.0])


def test_denmark_worked_example():
    assert round(denmark_ee(3.1346), 1) == 99.0
    assert denmark_ee(0.0) == 0.0
    assert denmark_ee(-1.0) == pytest.approx(-denmark_ee(1.0))


@given(yields, ees, drs)
def test_effective_bounds(y, ee, dr):
    e = effective_score(y, ee, dr)
    assert 0.0 <= e <= y + 1e-9


@given(yields, yields, ees, drs)
def test_effective_monotone_in_yield(y1, y2, ee, dr):
    lo, hi = sorted((y1, y2))
    assert effective_score(lo, ee, dr) <= effective_score(hi, ee, dr)


@given(yields, ees, ees, drs)
def test_effective_monotone_in_ee(y, e1, e2, dr):
    lo, hi = sorted((e1, e2))
    assert effective_score(y, lo, dr) <= effective_score(y, hi, dr) + 1e-12


@given(yields, ees, drs, drs)
def test_effective_monotone_in_dr(y, ee, d1, d2):
    lo, hi = sorted((d1, d2))
    assert effective_score(y, ee, lo) <= effective_score(y, ee, hi) + 1e-12


@given(st.lists(st.floats(min_value=0, max_value=100, allow_nan=False), min_size=1, max_size=30))
def test_relative_scores_properties(effs):
    if max(effs) <= 0:
        return
    rel = relative_scores(effs)
    assert all(0.0 <= r <= 1.0 for r in rel)
    assert max(rel) == 1.0
    assert effs.index(max(effs)) in best_indices(rel)
    # invariance under scaling
    assert relative_scores([e * 3.0 for e in effs]) == pytest.approx(rel)


@given(st.floats(min_value=-5, max_value=5, allow_nan=False))
def test_denmark_ee_bounded_odd(ddg):
    ee = denmark_ee(ddg)
    assert -100.0 <= ee <= 100.0
    assert math.isclose(ee, -denmark_ee(-ddg), abs_tol=1e-12)


@given(st.integers(min_value=1, max_value=200), st.integers(min_value=1, max_value=10))
def test_spaced_positions(pool, count):
    pos = spaced_positions(pool, count)
    assert len(pos) == min(pool, count)
    assert len(set(pos)) == len(pos)
    assert pos == sorted(pos)
    assert pos[0] == 0
    if len(pos) > 1:
        assert pos[-1] == pool - 1
