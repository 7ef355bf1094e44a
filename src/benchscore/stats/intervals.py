"""Statistics shared by the domains: a few moments, and the 95 % intervals written beside headline numbers.

Every interval is written next to the number it qualifies, never instead of it, in one shape
(:func:`beside`)::

    {"ci95": [low, high], "ci_method": "cluster_wilson"}                 # an interval
    {"ci95": null, "ci_method": "cluster_wilson", "ci_reason": "..."}    # none, and why

Every headline number benchscore qualifies is a ratio over *independent units* (condition tables,
cases, tasks, scored instances): ``R = sum_g num_g / sum_g den_g``, where unit ``g`` contributes the
sum of its items' values ``num_g`` and its number of items ``den_g`` (a unit's items may depend on
each other in any way; units must not). :func:`ratio_interval` picks the method from what the
values can be, each chosen by the calibration simulations of ``tests/common/calibration`` (the table
in docs/statistics.md is generated from them):

- ``exact_mid_p``: 0/1 outcomes, one per unit (Pass@1 of cases, a track of one-attempt theorem
  tasks): the exact binomial interval with mid-p tails (:func:`mid_p`);
- ``cluster_wilson``: values in [0, 1], any number per unit: the Wilson score interval on the
  effective sample size ``R (1 - R) / V`` (``V`` the cluster-robust CR2 variance of ``R``) at the
  Student t quantile of the Bell-McCaffrey degrees of freedom (:func:`cluster_wilson`);
- ``units_wilson``: the same values when the data cannot estimate ``V`` (fewer than
  ``min(5, ceil(G / 3))`` units hold a success, or a failure, or less than one unit's worth of either):
  the Wilson interval that counts every unit as a single 0/1 outcome, which holds whatever the
  dependence inside a unit (wider);
- ``skew_corrected_t``: values without an upper bound (construction rewards, yield ratios): the t
  interval with Hall's (1992) skewness correction, from :data:`MIN_UNITS_UNBOUNDED` units on, when
  their tail is short enough for their number (:func:`tail_check`, issue 38);
- ``mover``: a weighted sum of means with their own intervals (the TCSExam index), by the method
  of variance estimates recovery (Zou and Donner 2008).

Below the smallest number of units at which a method holds its level (:data:`MIN_UNITS_BOUNDED`,
:data:`MIN_UNITS_UNBOUNDED`), there is no interval: :class:`NoInterval` says how many units there
were and how many are needed. No interval is ever a single point. The paired functions of
``benchscore compare`` live in :mod:`benchscore.stats.paired`.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: the confidence level of every interval benchscore writes (the key is ``ci95``)
LEVEL = 0.95
#: the seed of the comparisons' random sign patterns when a command is not told otherwise
DEFAULT_SEED = 16
#: the ``ci_method`` names (docs/statistics.md explains each)
METHODS = ("exact_mid_p", "cluster_wilson", "units_wilson", "skew_corrected_t", "mover", "dirichlet_split",
           "ppi_plus_plus")
#: the fewest units for an interval of values in [0, 1] (the calibration grid starts here)
MIN_UNITS_BOUNDED = 3
#: the fewest units for an interval of unbounded values (skewed rewards: docs/statistics.md)
MIN_UNITS_UNBOUNDED = 20
#: a unit "holds" successes or failures: ``cluster_wilson`` needs ``min(5, ceil(G / 3))`` of each
_MINORITY_UNITS = 5
#: the tail rule of unbounded values (issue 38): the largest log standard deviation of the units' positive
#: means at which ``skew_corrected_t`` holds 93 %, by units (interpolated in log units between the points,
#: the last one's from there on); chosen by the heavy-tail grid of docs/statistics.md
TAIL_LOG_SD = ((20, 0.70), (40, 0.75), (80, 1.20))
#: the fewest units above 0 from which the tail is judged
_TAIL_UNITS = 3


class NoInterval(ValueError):
    """The data cannot support an interval; ``str(exc)`` says why (written as ``ci_reason``)."""


@dataclass(frozen=True)
class Interval:
    """An interval and the method that made it (``ci_method``)."""

    low: float
    high: float
    method: str


def phi(z):
    """Standard normal CDF, Phi(z) = P(Z <= z), by ``scipy.special.ndtr`` (imported on first use)."""
    from scipy.special import ndtr

    return ndtr(z)


def sample_std(values: Sequence[float] | np.ndarray) -> float:
    """Sample standard deviation s = sqrt(sum((x - mean)^2) / (n - 1)); needs n >= 2."""
    arr = np.asarray(values, dtype=float)
    if arr.size < 2:
        raise ValueError("sample_std needs at least two values")
    return float(np.std(arr, ddof=1))


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean of a non-empty sequence (math.fsum for exactness)."""
    if len(values) == 0:
        raise ValueError("mean of an empty sequence")
    return math.fsum(values) / len(values)


