"""benchscore.stats.power: the minimum detectable effect against the test the verdict runs (issue 38).

At 6 units the exact sign-flip test rejects only when every unit goes the same way, so its power at a
true difference is known in closed form; the simulated factor must match it. The power at the MDE
compare reports, over the issue's cells: test_calibration.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from benchscore.stats import paired as P
from benchscore.stats import power as W


def _six_units_factor(alpha: float = 0.05) -> float:
    """c with E_s[Phi(c s / sqrt(6))^6] = 0.8, s^2 ~ chi2(5) / 5: six equal units of unit-variance
    difference sd, rejected (upper tail) only when all six are positive, and the SE estimated with
    5 degrees of freedom."""
    q = (np.arange(4000) + 0.5) / 4000
    s = np.sqrt(stats.chi2.ppf(q, 5) / 5)
    return optimize.brentq(lambda c: float(np.mean(stats.norm.cdf(c * s / math.sqrt(6)) ** 6)) - 0.8, 0.1, 50)


def test_the_factor_at_six_units_matches_the_closed_form():
    share = np.full(6, 1 / 6)
    sigma = W.unit_model(share, np.zeros(6, dtype=np.int64), np.ones(6))
    got = W.mde_factor(share, np.zeros(6, dtype=np.int64), sigma, 0.05, exact=True, patterns=10_000, draws=3000)
    assert got == pytest.approx(_six_units_factor(), rel=0.05)


def test_the_factor_is_inf_when_the_test_rejects_nothing():
    share = np.full(5, 1 / 5)
    sigma = W.unit_model(share, np.zeros(5, dtype=np.int64), np.ones(5))
    assert W.mde_factor(share, np.zeros(5, dtype=np.int64), sigma, 0.05, exact=True, patterns=10_000) == math.inf


def test_random_patterns_need_a_larger_effect_than_the_t_approximation_at_14_units():
    """Just past the switch to random patterns the MDE the test reaches is larger than
    (t(13, 0.975) + t(13, 0.8)) x SE, the approximation that gave 73-78 % power (issue 38)."""
    share = np.full(14, 1 / 14)
    stratum = np.zeros(14, dtype=np.int64)
    sigma = W.unit_model(share, stratum, np.ones(14))
    got = W.mde_factor(share, stratum, sigma, 0.05, exact=False, patterns=10_000)
    t_approx = float(stats.t.ppf(0.975, 13) + stats.t.ppf(0.8, 13))
    assert got > t_approx * 1.02


def test_unit_model_scales_strata_by_their_observed_spread():
    share = np.array([0.1, 0.1, 0.1, 0.35, 0.35])
    stratum = np.array([0, 0, 0, 1, 1])
    sigma = W.unit_model(share, stratum, np.array([0.1, -0.1, 0.0, 0.0, 0.0]))
    assert float(sigma @ sigma) == pytest.approx(1.0)
    assert sigma[0] == sigma[1] == sigma[2] and sigma[3] == sigma[4] > 0  # a stratum with no spread keeps its share's


def test_compare_reports_the_simulated_mde_up_to_100_units_and_the_t_approximation_past_it():
    rng = np.random.default_rng(4)
    for n in (6, 14, 100, 101):
        a = rng.random(n)
        b = a + rng.normal(0, 0.1, n)
        ones = np.ones(n)
        u = P.Units(a, ones, b, ones.copy(), np.zeros(n, dtype=np.int64), np.array([1.0]), bounds=(0.0, 1.0))
        got = P.infer_pair(u, resamples=10_000, rng=np.random.default_rng(1))
        mde, why = got.minimum_detectable_effect(0.05)
        assert mde is not None, why
        t_approx = (stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)) * got.standard_error
        if n <= W.SIMULATED_UNITS:
            sigma = W.unit_model(ones / n, np.zeros(n, dtype=np.int64), ones)
            factor = W.cached_mde_factor(ones / n, np.zeros(n, dtype=np.int64), sigma, 0.05,
                                         exact=2**n <= 10_000, patterns=10_000)
            assert mde == pytest.approx(factor * got.standard_error)
        else:
            assert mde == pytest.approx(t_approx)
