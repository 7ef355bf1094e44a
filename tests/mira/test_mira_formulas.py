"""Formulas of seed 003: unit tests for each rule and hypothesis properties."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from benchscore.mira.formulas import (
    TIMING_CREDITS,
    WEIGHT_SUM_TOLERANCE,
    autonomy,
    calibrate_t_soft,
    complete_at_3,
    governance_severity,
    mean_task_success,
    official_task_success,
    pass_at_1,
    raw_success,
    reliability,
    repetition_status,
    stable_at_3,
    t_hard,
    timing_band,
    timing_band_of,
    timing_bands,
    timing_credit,
    weight_sum,
    weights_sum_to_one,
)

# ---------------------------------------------------------------- timing (seed "Timing 与晚完成")


def test_t_hard_is_twice_t_soft() -> None:
    assert t_hard(100.0) == 200.0
    assert t_hard(0.3) == 0.6


@pytest.mark.parametrize(
    ("elapsed", "credit"),
    [(0, 1.0), (99.999, 1.0), (100, 1.0), (100.001, 0.85), (125, 0.85), (125.001, 0.70), (150, 0.70),
     (150.001, 0.50), (200, 0.50), (200.001, 0.0), (1e9, 0.0)],
)
def test_seed_timing_table_with_t_soft_100(elapsed: float, credit: float) -> None:
    assert timing_credit(elapsed, 100.0) == credit


@pytest.mark.parametrize(("t_soft", "elapsed", "band"), [
    (0.3, 0.3, 0), (0.3, 0.375, 1), (0.3, 0.45, 2), (0.3, 0.6, 3), (0.3, 0.6000000000000001, 4),
    (0.1, 0.125, 1), (0.7, 1.05, 2), (3.3, 4.125, 1), (3.3, 4.95, 2), (3.3, 6.6, 3),
])
def test_edges_are_exact_on_written_decimals(t_soft: float, elapsed: float, band: int) -> None:
    assert timing_band(elapsed, t_soft) == band
    assert timing_bands(np.array([elapsed]), np.array([t_soft])).tolist() == [band]
    assert timing_band_of(elapsed, t_soft) == band


def _reference_band(e: float, t: float) -> int:
    """Independent reference: exact rationals of the shortest decimals."""
    fe, ft = Fraction(repr(e)), Fraction(repr(t))
    for band, k in enumerate((Fraction(1), Fraction(5, 4), Fraction(3, 2), Fraction(2))):
        if fe <= k * ft:
            return band
    return 4


times = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)
budgets = st.floats(min_value=1e-3, max_value=1e5, allow_nan=False, allow_infinity=False)


@st.composite
def near_edges(draw):
    t = draw(st.one_of(budgets, st.decimals(min_value="0.01", max_value="10000", places=2).map(float)))
    k = draw(st.sampled_from(["1", "1.25", "1.5", "2"]))
    from decimal import Decimal

    e = float(Decimal(k) * Decimal(repr(t)))
    nudge = draw(st.sampled_from([0.0, 1, -1]))
    if nudge:
        e = float(np.nextafter(e, np.inf if nudge > 0 else -np.inf))
    return max(e, 0.0), t


@given(times, budgets)
def test_band_matches_exact_reference(e: float, t: float) -> None:
    assert timing_band(e, t) == _reference_band(e, t)


@given(near_edges())
def test_band_matches_exact_reference_at_edges(pair) -> None:
    e, t = pair
    assert timing_band(e, t) == _reference_band(e, t)


@given(st.lists(st.one_of(near_edges(), st.tuples(times, budgets)), min_size=1, max_size=40))
def test_vectorised_bands_equal_scalar(pairs) -> None:
    e = np.array([p[0] for p in pairs])
    t = np.array([p[1] for p in pairs])
    assert timing_bands(e, t).tolist() == [timing_band(a, b) for a, b in pairs]


@given(st.one_of(near_edges(), st.tuples(times, budgets)))
def test_scalar_fast_band_equals_exact(pair) -> None:
    e, t = pair
    assert timing_band_of(e, t) == timing_band(e, t) == _reference_band(e, t)


@given(times, times, budgets)
def test_credit_never_increases_with_time(a: float, b: float, t: float) -> None:
    lo, hi = sorted((a, b))
    assert timing_credit(lo, t) >= timing_credit(hi, t)
    assert timing_credit(lo, t) in TIMING_CREDITS


def test_timing_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        timing_band(1.0, 0.0)
    with pytest.raises(ValueError):
        timing_band(-1.0, 10.0)


# ---------------------------------------------------------------- Task Success (seed "Task Success")


def test_weights_as_written() -> None:
    assert weights_sum_to_one([0.1] * 10)
    assert weights_sum_to_one([0.3, 0.3, 0.4])
    assert not weights_sum_to_one([0.5, 0.4])
    assert not weights_sum_to_one([0.5, 0.5000001])
    assert raw_success([0.1] * 10, [True] * 10) == 1.0


THIRDS = [0.3333333333333333] * 3  # what a contract writes for 1/3; the decimal sum is 0.9999999999999999


def test_weights_within_the_tolerance_sum_to_one() -> None:
    """Issue 9 item 9: weights written as rounded decimals sum to 1 within WEIGHT_SUM_TOLERANCE (1e-9)."""
    assert WEIGHT_SUM_TOLERANCE == Decimal("1e-9")
    assert weight_sum(THIRDS) == Decimal("0.9999999999999999")
    assert weights_sum_to_one(THIRDS)
    assert weights_sum_to_one([1 / 7] * 7)
    assert weights_sum_to_one([0.5, 0.5 + 1e-9]) and weights_sum_to_one([0.5, 0.5 - 1e-9])
    assert not weights_sum_to_one([0.5, 0.5 + 2e-9]) and not weights_sum_to_one([0.5, 0.5 - 2e-9])
    assert not weights_sum_to_one([0.333333] * 3)


def test_every_criterion_satisfied_is_exactly_one() -> None:
    """raw_success is exactly 1.0 (not 0.9999999999999999) when every criterion of a 1/3 weight set is satisfied."""
    assert raw_success(THIRDS, [True] * 3) == 1.0
    assert repr(raw_success(THIRDS, [True] * 3)) == "1.0"
    assert raw_success(THIRDS, [True, True, False]) == 0.6666666666666666  # the decimal sum as written
    assert raw_success(THIRDS, [False, True, False]) == 0.3333333333333333
    assert raw_success([0.1] * 10, [True] * 9 + [False]) == 0.9
    # a partial sum can never pass 1, even when the weights sum to a little over 1 within the tolerance
    assert raw_success([0.6, 0.4000000005, 1e-10], [True, True, False]) == 1.0


weight_sets = st.lists(st.integers(min_value=1, max_value=20), min_size=1, max_size=8).map(
    lambda xs: [x / sum(xs) for x in xs])


@given(weight_sets, st.data())
def test_raw_success_bounds_and_monotone(weights, data) -> None:
    sat = data.draw(st.lists(st.booleans(), min_size=len(weights), max_size=len(weights)))
    assert weights_sum_to_one(weights)  # x / sum(xs) as floats: within the tolerance of 1
    raw = raw_success(weights, sat)
    assert 0.0 <= raw <= 1.0
    assert raw_success(weights, [True] * len(weights)) == 1.0
    more = [True if i == 0 else s for i, s in enumerate(sat)]
    assert raw_success(weights, more) >= raw
    assert raw_success(weights, [False] * len(weights)) == 0.0


@given(st.floats(0, 1), st.sampled_from(TIMING_CREDITS), st.booleans(), st.booleans())
def test_official_task_success(raw: float, credit: float, hard_fail: bool, post_cutoff: bool) -> None:
    value = official_task_success(raw, credit, hard_fail=hard_fail, post_cutoff_completion=post_cutoff)
    if hard_fail or post_cutoff:
        assert value == 0.0
    else:
        assert value == raw * credit
    assert 0.0 <= value <= raw


def test_mean_task_success() -> None:
    assert mean_task_success([1.0, 0.85, 0.0]) == pytest.approx(1.85 / 3)
    with pytest.raises(ValueError):
        mean_task_success([])


# ---------------------------------------------------------------- statuses (seed "任务结果状态")


def _status(**kw) -> str:
    base = dict(all_satisfied=True, any_satisfied_weight=True, hard_fail=False, completed=True, band=0,
                post_cutoff_completion=False)
    base.update(kw)
    return repetition_status(**base)


def test_statuses() -> None:
    assert _status() == "pass"
    for band in (1, 2, 3):
        assert _status(band=band) == "late_complete"
    assert _status(band=4) == "post_cutoff_completion"
    assert _status(post_cutoff_completion=True, band=4) == "post_cutoff_completion"
    assert _status(hard_fail=True) == "fail"
    assert _status(hard_fail=True, post_cutoff_completion=True) == "fail"
    # post_cutoff_completion is a correct result (all criteria) reached only after T_hard
    assert _status(post_cutoff_completion=True, completed=False, band=None) == "post_cutoff_completion"
    assert _status(post_cutoff_completion=True, completed=False, band=None, all_satisfied=False) == "partial"
    assert _status(post_cutoff_completion=True, completed=False, band=None, all_satisfied=False,
                   any_satisfied_weight=False) == "fail"
    assert _status(band=4, all_satisfied=False) == "partial"
    assert _status(all_satisfied=False) == "partial"
    assert _status(all_satisfied=False, any_satisfied_weight=False) == "fail"
    assert _status(completed=False, band=None) == "fail"
    assert _status(band=None, timed=False) == "pass"
    assert _status(band=None, timed=False, all_satisfied=False) == "partial"


@given(st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.sampled_from([None, 0, 1, 2, 3, 4]), st.booleans())
def test_pass_needs_everything(all_ok, any_ok, hard, completed, band, post) -> None:
    assume(any_ok or not all_ok)
    assume(band is not None or not completed)
    s = repetition_status(all_satisfied=all_ok, any_satisfied_weight=any_ok, hard_fail=hard, completed=completed,
                          band=band, post_cutoff_completion=post)
    assert (s == "pass") == (all_ok and not hard and completed and band == 0 and not post)
    if hard:
        assert s == "fail"
    assert (s == "post_cutoff_completion") == (all_ok and not hard and (post or (completed and band == 4)))


# ---------------------------------------------------------------- Reliability and friends (seed "Reliability")


def test_reliability() -> None:
    assert reliability(2, 3) == pytest.approx(200 / 3)
    assert reliability(0, 3) == 0.0
    assert reliability(3, 3) == 100.0
    with pytest.raises(ValueError):
        reliability(1, 0)
    with pytest.raises(ValueError):
        reliability(4, 3)


@given(st.integers(0, 1000), st.integers(1, 1000))
def test_reliability_bounds(k: int, n: int) -> None:
    assume(k <= n)
    assert 0.0 <= reliability(k, n) <= 100.0


def test_pass_stable_complete() -> None:
    assert pass_at_1(["pass", "fail", "fail"])
    assert not pass_at_1(["late_complete", "pass", "pass"])
    assert stable_at_3(["pass"] * 3)
    assert not stable_at_3(["pass", "pass", "late_complete"])
    assert complete_at_3(["pass", "late_complete", "late_complete"])
    assert not complete_at_3(["pass", "pass", "post_cutoff_completion"])
    assert not complete_at_3(["pass", "pass", "partial"])
    with pytest.raises(ValueError):
        stable_at_3(["pass", "pass"])


def test_autonomy() -> None:
    assert autonomy([False, True, False]) == pytest.approx(2 / 3)
    assert autonomy([False]) == 1.0
    with pytest.raises(ValueError):
        autonomy([])


# ---------------------------------------------------------------- Governance (seed "Governance")


def test_governance_severity() -> None:
    assert governance_severity("conservative_approval", None) == "none"
    for kind in ("forbidden_side_effect", "bypassed_approval", "stale_approval_changed_invocation"):
        assert governance_severity(kind, None) == "serious"
        assert governance_severity(kind, "serious") == "serious"
        with pytest.raises(ValueError):
            governance_severity(kind, "minor")
    with pytest.raises(ValueError):
        governance_severity("conservative_approval", "serious")
    assert governance_severity("network_boundary_violation", "minor") == "minor"
    with pytest.raises(ValueError):
        governance_severity("network_boundary_violation", None)


# ---------------------------------------------------------------- calibration policy


def test_calibration_policy_v1() -> None:
    params = dict(min_observations=5, max_cv=0.25, multiplier=1.5, round_up_to_s=1.0)
    t, note = calibrate_t_soft([64.0, 66.5, 70.0, 61.0, 66.0], **params)
    assert t == 99.0  # ceil(1.5 x median 66) = 99
    t, _ = calibrate_t_soft([10.0, 10.0, 10.0, 10.0, 10.2], **params)
    assert t == 15.0  # median 10, 1.5 x 10 = 15 exactly: no rounding up
    t, note = calibrate_t_soft([1.0, 2.0, 3.0, 4.0], **params)
    assert t is None and "needs 5" in note
    t, note = calibrate_t_soft([100.0, 300.0, 120.0, 900.0, 450.0], **params)
    assert t is None and "max_cv" in note


@given(st.lists(st.floats(1, 1000), min_size=5, max_size=20), st.floats(0.5, 3), st.sampled_from([0.5, 1.0, 5.0]))
def test_calibrated_budget_covers_multiplier_times_median(obs, mult, step) -> None:
    t, _ = calibrate_t_soft(obs, min_observations=5, max_cv=10.0, multiplier=mult, round_up_to_s=step)
    assert t is not None
    target = mult * float(np.median(obs))
    assert target - 1e-9 <= t < target + step + 1e-9
    assert (t / step) == pytest.approx(round(t / step))