# --- the shape written beside a number ---------------------------------------------------------------


def beside(compute: Any, *, scale: float = 1.0, unavailable: str | None = None,
           method: str | None = None) -> dict[str, Any]:
    """The interval record written beside a number: ``{"ci95": [low, high], "ci_method": method}``.

    ``compute`` is a zero-argument callable returning an :class:`Interval`; a :class:`NoInterval`
    it raises becomes ``{"ci95": None, "ci_method": method, "ci_reason": reason}``. ``unavailable``
    (a reason) skips the computation: the number itself is null (an incomplete result). Bounds are
    multiplied by ``scale`` (a percentage is a proportion times 100). ``method`` names the method
    of a null interval (the one the number would have had).
    """
    if unavailable is not None:
        return {"ci95": None, "ci_method": method, "ci_reason": unavailable}
    try:
        got = compute()
    except NoInterval as exc:
        return {"ci95": None, "ci_method": method, "ci_reason": str(exc)}
    if got.method not in METHODS:
        raise ValueError(f"unknown interval method {got.method!r}")
    return {"ci95": [float(got.low) * scale, float(got.high) * scale], "ci_method": got.method}


def rng_for(seed: int, *names: str) -> np.random.Generator:
    """A generator for one computation: the seed plus the names of what it is for (crc32), so adding
    or removing one number never changes the random draws of another."""
    return np.random.default_rng([int(seed), *(zlib.crc32(n.encode("utf-8")) for n in names)])


def _z(level: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(1.0 - (1.0 - level) / 2.0))


def _t(df: float, level: float) -> float:
    """The two-sided Student t quantile ``t(df)`` of ``level`` (``scipy.special.stdtrit``)."""
    from scipy.special import stdtrit

    return float(stdtrit(df, 1.0 - (1.0 - level) / 2.0))


def cluster_codes(clusters: Iterable[Hashable]) -> tuple[np.ndarray, int]:
    """Integer codes 0..G-1 for cluster labels (in order of first appearance) and G."""
    seen: dict[Hashable, int] = {}
    codes = np.fromiter((seen.setdefault(c, len(seen)) for c in clusters), dtype=np.int64)
    return codes, len(seen)


