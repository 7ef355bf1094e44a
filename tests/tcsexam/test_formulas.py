"""Formulas: the seed's worked examples and hypothesis properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from benchscore.tcsexam.formulas import (
    METRIC_ID,
    instance_scale,
    instance_score,
    instance_z,
    reference_stats,
    resolve_status,
    scored_instance_scores,
    task_mean,
    task_score,
    tcsexam_index,
    track_mean,
    worst_status,
)

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
runs = st.lists(finite, min_size=2, max_size=6)


def stats(values):
    n, mu, s = reference_stats(np.array([values], dtype=float))
    return int(n[0]), float(mu[0]), float(s[0])


def test_metric_id_is_the_seeds():
    assert METRIC_ID == "tcsexam-index-original-30303010-v0.1"


def test_seed_example_reference_10_12_14_gives_mu_12_scale_2_score_half():
    n, mu, s = stats([10, 12, 14])
    assert (n, mu, s) == (3, 12.0, 2.0)
    scale = instance_scale(s, mu, 0.02, 1e-9)
    assert scale == 2.0
    assert instance_score(12, mu, scale, "maximize") == 0.5


def test_seed_example_timeout_gives_task_mean_quarter():
    score, z = scored_instance_scores(
        np.array([12.0, np.nan]),
        np.array([True, False]),
        np.array([12.0, 30.0]),
        np.array([2.0, 1.0]),
        "maximize",
    )
    assert score.tolist() == [0.5, 0.0]
    assert math.isnan(z[1])
    assert task_score(score) == 0.25


def test_seed_example_index_55_5():
    assert tcsexam_index({"theorem": 0.4, "solver": 0.25, "construction": 1.2, "conjecture": 0}) == 55.5


def test_index_can_exceed_100():
    assert tcsexam_index({"theorem": 1, "solver": 1, "construction": 2, "conjecture": 1}) == 130.0


def test_unusable_runs_are_ignored_and_fewer_than_two_are_unscored():
    n, mu, s = reference_stats(np.array([[5.5, np.nan, 6.0], [7.0, np.nan, np.nan]]))
    assert n.tolist() == [2, 1]
    assert mu[0] == 5.75 and s[0] == pytest.approx(math.sqrt(0.125))
    assert math.isnan(mu[1]) and math.isnan(s[1])


def test_scale_floors():
    assert instance_scale(0.0, 100.0, 0.02, 1e-9) == 2.0  # relative floor
    assert instance_scale(0.0, 0.0, 0.02, 1e-9) == 1e-9  # absolute floor
    assert instance_scale(0.0, -50.0, 0.02, 1e-9) == 1.0  # |mu|


def test_solve_kind_uses_the_same_formula_with_1_and_0():
    n, mu, s = stats([1, 0, 1])
    scale = instance_scale(s, mu, 0.02, 1e-9)
    assert instance_score(1, mu, scale, "maximize") > 0.5 > instance_score(0, mu, scale, "maximize")


def test_averaging_order_repeats_do_not_weigh_more():
    # task x repeated three times, task y once: each task weighs the same in the track
    x = task_mean([1.0, 1.0, 0.0])
    y = task_mean([0.0])
    assert track_mean([x, y]) == pytest.approx((2 / 3 + 0) / 2)
    assert track_mean([x, y]) != pytest.approx(2 / 4)  # not a pooled mean of attempts


def test_status_resolution():
    assert resolve_status(gaps=0, provisional=0, unexplained_exclusions=0) == "complete"
    assert resolve_status(gaps=0, provisional=2, unexplained_exclusions=0) == "provisional"
    assert resolve_status(gaps=1, provisional=2, unexplained_exclusions=0) == "incomplete"
    # an excluded row without its reason: provisional at least, never silently complete
    assert resolve_status(gaps=0, provisional=0, unexplained_exclusions=1) == "provisional"
    assert resolve_status(gaps=1, provisional=0, unexplained_exclusions=1) == "incomplete"
    assert worst_status(["complete", "provisional"]) == "provisional"
    assert worst_status(["provisional", "incomplete", "complete"]) == "incomplete"
    assert worst_status([]) == "complete"


def test_bad_direction_and_empty_inputs_raise():
    with pytest.raises(ValueError):
        instance_z(1.0, 0.0, 1.0, "up")
    with pytest.raises(ValueError):
        task_score([])
    with pytest.raises(ValueError):
        tcsexam_index({"theorem": 1})


@given(runs, finite, st.sampled_from(["maximize", "minimize"]))
def test_score_in_unit_interval(values, a, direction):
    _, mu, s = stats(values)
    scale = instance_scale(s, mu, 0.02, 1e-9)
    score = float(instance_score(a, mu, scale, direction))
    assert 0.0 <= score <= 1.0


@given(runs, finite, finite)
def test_monotone_in_a_in_the_declared_direction(values, a1, a2):
    assume(a1 < a2)
    _, mu, s = stats(values)
    scale = instance_scale(s, mu, 0.02, 1e-9)
    assert instance_score(a1, mu, scale, "maximize") <= instance_score(a2, mu, scale, "maximize")
    assert instance_score(a1, mu, scale, "minimize") >= instance_score(a2, mu, scale, "minimize")


@given(runs, finite)
def test_maximize_and_minimize_mirror(values, a):
    _, mu, s = stats(values)
    scale = instance_scale(s, mu, 0.02, 1e-9)
    up = float(instance_score(a, mu, scale, "maximize"))
    down = float(instance_score(a, mu, scale, "minimize"))
    assert up + down == pytest.approx(1.0, abs=1e-12)
    # mirroring the reference and the candidate turns a maximisation into a minimisation
    _, mu_m, s_m = stats([-v for v in values])
    scale_m = instance_scale(s_m, mu_m, 0.02, 1e-9)
    assert float(instance_score(-a, mu_m, scale_m, "minimize")) == pytest.approx(up, abs=1e-9)


@given(runs)
def test_candidate_equal_to_mu_scores_half(values):
    _, mu, s = stats(values)
    scale = instance_scale(s, mu, 0.02, 1e-9)
    assert instance_score(mu, mu, scale, "maximize") == 0.5
    assert instance_score(mu, mu, scale, "minimize") == 0.5


@given(runs, st.floats(min_value=1e-3, max_value=1e3), finite)
def test_score_invariant_under_positive_affine_maps(values, k, shift):
    # with the relative floor off and s above the absolute floor, Phi(z) ignores units and offsets
    _, mu, s = stats(values)
    assume(s > 1e-3)
    # keep the moved spread far above float rounding of the moved values (else cancellation, not
    # the formula, decides: e.g. s = 0.018, k = 0.001, shift = 524288 loses 5 digits of s2)
    assume(k * s > 1e-6 * (abs(shift) + k * max(map(abs, values)) + 1.0))
    a = mu + s / 2
    base = float(instance_score(a, mu, instance_scale(s, mu, 0.0, 1e-9), "maximize"))
    _, mu2, s2 = stats([k * v + shift for v in values])
    moved = float(instance_score(k * a + shift, mu2, instance_scale(s2, mu2, 0.0, 1e-9), "maximize"))
    assert moved == pytest.approx(base, abs=1e-6)


track_value = st.floats(min_value=0, max_value=5, allow_nan=False)
tracks4 = st.fixed_dictionaries({t: track_value for t in ("theorem", "solver", "construction", "conjecture")})


@given(tracks4, tracks4, st.floats(min_value=-3, max_value=3))
def test_index_linear_in_track_means(p, q, c):
    combined = {t: p[t] + c * q[t] for t in p}
    assert tcsexam_index(combined) == pytest.approx(tcsexam_index(p) + c * tcsexam_index(q), abs=1e-9)


@given(tracks4)
def test_index_weights_are_30_30_30_10(p):
    expected = 30 * p["theorem"] + 30 * p["solver"] + 30 * p["construction"] + 10 * p["conjecture"]
    assert tcsexam_index(p) == pytest.approx(expected, abs=1e-9)


@given(st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=20))
def test_task_score_is_a_mean_within_bounds(scores):
    value = task_score(scores)
    assert min(scores) - 1e-12 <= value <= max(scores) + 1e-12
