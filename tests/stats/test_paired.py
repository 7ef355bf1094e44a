"""benchscore.stats.paired: one inference per comparison.

The permutation p-value must equal scipy.stats.permutation_test's and the McNemar p-value
scipy.stats.binomtest's; the interval must be exactly the set of shifts the same test keeps (checked
against a brute-force inversion with scipy), so it excludes 0 exactly when the test rejects (a
hypothesis property over strata, clusters and pooled rates); with too few units nothing is
significant and the output says so; Holm, the matching level, rank intervals and letters equal hand
computations. Coverage and power over the grid: test_calibration.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from benchscore.stats import paired as P


def units(a, b, *, den_a=None, den_b=None, stratum=None, weights=(1.0,), scale=1.0, bounds=(0.0, 1.0)) -> P.Units:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return P.Units(a, np.ones_like(a) if den_a is None else np.asarray(den_a, dtype=float),
                   b, np.ones_like(b) if den_b is None else np.asarray(den_b, dtype=float),
                   np.zeros(a.size, dtype=np.int64) if stratum is None else np.asarray(stratum, dtype=np.int64),
                   np.asarray(weights, dtype=float), scale, bounds)


def _scipy_p(a, b, n_resamples=np.inf):
    res = stats.permutation_test((a, b), lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
                                 permutation_type="samples", n_resamples=n_resamples, vectorized=True,
                                 alternative="two-sided", random_state=0)
    return res.pvalue


def infer(u, **kw):
    return P.infer_pair(u, resamples=kw.pop("resamples", 10_000), rng=np.random.default_rng(kw.pop("seed", 1)), **kw)


@pytest.mark.parametrize("seed", range(6))
def test_exact_permutation_p_value_equals_scipy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 11))
    a = np.round(rng.random(n), 2)
    b = np.round(a - 0.15 + rng.normal(0, 0.2, n), 2)
    got = infer(units(a, b))
    assert got.test == "sign_flip_permutation_exact"
    assert got.p_value == pytest.approx(_scipy_p(a, b), abs=1e-12)
    assert got.difference == pytest.approx(a.mean() - b.mean())


def test_ties_and_identical_outputs_match_scipy():
    a = np.array([1.0, 0.5, 0.5, 0.0, 1.0, 0.5])
    b = np.array([0.5, 0.5, 0.0, 0.0, 0.5, 1.0])
    assert infer(units(a, b)).p_value == pytest.approx(_scipy_p(a, b), abs=1e-12)
    same = infer(units(a, a))
    assert same.p_value == 1.0 and same.difference == 0.0
    assert same.interval() == (None, same.interval()[1]) and "the same on every one of the 6 units" in same.interval()[1]


def test_monte_carlo_permutation_p_value_is_the_exact_one_within_its_error():
    rng = np.random.default_rng(7)
    a = rng.random(16)
    b = a - 0.1 + rng.normal(0, 0.25, 16)
    exact = _scipy_p(a, b)  # 65,536 patterns
    got = infer(units(a, b), resamples=20_000, seed=3)
    assert got.test == "sign_flip_permutation_monte_carlo"
    assert abs(got.p_value - exact) < 4 * math.sqrt(exact * (1 - exact) / 20_000) + 1e-4
    assert infer(units(a, b), resamples=20_000, seed=3).p_value == got.p_value  # the seed makes it reproducible


@pytest.mark.parametrize("seed", range(4))
def test_the_interval_is_the_set_of_shifts_the_same_test_keeps(seed):
    """At each end scipy's exact permutation test of the shifted data keeps the shift (p >= 0.05), and
    just beyond it rejects; inside it keeps every shift tried."""
    rng = np.random.default_rng(40 + seed)
    n = 8
    a = np.round(rng.random(n), 2)
    b = np.round(a - 0.2 + rng.normal(0, 0.15, n), 2)
    (low, high), why = infer(units(a, b, bounds=(None, None))).interval()
    assert why is None and low < high
    for inside in (low, high, *np.linspace(low, high, 7)[1:-1]):
        assert _scipy_p(a - inside, b) >= 0.05 - 1e-12, inside
    for outside in (low - 1e-7, high + 1e-7):
        assert _scipy_p(a - outside, b) < 0.05, outside
    # the ends are means of subsets of the paired differences (Hartigan 1969)
    d = a - b
    subset_means = {round(float(d[[j for j in range(n) if k >> j & 1]].mean()), 9) for k in range(1, 2**n)}
    assert round(low, 9) in subset_means and round(high, 9) in subset_means


@settings(max_examples=60, deadline=None)
@given(st.integers(6, 12), st.integers(1, 3), st.floats(-0.5, 0.5), st.integers(0, 10_000), st.booleans())
def test_the_interval_excludes_zero_exactly_when_the_test_rejects(n, strata, shift, seed, pooled):
    rng = np.random.default_rng(seed)
    a = np.round(rng.random(n) + shift, 2)
    b = np.round(rng.random(n), 2)
    den_a = den_b = None
    if pooled:  # a pooled rate over units of different sizes, with different denominators in a and b
        den_a = rng.integers(1, 4, n).astype(float)
        den_b = np.maximum(den_a - rng.integers(0, 2, n), 0.0)
        a, b = a * den_a, b * den_b
    s = np.arange(n) % strata
    w = [30.0, 10.0, 20.0][:strata]
    for resamples in (10_000, 500):
        got = P.infer_pair(units(a, b, den_a=den_a, den_b=den_b, stratum=s, weights=w, bounds=(None, None)),
                           resamples=resamples, rng=np.random.default_rng(seed))
        for alpha in (0.05, 0.2, 0.05 / 3):
            ci, why = got.interval(alpha)
            if ci is None:
                continue
            assert (ci[0] > 0 or ci[1] < 0) == (got.p_value < alpha), (ci, got.p_value, alpha)
            assert ci[0] <= got.difference <= ci[1] or got.p_value < 2 * alpha


@pytest.mark.parametrize(("n10", "n01", "same"), [(0, 0, 5), (1, 0, 3), (3, 1, 2), (7, 2, 0), (2, 9, 4), (5, 5, 1)])
def test_mcnemar_equals_the_binomial_test_on_discordant_pairs(n10, n01, same):
    a = np.array([1] * n10 + [0] * n01 + [1] * same + [0] * same, dtype=float)
    b = np.array([0] * n10 + [1] * n01 + [1] * same + [0] * same, dtype=float)
    got = infer(units(a, b), resamples=1000, binary=True)
    assert got.test == "mcnemar_exact"
    want = 1.0 if n10 + n01 == 0 else stats.binomtest(n10, n10 + n01, 0.5).pvalue
    assert got.p_value == pytest.approx(want, abs=1e-12)
    ci, _ = got.interval()
    assert ci[0] < ci[1] and (ci[0] > 0 or ci[1] < 0) == (got.p_value < 0.05)


def test_mcnemar_interval_by_hand():
    a = np.array([1] * 9 + [0] * 1 + [1] * 5 + [0] * 5, dtype=float)
    b = np.array([0] * 9 + [1] * 1 + [1] * 5 + [0] * 5, dtype=float)
    ci, _ = infer(units(a, b, scale=100.0, bounds=(0.0, 100.0)), binary=True).interval()
    theta = stats.binomtest(9, 10).proportion_ci(method="exact")
    psi = stats.binomtest(10, 20).proportion_ci(method="exact")
    assert ci == pytest.approx((100 * psi.low * (2 * theta.low - 1), 100 * psi.high * (2 * theta.high - 1)))
    # no discordant pair: the interval is what the discordance rate allows, not a point
    ci0, _ = infer(units(a[10:], a[10:], scale=100.0, bounds=(0.0, 100.0)), binary=True).interval()
    upper = stats.binomtest(0, 10).proportion_ci(method="exact").high
    assert ci0 == pytest.approx((-100 * upper, 100 * upper))


def test_clustered_binary_items_are_not_given_to_mcnemar():
    u = P.Units(np.array([2.0, 0.0, 1.0]), np.array([2.0, 2.0, 1.0]), np.array([0.0, 1.0, 1.0]),
                np.array([2.0, 2.0, 1.0]), np.zeros(3, dtype=np.int64), np.array([1.0]))
    assert infer(u, resamples=100, binary=True).test.startswith("sign_flip")


def test_five_units_cannot_be_separated_and_the_output_says_so():
    """The audit's case: +0.4 on every one of 5 tasks; and 1 against 0 on 5 theorem tasks."""
    got = infer(units([0.9, 0.8, 0.7, 0.6, 0.5], [0.5, 0.4, 0.3, 0.2, 0.1]))
    assert got.p_value == 0.0625 and got.smallest_attainable_p == 0.0625
    ci, why = got.interval()
    assert ci is None and "same amount" in why  # every task +0.4: no spread, no interval; never [0.4, 0.4]
    mde, why = got.minimum_detectable_effect()
    assert mde is None and "0.0625" in why
    theorem = infer(units([1, 1, 1, 1, 1], [0, 0, 0, 0, 0]), binary=True)
    ci, _ = theorem.interval()
    assert theorem.p_value == 0.0625 and ci[0] < 0 < ci[1] and -1.0 <= ci[0] and ci[1] <= 1.0
    spread = infer(units([0.9, 0.8, 0.75, 0.6, 0.52], [0.5, 0.4, 0.3, 0.2, 0.1]))
    assert spread.interval()[0] == (-1.0, 1.0)  # inside what the metric allows, and all of it
    unbounded = infer(units([0.9, 0.8, 0.75, 0.6, 0.52], [0.5, 0.4, 0.3, 0.2, 0.1], bounds=(0.0, None)))
    ci, why = unbounded.interval()
    assert ci is None and "5 units" in why
    assert P.smallest_attainable_p(6) == 2 / 64 and P.smallest_attainable_p(6, family=3) == pytest.approx(6 / 64)


