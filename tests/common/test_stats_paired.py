"""benchscore.common.paired: the statistics of ``benchscore compare``.

The permutation p-value must equal scipy.stats.permutation_test's and the McNemar p-value
scipy.stats.binomtest's on small cases; the paired bootstrap interval of a difference must cover
the true difference in 93-97 % of 2,000 seeded draws (also for clustered items, where treating the
items as independent under-covers); Holm and the tie groups must equal hand computations.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from benchscore.common import paired as P


def units(a, b, *, den_a=None, den_b=None, stratum=None, weights=(1.0,), scale=1.0) -> P.Units:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return P.Units(a, np.ones_like(a) if den_a is None else np.asarray(den_a, dtype=float),
                   b, np.ones_like(b) if den_b is None else np.asarray(den_b, dtype=float),
                   np.zeros(a.size, dtype=np.int64) if stratum is None else np.asarray(stratum, dtype=np.int64),
                   np.asarray(weights, dtype=float), scale)


def _scipy_p(a, b, n_resamples):
    res = stats.permutation_test((a, b), lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
                                 permutation_type="samples", n_resamples=n_resamples, vectorized=True,
                                 alternative="two-sided", random_state=0)
    return res.pvalue


@pytest.mark.parametrize("seed", range(6))
def test_exact_permutation_p_value_equals_scipy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 11))
    a = np.round(rng.random(n), 2)
    b = np.round(a - 0.15 + rng.normal(0, 0.2, n), 2)
    got = P.compare_pair(units(a, b), resamples=10_000, rng=np.random.default_rng(1))
    assert got.test == "sign_flip_permutation_exact"
    assert got.p_value == pytest.approx(_scipy_p(a, b, np.inf), abs=1e-12)
    assert got.difference == pytest.approx(a.mean() - b.mean())


def test_ties_and_identical_outputs_match_scipy():
    a = np.array([1.0, 0.5, 0.5, 0.0, 1.0, 0.5])
    b = np.array([0.5, 0.5, 0.0, 0.0, 0.5, 1.0])
    assert P.compare_pair(units(a, b), resamples=10_000, rng=np.random.default_rng(0)).p_value == \
        pytest.approx(_scipy_p(a, b, np.inf), abs=1e-12)
    same = P.compare_pair(units(a, a), resamples=10_000, rng=np.random.default_rng(0))
    assert same.p_value == 1.0 and same.difference == 0.0


def test_monte_carlo_permutation_p_value_is_the_exact_one_within_its_error():
    rng = np.random.default_rng(7)
    a = rng.random(16)
    b = a - 0.1 + rng.normal(0, 0.25, 16)
    exact = _scipy_p(a, b, np.inf)  # 65,536 patterns
    got = P.compare_pair(units(a, b), resamples=20_000, rng=np.random.default_rng(3))
    assert got.test == "sign_flip_permutation_monte_carlo"
    assert abs(got.p_value - exact) < 4 * math.sqrt(exact * (1 - exact) / 20_000) + 1e-4
    again = P.compare_pair(units(a, b), resamples=20_000, rng=np.random.default_rng(3))
    assert again.p_value == got.p_value  # the seed makes it reproducible


@pytest.mark.parametrize(("n10", "n01", "same"), [(0, 0, 5), (1, 0, 3), (3, 1, 2), (7, 2, 0), (2, 9, 4), (5, 5, 1)])
def test_mcnemar_equals_the_binomial_test_on_discordant_pairs(n10, n01, same):
    a = np.array([1] * n10 + [0] * n01 + [1] * same + [0] * same, dtype=float)
    b = np.array([0] * n10 + [1] * n01 + [1] * same + [0] * same, dtype=float)
    got = P.compare_pair(units(a, b), resamples=1000, rng=np.random.default_rng(0), binary=True)
    assert got.test == "mcnemar_exact"
    want = 1.0 if n10 + n01 == 0 else stats.binomtest(n10, n10 + n01, 0.5).pvalue
    assert got.p_value == pytest.approx(want, abs=1e-12)


def test_clustered_binary_items_are_not_given_to_mcnemar():
    u = P.Units(np.array([2.0, 0.0, 1.0]), np.array([2.0, 2.0, 1.0]), np.array([0.0, 1.0, 1.0]),
                np.array([2.0, 2.0, 1.0]), np.zeros(3, dtype=np.int64), np.array([1.0]))
    assert P.compare_pair(u, resamples=100, rng=np.random.default_rng(0), binary=True).test.startswith("sign_flip")


def _paired_draw(rng, n=30):
    item = rng.normal(0, 1, n)  # item difficulty shared by both models: the pairing matters
    a = 0.3 + item + rng.normal(0, 0.5, n)
    b = item + rng.normal(0, 0.5, n)
    return a, b


def test_paired_bootstrap_interval_covers_the_true_difference():
    rng = np.random.default_rng(201)
    hits = 0
    for _ in range(2000):
        a, b = _paired_draw(rng)
        lo, hi = P.compare_pair(units(a, b), resamples=500, rng=rng).ci95
        hits += lo <= 0.3 <= hi
    assert 0.93 <= hits / 2000 <= 0.97


def test_clustered_paired_interval_covers_where_the_item_level_one_does_not():
    rng = np.random.default_rng(202)
    clustered = naive = 0
    for _ in range(2000):
        g = 30
        sizes = rng.integers(1, 7, size=g)
        labels = np.repeat(np.arange(g), sizes)
        shared = rng.normal(0, 1, g)[labels]  # a cluster's items are easier or harder for a than for b together
        d = 0.2 + shared + rng.normal(0, 1, labels.size)
        a, b = d, np.zeros_like(d)
        num_a = np.bincount(labels, weights=a)
        den = np.bincount(labels).astype(float)
        lo, hi = P.compare_pair(units(num_a, np.zeros(g), den_a=den, den_b=den), resamples=500, rng=rng).ci95
        clustered += lo <= 0.2 <= hi
        lo, hi = P.compare_pair(units(a, b), resamples=500, rng=rng).ci95
        naive += lo <= 0.2 <= hi
    assert 0.93 <= clustered / 2000 <= 0.97
    assert naive / 2000 < 0.88


def test_strata_weights_and_minimum_detectable_effect():
    # two tracks weighted 30 and 10 (as the index weighs its tracks): d = 30 (mean a - mean b in s0) + 10 (...)
    a = np.array([1.0, 0.0, 1.0, 0.5, 0.2, 0.4])
    b = np.array([0.0, 0.0, 1.0, 0.5, 0.6, 0.0])
    s = np.array([0, 0, 0, 1, 1, 1])
    got = P.compare_pair(units(a, b, stratum=s, weights=(30.0, 10.0)), resamples=10_000, rng=np.random.default_rng(0))
    assert got.difference == pytest.approx(30 * (2 / 3 - 1 / 3) + 10 * (1.1 / 3 - 1.1 / 3))
    # SE: each unit's share of d, centred in its stratum, scaled by sqrt(G/(G-1))
    d = a - b
    u = np.concatenate([30 * (d[:3] - d[:3].mean()) / 3, 10 * (d[3:] - d[3:].mean()) / 3]) * math.sqrt(3 / 2)
    se = math.sqrt(float((u**2).sum()))
    assert got.standard_error == pytest.approx(se)
    v = [float((u[:3] ** 2).sum()), float((u[3:] ** 2).sum())]
    df = sum(v) ** 2 / sum(x * x / 2 for x in v)
    assert got.minimum_detectable_effect == pytest.approx((stats.t.ppf(0.975, df) + stats.t.ppf(0.8, df)) * se)


def test_a_pooled_rate_with_other_denominators():
    """A fill-in-blank answer that is unhit in one output leaves that output's denominator only."""
    got = P.compare_pair(units([1.0, 0.0, 1.0], [1.0, 1.0, 0.0], den_a=[1, 1, 1], den_b=[1, 1, 0]),
                         resamples=1000, rng=np.random.default_rng(0))
    assert got.a == pytest.approx(2 / 3) and got.b == pytest.approx(1.0)


