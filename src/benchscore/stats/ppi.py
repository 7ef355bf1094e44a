"""Prediction-powered inference: a mean built on a judge's verdicts, corrected by a set of known verdicts.

A judge (a model grading answers) gives every item a value ``yhat``; a person gave a random subset of the
judged items their known value ``y``. The judge's mean is biased by the judge's errors; the known values
alone are few. Prediction-powered inference (Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, Science
2023) uses both: the judge's mean plus the judge's average error measured where the known values are,
``theta = lambda mean_U(yhat) + mean_L(y - lambda yhat)``, with ``lambda`` chosen to make the variance
smallest (PPI++, Angelopoulos, Duchi and Zrnic 2023: ``lambda = Cov(y, yhat) / ((1 + n / N) Var(yhat))``,
clipped to [0, 1]; ``lambda = 1`` is plain PPI, ``lambda = 0`` the known values alone).

- :func:`ppi_mean` is PPI++'s mean as the ``ppi-python`` package computes it (``ppi_mean_pointestimate``,
  ``ppi_mean_ci``: a test pins both against it), L and U disjoint samples of one population.
- :func:`corrected_mean` is what benchscore writes beside a score (``ci_method`` ``ppi_plus_plus``): over the
  items of one result, an item whose value does not depend on the judge counts as it is, an item with a
  known value counts its known value, and every other judged item counts ``lambda yhat`` plus the mean
  rectifier ``mean_L(y - lambda yhat)``: ``theta = (sum_known y + sum_U (lambda yhat + r)) / N``. It equals
  ``(n_known mean y + N_U ppi_mean) / N`` (a test checks it against ``ppi-python``). Its standard error is
  the cluster-robust sandwich of its linearisation over the independent units (the case of a Mira
  repetition, the ``--cluster`` unit of a sample), and the interval is Student t with ``min(G, G_L) - 1``
  degrees of freedom (G units, G_L of them holding a known value).

Two small-sample rules, each chosen by the simulations of ``tests/stats/test_ppi.py`` (judges of
sensitivity and specificity 0.6-0.99, 20-400 known values, coverage at least 93 %, bias under 1 point):
``lambda`` is power-tuned only from :data:`TUNE_FROM` known values on (below, a tuned ``lambda`` is too
noisy and biases the estimate: plain PPI, unbiased, is used); and the rectifier's variance is estimated with
two pseudo-observations at the ends of its range (:data:`PSEUDO`), so that a calibration set in which the
judge happened to make no error never gives an interval as if its errors were known to be none. Below
:data:`MIN_KNOWN` known values there is no interval (the estimate is written, with the reason).

The assumption that nothing checks: the items with known values are a random draw from the judged items
(a person checked packets chosen at random, not the hard ones). Otherwise the correction is biased.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from .intervals import LEVEL, NoInterval, _t, _z, cluster_codes, ratio_interval

#: the fewest known values for an interval (the calibration grid starts there)
MIN_KNOWN = 20
#: from this many known values on, lambda is power-tuned (PPI++); below, lambda = 1 (plain PPI)
TUNE_FROM = 100
#: pseudo-observations added to the rectifier's sum of squares, in units of its range squared
PSEUDO = 2.0
METHOD = "ppi_plus_plus"


@dataclass(frozen=True)
class Corrected:
    """A prediction-powered estimate: ``estimate``, its interval (``low``, ``high``; None with ``reason``),
    ``standard_error``, the ``lam`` used, the numbers of known, judge-only and fixed items, the units, the
    interval's method and degrees of freedom."""

    estimate: float
    low: float | None
    high: float | None
    method: str
    reason: str | None
    standard_error: float | None
    lam: float
    known: int
    judge_only: int
    fixed: int
    units: int
    df: float | None


def power_tuning(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray) -> float:
    """PPI++'s lambda for a mean (``ppi_py.ppi._calc_lam_glm`` with an identity Hessian, clipped):
    ``(2/n) sum (y - ybar)(yhat - yhatbar) / (2 (1 + n / N) Var(yhat of L and U together, ddof 1))``
    clipped to [0, 1]; 0 when the judge's values do not vary."""
    n, big_n = y.size, yhat_unlabeled.size
    cov = 2.0 * float(np.sum((y - y.mean()) * (yhat - yhat.mean()))) / n
    both = np.concatenate([yhat, yhat_unlabeled])
    var = float(np.var(both, ddof=1)) if both.size > 1 else 0.0
    if var <= 0.0 or big_n == 0:
        return 0.0
    return float(np.clip(cov / (2.0 * (1.0 + n / big_n) * var), 0.0, 1.0))