def units_of(values, clusters: Iterable[Hashable] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per independent unit, ``(num, den)``: the sum of its items' values and its number of items.
    ``clusters[i]`` labels item i's unit (None: every item is its own unit)."""
    y = np.asarray(values, dtype=float)
    if clusters is None:
        return y.copy(), np.ones_like(y)
    codes, g = cluster_codes(clusters)
    if codes.size != y.size:
        raise ValueError("clusters must label every value")
    return np.bincount(codes, weights=y, minlength=g), np.bincount(codes, minlength=g).astype(float)


def _plural(n: int, unit: str) -> str:
    return f"{n} {unit}{'' if n == 1 else 's'}"


def _too_few(g: int, need: int, unit: str, why: str = "") -> NoInterval:
    return NoInterval(f"{_plural(g, unit)}: a calibrated 95 % interval needs at least {need} {unit}s{why}")


# --- methods -----------------------------------------------------------------------------------------


def mid_p(successes: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The exact mid-p interval of a binomial proportion: the ``p`` at which the mid-p tail of the
    observed count, ``P(X > k) + P(X = k) / 2`` (lower end) or ``P(X < k) + P(X = k) / 2`` (upper
    end), equals ``(1 - level) / 2``; 0 at ``k = 0`` and 1 at ``k = n``. It assumes ``n``
    independent 0/1 outcomes with one success probability; its coverage stays close to the level
    at every ``p`` for small ``n``, above it where the few possible counts force it (Agresti and
    Gottard 2007; docs/statistics.md)."""
    from scipy.optimize import brentq
    from scipy.special import bdtr, bdtrc

    k, n = int(successes), int(n)
    if n <= 0:
        raise NoInterval("no items")
    tail = (1.0 - level) / 2.0

    def pmf(p: float) -> float:
        return bdtr(k, n, p) - (bdtr(k - 1, n, p) if k > 0 else 0.0)

    def upper_tail(p: float) -> float:  # P(X > k) + P(X = k) / 2, increasing in p
        return bdtrc(k, n, p) + 0.5 * pmf(p) - tail

    def lower_tail(p: float) -> float:  # P(X < k) + P(X = k) / 2, decreasing in p
        return (bdtr(k - 1, n, p) if k > 0 else 0.0) + 0.5 * pmf(p) - tail

    low = 0.0 if k == 0 else brentq(upper_tail, 0.0, 1.0, xtol=1e-14)
    high = 1.0 if k == n else brentq(lower_tail, 0.0, 1.0, xtol=1e-14)
    return float(low), float(high)


def _wilson(p: float, n: float, q: float) -> tuple[float, float]:
    """Wilson's score interval of a proportion ``p`` on ``n`` (possibly fractional) items, quantile ``q``:
    ``(p + q^2/2n -+ q sqrt(p(1-p)/n + q^2/4n^2)) / (1 + q^2/n)``."""
    denom = 1.0 + q * q / n
    centre = (p + q * q / (2.0 * n)) / denom
    half = q * math.sqrt(p * (1.0 - p) / n + q * q / (4.0 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def cr2(num: np.ndarray, den: np.ndarray) -> tuple[float, float, float]:
    """``(R, V, df)`` of the ratio ``R = sum num / sum den`` over G independent units: the CR2
    (bias-reduced, Bell and McCaffrey 2002) variance

    ``V = sum_g (num_g - R den_g)^2 / (1 - h_g) / D^2``,  ``h_g = den_g / D``,  ``D = sum den``,

    and its Bell-McCaffrey degrees of freedom ``D^2 / (sum den_g^2 + ((sum a_g)^2 - sum a_g^2) / D^2)``
    with ``a_g = den_g^2 / (1 - h_g)`` (G - 1 when the units are equal; fewer when one unit is large).
    Units with ``den`` 0 hold nothing and are left out by the caller."""
    d = float(den.sum())
    r = float(num.sum()) / d
    e = num - r * den
    h = den / d
    v = float(np.sum(e * e / (1.0 - h))) / (d * d)
    a = den * den / (1.0 - h)
    sa = float(a.sum())
    df = d * d / (float(np.sum(den * den)) + (sa * sa - float(np.sum(a * a))) / (d * d))
    return r, v, df


def _spread(num: np.ndarray, den: np.ndarray, r: float, v: float) -> bool:
    """Whether the units' means differ beyond rounding (a variance of 1e-33 is rounding, not spread)."""
    return v > 0.0 and not np.allclose(num, r * den, rtol=1e-12, atol=1e-15 * max(1.0, abs(r)))


def kish(den: np.ndarray) -> float:
    """Kish's effective number of units ``(sum den)^2 / sum den^2`` (G for units of equal size)."""
    return float(den.sum()) ** 2 / float(np.sum(den * den))


def cluster_wilson(num, den, *, level: float = LEVEL) -> Interval:
    """Interval of ``R = sum num / sum den`` for values in [0, 1] over G independent units.

    Wilson's score interval on the effective sample size ``n_eff = R (1 - R) / V`` (``V`` from
    :func:`cr2`: the spread between units, whatever the dependence inside them), with the Student t
    quantile of the Bell-McCaffrey degrees of freedom in place of the normal one (``cluster_wilson``).
    Like Wilson's, it stays in [0, 1] and is never a point. When the data cannot estimate ``V`` (fewer
    than ``min(5, ceil(G / 3))`` units hold a success ``num > 0``, or a failure ``num < den``, or
    ``G_kish min(R, 1 - R) < 1``), every unit counts as one 0/1 outcome: Wilson on ``n = G_kish``
    (``units_wilson``), which holds whatever the dependence and is wider. Needs
    :data:`MIN_UNITS_BOUNDED` units (calibration: docs/statistics.md)."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    r, v, df = cr2(num, den)
    g = num.size
    g_eff = kish(den)
    need = min(_MINORITY_UNITS, math.ceil(g / 3))
    held = min(int(np.count_nonzero(num > 0)), int(np.count_nonzero(num < den)))
    if _spread(num, den, r, v) and held >= need and g_eff * min(r, 1.0 - r) >= 1.0:
        low, high = _wilson(r, r * (1.0 - r) / v, _t(df, level))
        return Interval(low, high, "cluster_wilson")
    low, high = _wilson(r, g_eff, _z(level))
    return Interval(low, high, "units_wilson")


def skew_corrected_t(num, den, *, level: float = LEVEL) -> Interval:
    """Interval of ``R = sum num / sum den`` for values with no upper bound, over G independent units:
    the t interval of the CR2 standard error (:func:`cr2`) with Hall's (1992) monotone skewness
    correction. With ``T = (R - mu) / SE`` and ``gamma`` the skewness of the units' residuals
    ``num_g - R den_g``, ``h(T) = T + a T^2 + a^2 T^3 / 3 + b`` (``a = gamma / (3 sqrt G)``,
    ``b = gamma / (6 sqrt G)``) is close to Student t; the interval is ``R - SE h^-1(+-t)``. Needs
    :data:`MIN_UNITS_UNBOUNDED` units: skewed rewards (log-normal) are undercovered below that."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    r, v, df = cr2(num, den)
    if not _spread(num, den, r, v):
        raise NoInterval(f"every one of the {num.size} units has the same value: their spread cannot be estimated")
    e = num - r * den
    g = num.size
    gamma = float(np.mean(e**3)) / float(np.mean(e**2)) ** 1.5
    a, b = gamma / (3.0 * math.sqrt(g)), gamma / (6.0 * math.sqrt(g))
    q = _t(df, level)

    def inverse(h: float) -> float:
        return (math.copysign(abs(1.0 + 3.0 * a * (h - b)) ** (1.0 / 3.0), 1.0 + 3.0 * a * (h - b)) - 1.0) / a \
            if abs(a) > 1e-12 else h - b

    se = math.sqrt(v)
    return Interval(r - se * inverse(q), r - se * inverse(-q), "skew_corrected_t")


def ratio_interval(num, den, *, bounded: bool = True, level: float = LEVEL, unit: str = "unit") -> Interval:
    """The interval of ``R = sum num / sum den`` over independent units (one method, chosen here):
    ``exact_mid_p`` for one 0/1 outcome per unit, :func:`cluster_wilson` for other values in [0, 1]
    (``bounded``), :func:`skew_corrected_t` for unbounded values. Units with ``den`` 0 are left out.
    Raises :class:`NoInterval` below the calibrated number of units (``unit`` names them)."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    keep = den > 0
    num, den = num[keep], den[keep]
    g = int(num.size)
    if g == 0:
        raise NoInterval("no items")
    if not bounded:
        if g < MIN_UNITS_UNBOUNDED:
            raise _too_few(g, MIN_UNITS_UNBOUNDED, unit, " (its values have no upper bound, so a few can hide a long tail)")
        tail_check(num, den, unit)
        return skew_corrected_t(num, den, level=level)
    if g < MIN_UNITS_BOUNDED:
        raise _too_few(g, MIN_UNITS_BOUNDED, unit)
    if np.all(den == 1.0) and np.all((num == 0.0) | (num == 1.0)):
        low, high = mid_p(int(num.sum()), g, level)
        return Interval(low, high, "exact_mid_p")
    return cluster_wilson(num, den, level=level)


def tail_limit(g: int) -> float:
    """The largest log standard deviation :func:`tail_check` accepts at ``g`` units (:data:`TAIL_LOG_SD`)."""
    xs = [math.log(n) for n, _ in TAIL_LOG_SD]
    return float(np.interp(math.log(g), xs, [t for _, t in TAIL_LOG_SD]))


def tail_check(num, den, unit: str = "unit") -> None:
    """Whether the tail of unbounded values lets ``skew_corrected_t`` hold its level (issue 38): the
    standard deviation of the logs of the units' positive means ``num / den`` (how far the values spread
    on a multiplicative scale, which a sample shows even when it misses the largest values, unlike its
    skewness or its largest share) must be at most :func:`tail_limit` of the number of units. Raises
    :class:`NoInterval` saying both numbers. Units below 0 leave the rule to the floor alone; fewer than
    :data:`_TAIL_UNITS` units above 0 give no interval (the tail cannot be judged).

    Chosen by simulation (docs/statistics.md, heavy tails): log-normal rewards of log sd 0.5 keep their
    interval at 20-80 units (93.5-95 % coverage); of log sd 1.0 (91-93 % before) from 80 units; of log sd
    1.5 (89-92 % before) get none up to 80."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    means = num / den
    if np.any(means < 0):
        return
    positive = means[means > 0]
    g = int(means.size)
    if positive.size < _TAIL_UNITS:
        raise NoInterval(f"{_plural(int(positive.size), unit)} of {g} above 0: the tail of values with no upper "
                         f"bound cannot be judged, so no calibrated 95 % interval")
    spread = float(np.std(np.log(positive), ddof=1))
    limit = tail_limit(g)
    if spread > limit:
        raise NoInterval(f"{_plural(g, unit)} whose values spread by a log standard deviation of {spread:.2f}: a "
                         f"calibrated 95 % interval of values with no upper bound needs at most {limit:.2f} at "
                         f"{g} {unit}s (0.70 at 20, 0.75 at 40, 1.20 from 80): a tail this long needs more {unit}s")


def item_interval(values, clusters: Iterable[Hashable] | None = None, *, bounded: bool = True,
                  level: float = LEVEL, unit: str = "unit") -> Interval:
    """:func:`ratio_interval` of the mean of ``values``, whose items form units by ``clusters``."""
    num, den = units_of(values, clusters)
    return ratio_interval(num, den, bounded=bounded, level=level, unit=unit)


def standard_error(num, den) -> float:
    """Standard error of ``R = sum num / sum den`` over G independent units: ``sqrt(V)``, ``V`` the
    CR2 variance of :func:`cr2` (for one item per unit, ``s / sqrt(n)``). Units with ``den`` 0 are left
    out. Raises :class:`NoInterval` with fewer than two units (no spread can be estimated)."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    keep = den > 0
    if int(np.count_nonzero(keep)) < 2:
        raise NoInterval(f"{int(np.count_nonzero(keep))} unit(s): a standard error needs at least 2")
    return math.sqrt(max(0.0, cr2(num[keep], den[keep])[1]))


def mover(estimates: Sequence[float], intervals: Sequence[Interval], weights: Sequence[float]) -> Interval:
    """Interval of ``sum w_i m_i`` from each mean's own interval ``[l_i, u_i]`` (independent means), by the
    method of variance estimates recovery (Zou and Donner 2008): ``L = S - sqrt(sum w_i^2 (m_i - l_i)^2)``,
    ``U = S + sqrt(sum w_i^2 (u_i - m_i)^2)`` (weights >= 0)."""
    m = np.asarray(estimates, dtype=float)
    w = np.asarray(weights, dtype=float)
    lo = np.array([i.low for i in intervals])
    hi = np.array([i.high for i in intervals])
    s = float(np.sum(w * m))
    return Interval(s - math.sqrt(float(np.sum((w * (m - lo)) ** 2))),
                    s + math.sqrt(float(np.sum((w * (hi - m)) ** 2))), "mover")