def test_strata_weights_and_the_standard_error():
    # two tracks weighted 30 and 10 (as the index weighs its tracks)
    a = np.array([1.0, 0.0, 1.0, 0.5, 0.2, 0.4])
    b = np.array([0.0, 0.0, 1.0, 0.5, 0.6, 0.0])
    s = np.array([0, 0, 0, 1, 1, 1])
    got = infer(units(a, b, stratum=s, weights=(30.0, 10.0), bounds=(None, None)))
    assert got.difference == pytest.approx(30 * (2 / 3 - 1 / 3) + 10 * (1.1 / 3 - 1.1 / 3))
    d = a - b
    u = np.concatenate([30 * (d[:3] - d[:3].mean()) / 3, 10 * (d[3:] - d[3:].mean()) / 3]) * math.sqrt(3 / 2)
    assert got.standard_error == pytest.approx(math.sqrt(float((u**2).sum())))


def test_a_pooled_rate_with_other_denominators():
    """A fill-in-blank answer that is unhit in one output leaves that output's denominator only."""
    got = infer(units([1.0, 0.0, 1.0], [1.0, 1.0, 0.0], den_a=[1, 1, 1], den_b=[1, 1, 0]), resamples=1000)
    assert got.a == pytest.approx(2 / 3) and got.b == pytest.approx(1.0)