def ppi_mean(y: Sequence[float], yhat: Sequence[float], yhat_unlabeled: Sequence[float], *,
             lam: float | None = None, level: float = LEVEL) -> tuple[float, float, float, float]:
    """PPI++'s mean and its normal interval exactly as ``ppi-python`` computes them: ``(estimate, low, high,
    lambda)`` with ``estimate = lambda mean(yhat_unlabeled) + mean(y - lambda yhat)`` and standard error
    ``sqrt(sd0(lambda yhat_unlabeled)^2 / N + sd0(y - lambda yhat)^2 / n)`` (``sd0``: standard deviation
    with divisor n). ``lam`` None: :func:`power_tuning`."""
    ya, yh, yu = (np.asarray(v, dtype=float) for v in (y, yhat, yhat_unlabeled))
    if lam is None:
        lam = power_tuning(ya, yh, yu)
    estimate = lam * float(yu.mean()) + float(np.mean(ya - lam * yh))
    se = math.sqrt(float(np.std(lam * yu)) ** 2 / yu.size + float(np.std(ya - lam * yh)) ** 2 / ya.size)
    q = _z(level)
    return estimate, estimate - q * se, estimate + q * se, float(lam)


def corrected_mean(raw: Sequence[float], known: Sequence[float | None], judged: Sequence[bool],
                   clusters: Sequence[Hashable] | None = None, *, bounds: tuple[float, float] = (0.0, 1.0),
                   lam: float | None = None, level: float = LEVEL, unit: str = "unit") -> Corrected:
    """The prediction-powered mean of one result's items (module docstring).

    ``raw[i]``: item i's value with the judge's verdicts; ``known[i]``: its value with the known verdicts
    (None: unknown); ``judged[i]``: whether its value depends on the judge at all (an item that does not
    must have ``known == raw``). ``clusters[i]``: item i's independent unit (None: every item is one).
    ``bounds``: the smallest and largest value an item can have (the interval stays inside).
    """
    yhat = np.asarray(raw, dtype=float)
    size = yhat.size
    if size == 0:
        raise ValueError("no items")
    is_judged = np.asarray(judged, dtype=bool)
    is_known = np.array([k is not None for k in known], dtype=bool)
    y = np.array([yhat[i] if k is None else float(k) for i, k in enumerate(known)], dtype=float)
    if np.any(~is_judged & (~is_known | (y != yhat))):
        raise ValueError("an item whose value does not depend on the judge has its value known, equal to raw")
    lab = is_judged & is_known
    unl = is_judged & ~is_known
    n, n_u = int(lab.sum()), int(unl.sum())
    codes, g = cluster_codes(clusters) if clusters is not None else (np.arange(size), size)
    common = dict(known=n, judge_only=n_u, fixed=int((~is_judged).sum()), units=g)
    if n_u == 0:  # every value is known: the plain mean, with the house's interval of it
        estimate = float(y.mean())
        try:
            num = np.bincount(codes, weights=y, minlength=g)
            den = np.bincount(codes, minlength=g).astype(float)
            got = ratio_interval(num, den, unit=unit)
            return Corrected(estimate, got.low, got.high, got.method, None, None, 0.0, df=None, **common)
        except NoInterval as exc:
            return Corrected(estimate, None, None, "cluster_wilson", str(exc), None, 0.0, df=None, **common)
    if n == 0:
        return Corrected(float(np.mean(np.where(unl, yhat, y))), None, None, METHOD,
                         "no judged item has a known value: the judge's errors are not measured", None, 1.0,
                         df=None, **common)
    if lam is None:
        lam = power_tuning(y[lab], yhat[lab], yhat[unl]) if n >= TUNE_FROM else 1.0
    rect = y[lab] - lam * yhat[lab]
    r_bar = float(rect.mean())
    z = np.where(unl, lam * yhat + r_bar, y)
    estimate = float(z.sum()) / size
    if n < MIN_KNOWN:
        return Corrected(estimate, None, None, METHOD,
                         f"{n} known value{'s' * (n != 1)}: a calibrated 95 % interval of the corrected value needs at "
                         f"least {MIN_KNOWN}", None, lam, df=None, **common)
    share_u = n_u / size
    psi = (z - estimate) / size
    psi[lab] += share_u * (rect - r_bar) / n
    per_unit = np.bincount(codes, weights=psi, minlength=g)
    g_known = int(np.unique(codes[lab]).size)
    if g < 2 or g_known < 2:
        return Corrected(estimate, None, None, METHOD,
                         f"{g_known} {unit}(s) hold a known value: a standard error needs at least 2", None, lam,
                         df=None, **common)
    lo, hi = bounds
    span = (hi - lo) * max(1.0, lam)
    var = g / (g - 1) * float(np.sum(per_unit * per_unit)) + (share_u / n) ** 2 * PSEUDO * span * span
    se = math.sqrt(var)
    df = float(min(g, g_known) - 1)
    q = _t(df, level)
    low, high = max(lo, estimate - q * se), min(hi, estimate + q * se)
    return Corrected(estimate, low, high, METHOD, None, se, lam, df=df, **common)


__all__ = ["METHOD", "MIN_KNOWN", "PSEUDO", "TUNE_FROM", "Corrected", "corrected_mean", "power_tuning", "ppi_mean"]
