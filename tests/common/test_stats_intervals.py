"""The 95 % intervals of benchscore.common.stats: coverage by simulation, exact values, properties.

Coverage: for each method, 2,000 seeded data sets are drawn from a distribution whose mean is known;
the interval must cover it in 93-97 % of them (the standard error of a coverage estimate from 2,000
draws is about 0.5 %). For clustered data the interval that ignores the clusters is shown to
under-cover on the same draws, so a method that forgot the clusters would fail the test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchscore.common import stats as S

DRAWS = 2000


def _covered(intervals, truth):
    return float(np.mean([lo <= truth <= hi for lo, hi in intervals]))


def test_wilson_covers_a_proportion():
    rng = np.random.default_rng(101)
    n, p = 50, 0.3
    k = rng.binomial(n, p, size=DRAWS)
    low, high = S.wilson(k, n)
    coverage = float(np.mean((low <= p) & (p <= high)))
    assert 0.93 <= coverage <= 0.97, coverage


def test_wilson_matches_the_textbook_value():
    # Newcombe (1998), Table I: 81 of 263 -> 0.2553 to 0.3662
    low, high = S.wilson(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)
    assert S.wilson(0, 10)[0] == 0.0 and S.wilson(10, 10)[1] == 1.0


def test_t_interval_covers_a_skewed_bounded_mean():
    rng = np.random.default_rng(102)
    truth = 2 / 7  # mean of Beta(2, 5)
    got = [S.t_interval(rng.beta(2, 5, size=30), bounds=(0.0, 1.0)) for _ in range(DRAWS)]
    assert 0.93 <= _covered(got, truth) <= 0.97


def _clustered(rng, g=40):
    sizes = rng.integers(1, 7, size=g)
    labels = np.repeat(np.arange(g), sizes)
    y = rng.normal(size=g)[labels] + rng.normal(size=labels.size)  # intra-cluster correlation 0.5, mean 0
    return y, labels.tolist()


def test_cluster_t_covers_clustered_data_where_the_naive_interval_does_not():
    rng = np.random.default_rng(103)
    clustered, naive = [], []
    for _ in range(DRAWS):
        y, labels = _clustered(rng)
        clustered.append(S.cluster_t(y, labels))
        naive.append(S.t_interval(y))
    assert 0.93 <= _covered(clustered, 0.0) <= 0.97
    assert _covered(naive, 0.0) < 0.88  # items of one cluster are not independent


def test_cluster_t_with_singleton_clusters_is_the_t_interval():
    y = np.array([0.1, 0.5, 0.2, 0.9, 0.4])
    assert S.cluster_t(y, ["a", "b", "c", "d", "e"]) == pytest.approx(S.t_interval(y))
    m, s = y.mean(), y.std(ddof=1)
    from scipy.stats import t

    half = t.ppf(0.975, 4) * s / math.sqrt(5)
    assert S.t_interval(y) == pytest.approx((m - half, m + half))


def test_cluster_t_matches_the_cr1_formula():
    y = np.array([1.0, 2.0, 4.0, 0.0, 3.0, 5.0])
    labels = ["t1", "t1", "t2", "t3", "t3", "t3"]
    e = y - y.mean()
    sums = np.array([e[:2].sum(), e[2:3].sum(), e[3:].sum()])
    se = math.sqrt(3 / 2 * (sums**2).sum()) / 6
    from scipy.stats import t

    half = t.ppf(0.975, 2) * se
    assert S.cluster_t(y, labels) == pytest.approx((y.mean() - half, y.mean() + half))


def _cases(rng, g=20, m=3):
    p = rng.beta(2, 2, size=g)  # each case has its own pass rate: repetitions of a case are dependent
    return (rng.random((g, m)) < p[:, None]).astype(float)


def test_cluster_bootstrap_covers_a_pooled_rate_over_cases_where_a_repetition_bootstrap_does_not():
    rng = np.random.default_rng(104)
    by_case, by_repetition = [], []
    for _ in range(DRAWS):
        x = _cases(rng)
        by_case.append(S.cluster_bootstrap(x.sum(axis=1), np.full(x.shape[0], 3.0), resamples=1000, rng=rng))
        by_repetition.append(S.cluster_bootstrap(x.ravel(), np.ones(x.size), resamples=1000, rng=rng))
    assert 0.93 <= _covered(by_case, 0.5) <= 0.97
    assert _covered(by_repetition, 0.5) < _covered(by_case, 0.5) - 0.02


def test_cluster_bootstrap_both_ways_of_drawing_agree():
    """Multinomial counts over distinct (num, den) pairs and drawing cluster indices are the same
    distribution: with many resamples their intervals agree."""
    rng = np.random.default_rng(105)
    x = _cases(rng, g=60)
    num, den = x.sum(axis=1), np.full(60, 3.0)
    by_counts = S.cluster_bootstrap(num, den, resamples=40_000, rng=np.random.default_rng(1))
    # every pair distinct (a vanishing jitter on den): cluster indices are drawn instead
    by_index = S.cluster_bootstrap(num, den + np.arange(60) * 1e-12, resamples=40_000, rng=np.random.default_rng(2))
    assert by_counts == pytest.approx(by_index, abs=0.01)


def _tracks(rng, ks=(10, 10, 10, 8), m=3):
    theorem = (rng.random((ks[0], m)) < rng.beta(2, 3, size=ks[0])[:, None]).astype(float)
    solver = np.clip(rng.beta(5, 3, size=ks[1])[:, None] + rng.normal(0, 0.05, (ks[1], m)), 0, 1)
    construction = np.exp(rng.normal(0, 0.3, size=ks[2]))[:, None] * np.exp(rng.normal(0, 0.2, (ks[2], m)))
    conjecture = (rng.random((ks[3], m)) < rng.beta(1, 4, size=ks[3])[:, None]).astype(float)
    return [theorem, solver, construction, conjecture]


def _solver_truth():
    # E[clip(mu + e, 0, 1)], mu ~ Beta(5, 3), e ~ N(0, 0.05): by quadrature, the clipping matters little
    from scipy import integrate, stats

    def inner(mu):
        return integrate.quad(lambda e: np.clip(mu + e, 0, 1) * stats.norm.pdf(e, 0, 0.05), -0.5, 0.5)[0]

    return integrate.quad(lambda mu: inner(mu) * stats.beta.pdf(mu, 5, 3), 0, 1)[0]


def test_stratified_bootstrap_covers_the_index():
    rng = np.random.default_rng(106)
    weights = [30.0, 30.0, 30.0, 10.0]
    truth = 30 * 0.4 + 30 * _solver_truth() + 30 * math.exp(0.3**2 / 2 + 0.2**2 / 2) + 10 * 0.2
    got = [S.stratified_bootstrap(_tracks(rng), weights, resamples=500, rng=rng) for _ in range(DRAWS)]
    assert 0.93 <= _covered(got, truth) <= 0.97


def test_two_stage_replicates_do_not_count_attempt_noise_twice():
    """Resampling attempts inside resampled tasks naively adds the attempt-to-attempt spread a second
    time; the shrunk two-stage replicates have the one-stage variance V/k x k/(k-1)."""
    rng = np.random.default_rng(107)
    x = rng.normal(size=(12, 1)) + 0.8 * rng.normal(size=(12, 4))
    means = x.mean(axis=1)
    reps = S.two_stage_replicates(x, resamples=200_000, rng=rng)
    one_stage = means.var() / 12 * 12 / 11
    assert reps.var() == pytest.approx(one_stage, rel=0.03)
    assert reps.mean() == pytest.approx(means.mean(), abs=0.005)
    tasks = rng.integers(0, 12, size=(50_000, 12))
    attempts = rng.integers(0, 4, size=(50_000, 12, 4))
    naive = x[tasks[..., None], attempts].mean(axis=(1, 2)) * math.sqrt(12 / 11)
    assert naive.var() > 1.05 * one_stage  # what the shrinking removes


def test_no_interval_reasons():
    with pytest.raises(S.NoInterval, match="1 cluster"):
        S.cluster_t([0.2, 0.4], ["t", "t"])
    with pytest.raises(S.NoInterval, match="1 item"):
        S.t_interval([0.2])
    with pytest.raises(S.NoInterval, match="one task"):
        S.stratified_bootstrap([np.ones((1, 2)), np.ones((3, 2))], [1, 1], resamples=10,
                               rng=np.random.default_rng(0))
    rec = S.beside("cluster_t", lambda: S.cluster_t([0.5], ["t"]))
    assert rec == {"ci95": None, "ci_method": "cluster_t",
                   "ci_reason": "1 cluster: the spread between clusters cannot be estimated"}
    assert S.beside("wilson", lambda: (0.1, 0.5), scale=100) == {"ci95": [10.0, 50.0], "ci_method": "wilson"}
    assert S.beside("t", lambda: (0, 1), unavailable="incomplete") == {
        "ci95": None, "ci_method": "t", "ci_reason": "incomplete"}
    with pytest.raises(ValueError):
        S.beside("normal", lambda: (0, 1))


def test_the_same_seed_gives_the_same_interval_and_names_are_independent():
    x = _cases(np.random.default_rng(5))
    args = (x.sum(axis=1), np.full(x.shape[0], 3.0))
    a = S.cluster_bootstrap(*args, resamples=500, rng=S.rng_for(16, "task_success"))
    b = S.cluster_bootstrap(*args, resamples=500, rng=S.rng_for(16, "task_success"))
    c = S.cluster_bootstrap(*args, resamples=500, rng=S.rng_for(16, "reliability"))
    assert a == b and a != c


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=40), st.integers(1, 6))
def test_intervals_contain_the_estimate_and_stay_in_bounds(values, n_clusters):
    labels = [i % n_clusters for i in range(len(values))]
    m = float(np.mean(values))
    for lo, hi in [S.t_interval(values, bounds=(0, 1))] + (
            [S.cluster_t(values, labels, bounds=(0, 1))] if min(n_clusters, len(values)) >= 2 else []):
        assert 0.0 <= lo <= m + 1e-12 and m - 1e-12 <= hi <= 1.0


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 60), st.integers(1, 60))
def test_wilson_is_a_valid_interval(k, n):
    k = min(k, n)
    lo, hi = S.wilson(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 3)), min_size=2, max_size=15))
def test_cluster_bootstrap_interval_holds_the_pooled_ratio(pairs):
    num = np.array([min(a, b) for a, b in pairs], dtype=float)
    den = np.array([b for _, b in pairs], dtype=float)
    lo, hi = S.cluster_bootstrap(num, den, resamples=300, rng=np.random.default_rng(0), bounds=(0, 1))
    r = num.sum() / den.sum()
    assert 0.0 <= lo <= hi <= 1.0
    assert lo <= r + 0.35 and r - 0.35 <= hi  # a percentile interval need not hold the estimate exactly