def test_mcnemar_power_is_exact():
    """The MDE's power function against a direct simulation of the exact test on multinomial pairs."""
    from scipy.special import betaincinv

    a = np.array([1] * 6 + [0] * 4 + [1] * 15 + [0] * 15, dtype=float)
    b = np.array([0] * 6 + [1] * 4 + [1] * 15 + [0] * 15, dtype=float)
    got = infer(units(a, b), binary=True)
    rng = np.random.default_rng(5)
    delta, draws = 0.3, 20_000
    posterior = betaincinv(10.5, 30.5, (np.arange(21) + 0.5) / 21)  # the discordance rates it averages over
    psi = np.maximum(posterior[np.arange(draws) % 21], delta)
    u = rng.random((draws, 40))
    n10 = np.sum(u < ((psi + delta) / 2)[:, None], axis=1)
    n01 = np.sum((u >= ((psi + delta) / 2)[:, None]) & (u < psi[:, None]), axis=1)
    nd = n10 + n01
    p = np.where(nd > 0, np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(n10, n01), np.maximum(nd, 1), 0.5)), 1.0)
    assert got._power(delta, 0.05) == pytest.approx(float(np.mean(p < 0.05)), abs=0.012)
    mde, _ = got.minimum_detectable_effect()
    assert got._power(mde, 0.05) == pytest.approx(0.8, abs=0.01)


