"""Paired comparisons of two results on the same items (``benchscore compare``), vectorised with numpy.

Two results are compared on the same items (questions, cases, tasks, instances). Items are grouped
into *units* that are independent of each other (a condition table's questions form one unit;
without clusters every item is its own unit), and units may lie in *strata* with weights (the
TCSExam tracks). A number is ``scale x sum_s W_s x (sum_{units of s} num) / (sum_{units of s} den)``
(a mean is ``num`` = value, ``den`` = 1; a pooled rate over repetitions is ``num`` = successes,
``den`` = repetitions; an item with ``den`` 0 leaves the mean, like an unhit fill-in-blank answer).

One inference per comparison: the test and the interval come from the same procedure, so that the
interval excludes 0 exactly when the test rejects at the interval's level (:class:`PairInference`):

- the paired sign-flip permutation test (exact over all 2^G swap patterns when ``2^G <= resamples``,
  else ``resamples`` seeded random patterns), and as interval every difference ``delta`` that the same
  test, on the same patterns, does not reject when a's items are shifted by ``delta`` (test inversion);
  from :data:`LARGE_UNITS` units on, the paired t test and its inversion (the same test in the limit);
- for one 0/1 outcome per unit, the exact McNemar test, and as interval every difference compatible
  with the exact (Clopper-Pearson) interval of the share of discordant pairs won by a, at every
  discordance rate in its own exact interval;
- the minimum detectable effect of the test actually run at 80 % power (exact McNemar power; for the
  sign-flip test up to :data:`~benchscore.stats.power.SIMULATED_UNITS` units ``c x SE`` with ``c``
  simulated against the same test (:mod:`benchscore.stats.power`), past them its t approximation);
- :func:`holm`, :func:`rank_ranges`, :func:`letters` for three or more results.

Every random sign pattern is a row of bits drawn from a seeded generator and applied to all units
at once by a matrix product, in chunks: no Python loop per pattern.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from benchscore.stats.intervals import LEVEL, _t
from benchscore.stats.power import SIMULATED_UNITS, cached_mde_factor, unit_model

POWER = 0.80
#: the most cells (sign patterns x units) held at once; table lookups in smaller chunks (cache-sized)
_CHUNK_CELLS = 8_000_000
_RANDOM_BYTES = 16_000_000
_GROUP_BLOCK = 32
#: the relative tolerance under which a permuted statistic counts as equal to the observed one
#: (scipy.stats.permutation_test's: 100 machine epsilons)
_TOLERANCE = 100 * np.finfo(np.float64).eps
#: up to this many units the minimum detectable effect of the sign-flip test is simulated exactly
_EXACT_POWER_UNITS = 13
#: simulated data sets per power evaluation (common random numbers across effects)
_POWER_DRAWS = 400
#: from this many units on, the paired t test (and its interval) stands in for the sign-flip test: the
#: sign-flip distribution of a mean over so many units is normal to well within its Monte Carlo error,
#: and a leaderboard of 50 results (1,225 pairs) must not draw 10,000 patterns per pair
LARGE_UNITS = 1000


@dataclass(frozen=True)
class Units:
    """Paired units: per unit the numerator and denominator of each result, its stratum (0..S-1);
    ``weights[s]`` is stratum s's weight, ``scale`` multiplies the whole number (100: a percentage);
    ``bounds`` are the smallest and largest values the number can take (None: no bound)."""

    num_a: np.ndarray
    den_a: np.ndarray
    num_b: np.ndarray
    den_b: np.ndarray
    stratum: np.ndarray
    weights: np.ndarray
    scale: float = 1.0
    bounds: tuple[float | None, float | None] = (None, None)

    @property
    def n(self) -> int:
        return int(self.num_a.size)

    def difference_bounds(self) -> tuple[float, float]:
        """The smallest and largest difference two numbers within ``bounds`` can have."""
        lo, hi = self.bounds
        if lo is None or hi is None:
            return -math.inf, math.inf
        return lo - hi, hi - lo


def value(num: np.ndarray, den: np.ndarray, stratum: np.ndarray, weights: np.ndarray, scale: float) -> float:
    """``scale x sum_s W_s x sum num_s / sum den_s`` (NaN when a stratum has nothing to average)."""
    s = len(weights)
    top = np.bincount(stratum, weights=num, minlength=s)
    bottom = np.bincount(stratum, weights=den, minlength=s)
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(scale * np.sum(weights * top / bottom))


def smallest_attainable_p(n_units: int, *, exact: bool = True, resamples: int | None = None,
                          family: int = 1) -> float:
    """The smallest p-value a two-sided paired test on ``n_units`` units can give: every unit must go
    one way, ``2 / 2^n`` (sign flips and McNemar alike); ``2 / (R + 1)`` with R random patterns; times
    ``family`` (Holm's adjustment of the smallest of ``family`` p-values)."""
    p = 2.0 ** (1 - n_units) if n_units < 1075 else 0.0
    if not exact and resamples is not None:
        p = max(p, 2.0 / (resamples + 1))
    return min(1.0, family * p)


def _patterns(n: int, resamples: int) -> tuple[bool, int]:
    """Whether every sign pattern is enumerated (2^n <= resamples, as scipy.stats.permutation_test
    decides), and how many patterns there are."""
    if n < 63 and 2**n <= resamples:
        return True, 2**n
    return False, resamples


_BITS = ((np.arange(256)[:, None] >> (7 - np.arange(8))[None, :]) & 1).astype(np.float64)  # byte -> its 8 bits


def _sign_products(exact: bool, total: int, cols: np.ndarray, rng: np.random.Generator):
    """For chunks of sign patterns (rows: patterns; bit j of a pattern swaps unit j), yield
    ``patterns @ cols`` (one row per pattern).

    Exact enumeration: pattern number k has bit j = (k >> j) & 1, as a 0/1 matrix product. Random
    patterns are random bytes (byte g of pattern p at ``g * size + p`` of a chunk's bytes), bit
    7 - (j % 8) of byte j // 8 for unit j; their product is summed from a table of the 256 subset
    sums of each group of 8 units (one lookup per 8 units and pattern instead of 8 multiply-adds),
    a block of groups at a time for all patterns of a chunk (the loop runs over blocks of units,
    never over patterns).
    """
    n, k = cols.shape
    used = [j for j in range(k) if np.any(cols[:, j])]  # a column of zeros sums to zero: no lookups
    if not used:
        for start in range(0, total, _CHUNK_CELLS):
            yield np.zeros((min(_CHUNK_CELLS, total - start), k))
        return
    if len(used) < k:
        for part in _sign_products(exact, total, cols[:, used], rng):
            full = np.zeros((part.shape[0], k))
            full[:, used] = part
            yield full
        return
    if exact:
        step = max(1, _CHUNK_CELLS // max(1, n))
        for start in range(0, total, step):
            codes = np.arange(start, min(total, start + step), dtype=np.int64)[:, None]
            yield ((codes >> np.arange(n, dtype=np.int64)) & 1).astype(np.float64) @ cols
        return
    groups = (n + 7) // 8
    padded = np.zeros((groups * 8, k))
    padded[:n] = cols
    # per column, the 256 subset sums of each group of 8 units: tables[column, group, byte]
    tables = np.stack([padded[:, j].reshape(groups, 8) @ _BITS.T for j in range(k)])
    step = max(1, _RANDOM_BYTES // groups)
    for start in range(0, total, step):
        size = min(step, total - start)
        raw = np.frombuffer(rng.bytes(size * groups), dtype=np.uint8).reshape(groups, size)
        out = np.zeros((size, k))
        # a block of groups at a time: its tables stay in cache while every pattern of the chunk reads them
        for g0 in range(0, groups, _GROUP_BLOCK):
            g1 = min(groups, g0 + _GROUP_BLOCK)
            index = raw[g0:g1].astype(np.int32) + (np.arange(g1 - g0, dtype=np.int32) * 256)[:, None]
            for j in range(k):
                out[:, j] += np.take(tables[j, g0:g1].ravel(), index).sum(axis=0)
        yield out


def mcnemar_exact(a: np.ndarray, b: np.ndarray) -> float:
    """Exact McNemar p-value for paired 0/1 outcomes: with ``n10`` items 1 in a and 0 in b and ``n01``
    the reverse, the two-sided binomial test of ``n10`` out of ``n10 + n01`` at 1/2,
    ``min(1, 2 P(X <= min(n10, n01)))`` (1 when no pair is discordant)."""
    from scipy.stats import binom

    x, y = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    n10 = int(np.sum(x & ~y))
    n01 = int(np.sum(~x & y))
    if n10 + n01 == 0:
        return 1.0
    return float(min(1.0, 2.0 * binom.cdf(min(n10, n01), n10 + n01, 0.5)))


def _clopper_pearson(k: float, n: float, alpha: float) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of k successes in n at level 1 - alpha: the inversion of the
    two-sided exact binomial test that doubles the smaller tail."""
    from scipy.special import betaincinv

    low = 0.0 if k <= 0 else float(betaincinv(k, n - k + 1, alpha / 2))
    high = 1.0 if k >= n else float(betaincinv(k + 1, n - k, 1 - alpha / 2))
    return low, high


def _needed(alpha: float, total: float) -> int:
    """The smallest count m (patterns as extreme as the observed, itself included) with
    ``2 m / total >= alpha``: a difference is kept in the interval when both tails hold m."""
    return max(0, math.ceil(alpha * total / 2.0 - 1e-9))


class _Constant(ValueError):
    """No interval: every unit's paired difference is the same."""


@dataclass
class PairInference:
    """The inference of one paired comparison: the test's p-value and, from the same procedure, the
    interval and the minimum detectable effect at any level (``alpha``)."""

    a: float
    b: float
    difference: float
    n_units: int
    test: str
    p_value: float
    smallest_attainable_p: float
    standard_error: float | None
    bounds: tuple[float, float]
    _interval: Callable[[float], tuple[float, float]] = field(repr=False)
    _power: Callable[[float, float], float] = field(repr=False)
    _mde_approx: Callable[[float], float] | None = field(default=None, repr=False)
    #: the simulated power treats the observed spread as known; the effect is scaled by this factor so
    #: that the power averaged over the spread's estimation error is 80 % (:func:`spread_inflation`)
    _inflation: float = 1.0
    #: the largest difference the metric allows from here: ``upper bound - min(a, b)`` (inf: unbounded)
    reach: float = math.inf

    def interval(self, alpha: float = 1 - LEVEL) -> tuple[tuple[float, float] | None, str | None]:
        """``((low, high), None)``, inside what the metric allows, or ``(None, reason)`` when an end is
        unbounded (a metric without bounds, and too few units to exclude any difference)."""
        try:
            low, high = self._interval(alpha)
        except _Constant as exc:
            return None, str(exc)
        lo_b, hi_b = self.bounds
        low, high = max(low, lo_b), min(high, hi_b)
        if not (math.isfinite(low) and math.isfinite(high)):
            return None, (f"with {self.n_units} units no difference of this unbounded metric can be excluded "
                          f"(the smallest attainable p-value is {self.smallest_attainable_p:.3g})")
        return (float(low), float(high)), None

    def minimum_detectable_effect(self, alpha: float = 1 - LEVEL) -> tuple[float | None, str | None]:
        """The smallest true difference the test, at level ``alpha``, detects with 80 % power, or
        ``(None, reason)``."""
        if self.smallest_attainable_p >= alpha:
            return None, (f"with {self.n_units} units the smallest attainable p-value is "
                          f"{self.smallest_attainable_p:.3g}, not below {alpha:.3g}: no difference can be detected")
        reach = self.reach
        if self._mde_approx is not None:
            mde = self._mde_approx(alpha)
            if math.isfinite(mde) and mde <= reach:
                return float(mde), None
        else:
            top = reach if math.isfinite(reach) else None
            if top is None:
                top = 20.0 * (self.standard_error or 0.0)
            if top > 0 and self._power(top, alpha) >= POWER:
                low, high = 0.0, top
                for _ in range(40):
                    mid = (low + high) / 2
                    if self._power(mid, alpha) >= POWER:
                        high = mid
                    else:
                        low = mid
                    if high - low <= 1e-4 * top:
                        break
                mde = high * self._inflation
                if mde <= reach:
                    return float(mde), None
        return None, (f"with {self.n_units} units the test reaches 80 % power at no difference the metric allows "
                      f"here (at most {reach:.4g}: the weaker result cannot gain more)")


def _mcnemar(u: Units, a: float, b: float, alpha_default: float) -> PairInference:
    """One 0/1 outcome per unit, one stratum: the exact McNemar test and its inversion."""
    from scipy.special import bdtr

    x, y = u.num_a > 0.5, u.num_b > 0.5
    n = u.n
    n10 = int(np.sum(x & ~y))
    n01 = int(np.sum(~x & y))
    nd = n10 + n01
    p = mcnemar_exact(x, y)
    scale = u.scale * float(u.weights[0])

    def interval(alpha: float) -> tuple[float, float]:
        psi_lo, psi_hi = _clopper_pearson(nd, n, alpha)
        if nd == 0:
            return -scale * psi_hi, scale * psi_hi
        t_lo, t_hi = _clopper_pearson(n10, nd, alpha)
        lo_share, hi_share = 2 * t_lo - 1, 2 * t_hi - 1  # a's margin among discordant pairs
        low = scale * (psi_hi * lo_share if lo_share < 0 else psi_lo * lo_share)
        high = scale * (psi_hi * hi_share if hi_share > 0 else psi_lo * hi_share)
        return low, high

    counts = np.arange(n + 1)
    lower_of: dict[float, np.ndarray] = {}

    def lower_tails(alpha: float) -> np.ndarray:
        """Per number of discordant pairs d (0..n): the largest k with ``2 P(X <= k | d, 1/2) < alpha``
        (-1: none), the rejection region's lower part (the upper part mirrors it)."""
        if alpha not in lower_of:
            from scipy.stats import binom

            d = counts
            k = np.nan_to_num(binom.ppf(alpha / 2, d, 0.5), nan=-1.0).astype(np.int64)
            for _ in range(3):
                too_big = (k >= 0) & (2 * bdtr(k, d, 0.5) >= alpha)
                k = np.where(too_big, k - 1, k)
            for _ in range(3):
                room = (k + 1 < d) & (2 * bdtr(k + 1, d, 0.5) < alpha)
                k = np.where(room, k + 1, k)
            lower_of[alpha] = np.where(d > 0, k, -1)
        return lower_of[alpha]

    from scipy.special import betaincinv

    # the discordance rate is estimated: power is averaged over its Jeffreys posterior (21 quantiles)
    psi_draws = betaincinv(nd + 0.5, n - nd + 0.5, (np.arange(21) + 0.5) / 21)

    def power(effect: float, alpha: float) -> float:
        """Exact power of the two-sided exact McNemar test at a true difference ``effect`` (in the
        metric's unit), averaged over the plausible discordance rates ``psi`` (each at least the
        difference itself)."""
        from scipy.stats import binom

        delta = min(1.0, effect / scale)
        lower_all = lower_tails(alpha)
        out = 0.0
        for psi_draw in psi_draws:
            psi = min(1.0, max(float(psi_draw), delta))
            if psi <= 0:
                continue
            # the discordant counts the binomial(n, psi) weighs at all: 12 standard deviations and 40
            # counts either side of n psi (what lies beyond weighs less than 1e-30; exact for n <= 80)
            spread = 12.0 * math.sqrt(n * psi * (1.0 - psi)) + 40.0
            first, last = max(0, int(n * psi - spread)), min(n, int(math.ceil(n * psi + spread)))
            d = counts[first:last + 1]
            lower = lower_all[first:last + 1]
            safe = np.maximum(lower, 0)
            q = (psi + delta) / (2 * psi)
            reject = np.where(lower >= 0, bdtr(safe, d, q) + (1.0 - bdtr(d - safe - 1, d, q)), 0.0)
            out += float(np.sum(binom.pmf(d, n, psi) * reject))
        return out / psi_draws.size

    cached: dict[float, float] = {}

    def cached_power(effect: float, alpha: float) -> float:
        key = (round(effect, 12), alpha)
        if key not in cached:
            cached[key] = power(effect, alpha)
        return cached[key]

    return PairInference(a, b, a - b, n, "mcnemar_exact", p, smallest_attainable_p(n),
                         None, u.difference_bounds(), interval, cached_power, reach=_reach(u, a, b))


def _reach(u: Units, a: float, b: float) -> float:
    hi = u.bounds[1]
    return math.inf if hi is None else max(0.0, hi - min(a, b))


def infer_pair(units: Units, *, resamples: int, rng: np.random.Generator, binary: bool = False) -> PairInference:
    """Compare result a with result b on paired units (see the module doc).

    - difference ``d = value(a) - value(b)``;
    - test: with ``binary`` and one 0/1 item per unit (no clusters, one stratum), exact McNemar;
      otherwise the paired sign-flip permutation test: under "a and b are exchangeable inside each
      unit" every unit's a and b may be swapped, the statistic is recomputed for each sign pattern,
      and the two-sided p-value is ``min(1, 2 min(P(T* <= d), P(T* >= d)))`` as
      ``scipy.stats.permutation_test`` computes it (exact over all 2^G patterns when 2^G <=
      ``resamples``; else ``resamples`` random patterns, counted with the observed one);
    - interval (sign flips): shifting every item of a by ``theta`` moves the number by ``theta K``
      (``K = scale sum W_s``) and each pattern's statistic by a slope of its own; each pattern changes
      tail at one shift, so the differences the test keeps at level alpha are those between two order
      statistics of these crossing points (:meth:`PairInference.interval`);
    - ``standard_error``: the cluster-robust standard error of d from the units' linearised
      contributions ``u_j`` (each scaled by ``sqrt(G_s / (G_s - 1))``).
    """
    u = units
    s_count = len(u.weights)
    a = value(u.num_a, u.den_a, u.stratum, u.weights, u.scale)
    b = value(u.num_b, u.den_b, u.stratum, u.weights, u.scale)
    if binary and _one_binary_item_per_unit(u):
        return _mcnemar(u, a, b, 1 - LEVEL)
    d = a - b
    g = np.bincount(u.stratum, minlength=s_count)
    top_a = np.bincount(u.stratum, weights=u.num_a, minlength=s_count)
    top_b = np.bincount(u.stratum, weights=u.num_b, minlength=s_count)
    bot_a = np.bincount(u.stratum, weights=u.den_a, minlength=s_count)
    bot_b = np.bincount(u.stratum, weights=u.den_b, minlength=s_count)
    w = u.scale * u.weights
    with np.errstate(invalid="ignore", divide="ignore"):
        ra, rb = top_a / bot_a, top_b / bot_b
        infl = w[u.stratum] * ((u.num_a - ra[u.stratum] * u.den_a) / bot_a[u.stratum]
                               - (u.num_b - rb[u.stratum] * u.den_b) / bot_b[u.stratum])
        share = w[u.stratum] * (u.den_a / bot_a[u.stratum] + u.den_b / bot_b[u.stratum]) / 2.0
    infl, share = np.nan_to_num(infl), np.nan_to_num(share)
    k_total = float(np.sum(w))
    c = np.where(g >= 2, np.sqrt(g / np.maximum(g - 1.0, 1.0)), 0.0)
    scaled = c[u.stratum] * infl
    se = math.sqrt(float(scaled @ scaled)) if np.all(g >= 2) else None

    df = max(1.0, float(np.sum(np.maximum(g - 1, 0))))
    if u.n >= LARGE_UNITS and se is not None:
        return _paired_t(u, a, b, d, se, df, infl, share)
    exact, total = _patterns(u.n, resamples)
    onehot = np.zeros((u.n, s_count))
    onehot[np.arange(u.n), u.stratum] = 1.0
    cols = np.column_stack([onehot * (u.num_a - u.num_b)[:, None], onehot * (u.den_a - u.den_b)[:, None],
                            onehot * u.den_a[:, None]])
    alpha_e = np.empty(total)
    slope_e = np.empty(total)
    done = 0
    for prod in _sign_products(exact, total, cols, rng):
        k = prod.shape[0]
        p_num, p_den, p_dena = prod[:, :s_count], prod[:, s_count:2 * s_count], prod[:, 2 * s_count:]
        with np.errstate(invalid="ignore", divide="ignore"):
            new_a = bot_a - p_den
            new_b = bot_b + p_den
            alpha_e[done:done + k] = np.sum(w * ((top_a - p_num) / new_a - (top_b + p_num) / new_b), axis=1)
            slope_e[done:done + k] = np.sum(w * (p_dena / new_b - (bot_a - p_dena) / new_a), axis=1) + k_total
        done += k
    finite = np.isfinite(alpha_e) & np.isfinite(slope_e)
    alpha_e, slope_e = alpha_e[finite], slope_e[finite]
    adj = 0 if exact else 1
    n_patterns = alpha_e.size
    # a pattern within scipy's tolerance of the observed statistic ties with it at delta 0
    gap = alpha_e - d
    gap[np.abs(gap) <= abs(_TOLERANCE * d)] = 0.0
    moving = slope_e > 1e-12 * max(1.0, k_total)
    flat_gap = gap[~moving]
    always_ge = int(np.sum(flat_gap >= 0.0))
    always_le = int(np.sum(flat_gap <= 0.0))
    crossing = np.sort(-gap[moving] / slope_e[moving] * k_total)  # the shift (in the metric) at which each flips
    crossing[crossing == 0.0] = 0.0  # -0.0 -> 0.0
    ge0 = always_ge + int(np.searchsorted(crossing, 0.0, side="right"))
    le0 = always_le + int(crossing.size - np.searchsorted(crossing, 0.0, side="left"))
    p = float(min(1.0, 2.0 * min(ge0 + adj, le0 + adj) / (n_patterns + adj)))

    # every unit differs by the same amount (or not at all), up to rounding
    constant = bool(np.all(np.abs(infl) <= 1e-12 * max(1.0, float(np.max(np.abs(share))) if share.size else 1.0)))

    def interval(alpha: float) -> tuple[float, float]:
        if constant:
            if d == 0:
                raise _Constant(f"the two results are the same on every one of the {u.n} units: no spread of "
                                "differences to estimate, so no interval")
            raise _Constant(f"every one of the {u.n} units differs by exactly the same amount: the spread of the "
                            "differences cannot be estimated, so no interval (the test stands on its own)")
        need = _needed(alpha, n_patterns + adj) - adj
        low = -math.inf if always_ge >= need else (
            crossing[need - always_ge - 1] if need - always_ge <= crossing.size else math.inf)
        high = math.inf if always_le >= need else (
            crossing[crossing.size - (need - always_le)] if need - always_le <= crossing.size else -math.inf)
        return float(low), float(high)

    sap = smallest_attainable_p(u.n, exact=exact, resamples=resamples)
    test = "sign_flip_permutation_exact" if exact else "sign_flip_permutation_monte_carlo"
    power_rng_seed = int(rng.integers(0, 2**63 - 1))

    def power(effect: float, alpha: float) -> float:
        return _sign_flip_power(share / k_total, np.abs(scaled), effect, alpha, power_rng_seed)

    mde_approx = None
    if u.n <= SIMULATED_UNITS and se is not None and se > 0:
        mde_approx = _simulated_mde(share / k_total, u.stratum, infl, se, exact, total)
    elif u.n > _EXACT_POWER_UNITS and se is not None:
        def mde_approx(alpha: float) -> float:
            return (_t(df, 1 - alpha) + _t(df, 1 - 2 * (1 - POWER))) * se

    return PairInference(a, b, d, u.n, test, p, sap, se, u.difference_bounds(), interval, power, mde_approx,
                         spread_inflation(df) if mde_approx is None else 1.0, _reach(u, a, b))


def _simulated_mde(share: np.ndarray, stratum: np.ndarray, residual: np.ndarray, se: float, exact: bool,
                   patterns: int) -> Callable[[float], float]:
    """The MDE ``c x SE`` of the sign-flip test on these units, ``c`` simulated against the same test
    (:mod:`benchscore.stats.power`), once per level."""
    sigma = unit_model(share, stratum, residual)
    factors: dict[float, float] = {}

    def mde(alpha: float) -> float:
        if alpha not in factors:
            factors[alpha] = cached_mde_factor(share, stratum, sigma, alpha, exact=exact, patterns=patterns)
        return factors[alpha] * se

    return mde


@functools.lru_cache(maxsize=256)
def spread_inflation(df: float, level: float = LEVEL) -> float:
    """The factor k by which an effect detected with 80 % power at an estimated spread is scaled so
    that the power averaged over the estimate's error is 80 %: ``E[Phi(k s (z_a + z_b) - z_a)] = 0.8``
    with ``s^2 ~ chi^2(df) / df`` (1.13 at 7 degrees of freedom, 1.02 at 39)."""
    from scipy import optimize, stats

    za, zb = stats.norm.ppf(1 - (1 - level) / 2), stats.norm.ppf(POWER)
    s = np.sqrt(stats.chi2.ppf((np.arange(400) + 0.5) / 400, df) / df)
    return float(optimize.brentq(lambda k: float(np.mean(stats.norm.cdf(k * s * (za + zb) - za))) - POWER, 0.5, 10.0))


def _paired_t(u: Units, a: float, b: float, d: float, se: float, df: float, infl: np.ndarray,
              share: np.ndarray) -> PairInference:
    """The paired t test from :data:`LARGE_UNITS` units on: ``T = d / SE`` (SE cluster-robust, from the
    units' linearised contributions) against Student t with the units' degrees of freedom, and as its
    interval the inversion of the same test, ``d -+ t(df, 1 - alpha/2) SE``."""
    from scipy.special import stdtr

    constant = bool(np.all(np.abs(infl) <= 1e-12 * max(1.0, float(np.max(np.abs(share))))))
    if constant or se <= 0.0:
        p = 1.0 if d == 0 else 0.0
    else:
        p = float(min(1.0, 2.0 * stdtr(df, -abs(d) / se)))

    def interval(alpha: float) -> tuple[float, float]:
        if constant or se <= 0.0:
            raise _Constant(f"every one of the {u.n} units differs by exactly the same amount: the spread of the "
                            "differences cannot be estimated, so no interval (the test stands on its own)")
        half = _t(df, 1 - alpha) * se
        return d - half, d + half

    def power(effect: float, alpha: float) -> float:
        from scipy.special import stdtr as cdf

        q = _t(df, 1 - alpha)
        return float(cdf(df, effect / se - q) + cdf(df, -effect / se - q))

    def mde_approx(alpha: float) -> float:
        return (_t(df, 1 - alpha) + _t(df, 1 - 2 * (1 - POWER))) * se

    return PairInference(a, b, d, u.n, "paired_t", p, smallest_attainable_p(u.n), se, u.difference_bounds(),
                         interval, power, mde_approx, 1.0, _reach(u, a, b))


def _sign_flip_power(share: np.ndarray, spread: np.ndarray, effect: float, alpha: float, seed: int) -> float:
    """Power of the exact sign-flip test at a true difference ``effect``: simulated data sets whose unit
    contributions are ``effect x share_j + e_j x spread_j`` (``e_j`` random signs: the observed paired
    spread around the shift, kept unit by unit), each tested over all 2^G patterns."""
    n = share.size
    rng = np.random.default_rng(seed)
    signs = rng.choice((-1.0, 1.0), size=(n, _POWER_DRAWS))
    x = effect * share[:, None] + signs * spread[:, None]
    obs = x.sum(axis=0)
    total = 2**n
    ge = np.zeros(_POWER_DRAWS)
    le = np.zeros(_POWER_DRAWS)
    step = max(1, _CHUNK_CELLS // max(1, _POWER_DRAWS))
    bits = np.arange(n, dtype=np.int64)
    for start in range(0, total, step):
        codes = np.arange(start, min(total, start + step), dtype=np.int64)[:, None]
        flipped = ((codes >> bits) & 1).astype(np.float64) @ x  # sum over the swapped units, per data set
        tol = np.abs(_TOLERANCE * obs)
        ge += np.sum(flipped <= tol / 2, axis=0)  # swapping them moves the statistic by -2 x flipped
        le += np.sum(flipped >= -tol / 2, axis=0)
    pv = np.minimum(1.0, 2.0 * np.minimum(ge, le) / total)
    return float(np.mean(pv < alpha))


def _one_binary_item_per_unit(u: Units) -> bool:
    return (len(u.weights) == 1 and bool(np.all(u.den_a == 1)) and bool(np.all(u.den_b == 1))
            and bool(np.all(np.isin(u.num_a, (0.0, 1.0)))) and bool(np.all(np.isin(u.num_b, (0.0, 1.0)))))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values: sorted ascending, ``p_(i)`` becomes
    ``max_{k <= i} min(1, (m - k + 1) p_(k))``; returned in the given order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        out[i] = running
    return out


def holm_level(adjusted: Sequence[float], alpha: float) -> float:
    """The level of the intervals that match Holm's verdicts: with m comparisons of which r are
    separated (adjusted p < alpha), ``alpha / max(1, m - r)``. A separated pair's p-value is below
    it (Holm tested it at ``alpha / (m - k + 1) <= alpha / (m - r)``) and every other pair's is not,
    so each interval excludes 0 exactly when Holm separates its pair; with nothing separated these are
    Bonferroni's simultaneous intervals."""
    m = len(adjusted)
    r = sum(1 for p in adjusted if p < alpha)
    return alpha / max(1, m - r)


def rank_ranges(values: Sequence[float], separated: Callable[[int, int], bool]) -> list[list[int]]:
    """Per result, its 95 % rank interval ``[1 + results separated above it, N - results separated below
    it]`` (``separated(i, j)``: Holm separates i and j; above: a larger value). Because Holm keeps the
    chance of any false separation at 5 %, all the intervals hold together at 95 % (the confidence
    sets for ranks of Mogstad, Romano, Shaikh and Wilhelm 2023, with Holm's step-down test)."""
    n = len(values)
    out = []
    for i in range(n):
        better = sum(1 for j in range(n) if values[j] > values[i] and separated(i, j))
        worse = sum(1 for j in range(n) if values[j] < values[i] and separated(i, j))
        out.append([1 + better, n - worse])
    return out


#: the most groups a board labels: one letter each up to 26 groups, two letters each (aa .. zz) past 26
MAX_GROUPS = 26 * 26
#: the most steps the search for groups may take before the board is called too large to label
_GROUP_STEPS = 200_000
_ALPHABET = "abcdefghijklmnopqrstuvwxyz"


class TooManyGroups(ValueError):
    """The results form more groups than two-letter labels can name (or than the search affords): the
    rank interval alone says where each result can stand; ``str(exc)`` says why."""


def letters(order: Sequence[int], separated: Callable[[int, int], bool]) -> dict[int, list[str]]:
    """Group labels (the compact letter display, Piepho 2004): per result, the labels of the groups it
    belongs to, in label order. A group is a largest set of results no two of which are separated
    (a maximal clique of the graph "not separated"; Piepho's insert-absorb ends with exactly these),
    so two results share a label if and only if they are not separated. ``order`` lists the results
    best first; groups are labelled in that order (``a`` for the group of the best, groups compared by
    their members' places). A chain (A~B, B~C, A and C separated) reads ``[a]``, ``[a, b]``, ``[b]``.
    There is no order between labels, only membership.

    Labels: ``a`` .. ``z`` up to 26 groups; past 26 every label has two letters (``aa``, ``ab``, ..,
    ``zz``), so no label is part of another; always shown separated (``a, b``), never run together.
    Raises :class:`TooManyGroups` past :data:`MAX_GROUPS` groups (or when finding them takes more than
    :data:`_GROUP_STEPS` steps of the Bron-Kerbosch search with Tomita's pivot).
    """
    n = len(order)
    # bit y of near[x]: the results at places x and y are not separated
    near = [0] * n
    for x in range(n):
        for y in range(x + 1, n):
            if not separated(order[x], order[y]):
                near[x] |= 1 << y
                near[y] |= 1 << x
    groups = _maximal_cliques(near)
    groups.sort(key=_places)
    if len(groups) <= 26:
        names = list(_ALPHABET[:len(groups)])
    else:
        names = [_ALPHABET[k // 26] + _ALPHABET[k % 26] for k in range(len(groups))]
    out: dict[int, list[str]] = {r: [] for r in order}
    for name, group in zip(names, groups, strict=True):
        for x in _places(group):
            out[order[x]].append(name)
    return out


def _places(bits: int) -> list[int]:
    """The places whose bit is set, ascending."""
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


def _maximal_cliques(near: list[int]) -> list[int]:
    """Every maximal clique of the graph whose neighbourhoods are ``near`` (bitsets), as bitsets: the
    Bron-Kerbosch search with Tomita's pivot (each branch skips the pivot's neighbours), iterative."""
    n = len(near)
    found: list[int] = []
    steps = 0
    stack = [(0, (1 << n) - 1, 0)]  # (clique R, candidates P, excluded X)
    while stack:
        r, p, x = stack.pop()
        steps += 1
        if steps > _GROUP_STEPS:
            raise TooManyGroups(f"finding the groups of {n} results takes more than {_GROUP_STEPS:,} steps: too many "
                                "to label; the rank interval alone says where each result can stand")
        if not p:
            if not x:
                found.append(r)
                if len(found) > MAX_GROUPS:
                    raise TooManyGroups(f"the {n} results form more than {MAX_GROUPS} groups, more than two-letter "
                                        "labels name; the rank interval alone says where each result can stand")
            continue
        pivot = max(_places(p | x), key=lambda u: (p & near[u]).bit_count())
        for v in _places(p & ~near[pivot]):
            stack.append((r | (1 << v), p & near[v], x & near[v]))
            p &= ~(1 << v)
            x |= 1 << v
    return found