def test_holm_matches_a_hand_computation():
    assert P.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert P.holm([0.5, 0.001, 0.2, 0.04]) == pytest.approx([0.5, 0.004, 0.4, 0.12])
    assert P.holm([0.9, 0.8]) == [1.0, 1.0] and P.holm([0.02, 0.5]) == pytest.approx([0.04, 0.5])


def test_tie_groups_of_a_constructed_leaderboard():
    """Five models; significant (Holm p < 0.05) only: A-C, A-D, A-E, B-D, B-E, C-E, D-E.
    By hand: sorted A B C D E; group 1 = A with B (A-B not separated; A-C is); group 2 = C with D
    (C-D not separated, C-E is); group 3 = E. Rank ranges: A [1, 2]; B [1, 3] (only D, E below it are
    separated); C [2, 4] (A above; E below); D [3, 4] (A, B above; E below); E [5, 5]."""
    names = "ABCDE"
    values = [0.9, 0.8, 0.7, 0.65, 0.3]
    separated = {frozenset(p) for p in ("AC", "AD", "AE", "BD", "BE", "CE", "DE")}
    rows = P.tie_groups(values, lambda i, j: frozenset((names[i], names[j])) in separated)
    assert [(names[r["index"]], r["rank"], r["group"], r["rank_range"]) for r in rows] == [
        ("A", 1, 1, [1, 2]), ("B", 2, 1, [1, 3]), ("C", 3, 2, [2, 4]), ("D", 4, 2, [3, 4]), ("E", 5, 3, [5, 5])]