def test_the_minimum_detectable_effect_shrinks_with_more_units():
    mdes = []
    for n in (8, 12, 30, 100):  # the same spread of paired differences (normal quantiles), more units
        d = 0.1 * stats.norm.ppf((np.arange(n) + 0.5) / n)
        a = 0.5 + 0.15 * stats.norm.ppf((np.arange(n)[::-1] + 0.5) / n)
        b = a + d
        mde, why = infer(units(a, b), resamples=2000).minimum_detectable_effect()
        assert mde is not None, why
        mdes.append(mde)
    assert mdes == sorted(mdes, reverse=True)


def test_holm_matches_a_hand_computation_and_its_level_matches_the_verdicts():
    assert P.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert P.holm([0.5, 0.001, 0.2, 0.04]) == pytest.approx([0.5, 0.004, 0.4, 0.12])
    assert P.holm([0.9, 0.8]) == [1.0, 1.0] and P.holm([0.02, 0.5]) == pytest.approx([0.04, 0.5])
    # none separated: Bonferroni's level; one of three separated: the other two at 0.05 / 2
    assert P.holm_level(P.holm([0.02, 0.04, 0.3]), 0.05) == pytest.approx(0.05 / 3)
    for p in ([0.001, 0.04, 0.03], [0.01, 0.04, 0.03], [0.001, 0.002, 0.04], [0.2, 0.3, 0.4]):
        adj = P.holm(p)
        level = P.holm_level(adj, 0.05)
        assert all((pv < level) == (a < 0.05) for pv, a in zip(p, adj, strict=True)), (p, adj, level)
    assert P.holm_level(P.holm([0.001, 0.04, 0.03]), 0.05) == pytest.approx(0.025)


def test_rank_ranges_and_letters_of_a_constructed_leaderboard():
    """Five results; Holm separates only A-C, A-D, A-E, B-D, B-E, C-E, D-E. Rank intervals by hand:
    A [1, 2], B [1, 3], C [2, 4], D [3, 4], E [5, 5]. Letters: {A, B} a, {B, C} b, {C, D} c, {E} d."""
    names = "ABCDE"
    values = [0.9, 0.8, 0.7, 0.65, 0.3]
    separated = {frozenset(p) for p in ("AC", "AD", "AE", "BD", "BE", "CE", "DE")}

    def sep(i, j):
        return frozenset((names[i], names[j])) in separated

    assert P.rank_ranges(values, sep) == [[1, 2], [1, 3], [2, 4], [3, 4], [5, 5]]
    marks = P.letters(range(5), sep)
    assert [marks[i] for i in range(5)] == [["a"], ["a", "b"], ["b", "c"], ["c"], ["d"]]


def test_letters_show_a_chain_as_it_is_and_never_rank_an_indistinguishable_result_below():
    # A ~ B, B ~ C, A separated from C
    marks = P.letters([0, 1, 2], lambda i, j: {i, j} == {0, 2})
    assert [marks[i] for i in range(3)] == [["a"], ["a", "b"], ["b"]]
    # the greedy leader rule put C below A although C ~ A: A separated from B only
    marks = P.letters([0, 1, 2], lambda i, j: {i, j} == {0, 1})
    assert set(marks[0]) & set(marks[2]) and set(marks[1]) & set(marks[2]) and not set(marks[0]) & set(marks[1])


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 7), st.integers(0, 10_000))
def test_letters_share_a_letter_exactly_when_not_separated(n, seed):
    rng = np.random.default_rng(seed)
    sep = {frozenset((i, j)) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.5}
    marks = P.letters(list(range(n)), lambda i, j: frozenset((i, j)) in sep)
    for i in range(n):
        assert marks[i]
        for j in range(i + 1, n):
            assert bool(set(marks[i]) & set(marks[j])) == (frozenset((i, j)) not in sep)


def test_from_a_thousand_units_the_paired_t_test_and_its_inversion():
    rng = np.random.default_rng(12)
    n = 1500
    a = rng.random(n)
    b = a - 0.02 + rng.normal(0, 0.2, n)
    got = infer(units(a, b))
    want = stats.ttest_1samp(a - b, 0.0)
    assert got.test == "paired_t" and got.p_value == pytest.approx(want.pvalue, rel=1e-9)
    ci, _ = got.interval(0.05)
    ref = want.confidence_interval(0.95)
    assert ci == pytest.approx((ref.low, ref.high), rel=1e-9)
    for alpha in (0.05, 0.01, 0.05 / 45):
        ci, _ = got.interval(alpha)
        assert (ci[0] > 0 or ci[1] < 0) == (got.p_value < alpha)
