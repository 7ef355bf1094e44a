"""Paired comparisons of two outputs of one contract (``benchscore compare``), vectorised with numpy.

Two outputs are compared on the same items (questions, cases, tasks, instances). Items are grouped
into *units* that are independent of each other (a condition table's questions form one unit;
without clusters every item is its own unit), and units may lie in *strata* with weights (the
TCSExam tracks). A number is ``scale x sum_s W_s x (sum_{units of s} num) / (sum_{units of s} den)``
(a mean is ``num`` = value, ``den`` = 1; a pooled rate over repetitions is ``num`` = successes,
``den`` = repetitions; an item with ``den`` 0 leaves the mean, like an unhit fill-in-blank answer).

- :func:`compare_pair`: the difference ``a - b``, its 95 % interval by the paired wild bootstrap,
  the p-value of a paired sign-flip permutation test (exact when there are few units, else Monte
  Carlo with a recorded seed) or of the exact McNemar test (0/1 items, one per unit), and the
  minimum detectable effect at 80 % power;
- :func:`holm`: Holm's step-down adjustment of several p-values;
- :func:`tie_groups`: a leaderboard of groups whose members are indistinguishable from the group's
  leader.

Every random sign pattern is a row of bits drawn from a seeded generator and applied to all units
at once by a matrix product, in chunks: no Python loop per resample.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .stats import LEVEL, NoInterval, _t, _t_percentile, satterthwaite_df

POWER = 0.80
#: the most cells (sign patterns x units) held at once; table lookups in smaller chunks (cache-sized)
_CHUNK_CELLS = 8_000_000
_RANDOM_BYTES = 16_000_000
_GROUP_BLOCK = 32
#: the relative tolerance under which a permuted statistic counts as equal to the observed one
#: (scipy.stats.permutation_test's: 100 machine epsilons)
_TOLERANCE = 100 * np.finfo(np.float64).eps


@dataclass(frozen=True)
class Units:
    """Paired units: per unit the numerator and denominator of each output, its stratum (0..S-1);
    ``weights[s]`` is stratum s's weight, ``scale`` multiplies the whole number (100: a percentage)."""

    num_a: np.ndarray
    den_a: np.ndarray
    num_b: np.ndarray
    den_b: np.ndarray
    stratum: np.ndarray
    weights: np.ndarray
    scale: float = 1.0

    @property
    def n(self) -> int:
        return int(self.num_a.size)


def value(num: np.ndarray, den: np.ndarray, stratum: np.ndarray, weights: np.ndarray, scale: float) -> float:
    """``scale x sum_s W_s x sum num_s / sum den_s`` (NaN when a stratum has nothing to average)."""
    s = len(weights)
    top = np.bincount(stratum, weights=num, minlength=s)
    bottom = np.bincount(stratum, weights=den, minlength=s)
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(scale * np.sum(weights * top / bottom))


@dataclass(frozen=True)
class PairResult:
    a: float
    b: float
    difference: float
    ci95: tuple[float, float] | None
    ci_reason: str | None
    p_value: float
    test: str
    n_units: int
    standard_error: float | None
    minimum_detectable_effect: float | None


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


def compare_pair(units: Units, *, resamples: int, rng: np.random.Generator, binary: bool = False,
                 level: float = LEVEL) -> PairResult:
    """Compare output a with output b on paired units (see the module doc).

    - difference ``d = value(a) - value(b)``;
    - 95 % interval: the paired wild bootstrap. Each unit's contribution to ``d`` (its linearised
      influence ``u_j``, which sums to 0 in each stratum) gets a random sign; ``d* = d + sum_s
      sqrt(G_s / (G_s - 1)) sum_j e_j u_j`` with ``e_j = +-1``; read at the t percentile of the
      Welch-Satterthwaite degrees of freedom of the strata (as the intervals of one output are);
    - test: with ``binary`` and one 0/1 item per unit (no clusters, one stratum), exact McNemar;
      otherwise the paired sign-flip permutation test: under "a and b are exchangeable inside each
      unit" every unit's a and b may be swapped, the statistic is recomputed for each sign pattern,
      and the two-sided p-value is ``min(1, 2 min(P(T* <= d), P(T* >= d)))`` as
      ``scipy.stats.permutation_test`` computes it (exact over all 2^G patterns when 2^G <=
      ``resamples``; else ``resamples`` random patterns, counted with the observed one);
    - minimum detectable effect: ``(t(df, 0.975) + t(df, 0.80)) x SE``, the difference a two-sided
      test at the 5 % level would detect with 80 % power for this number of units and this spread
      of the paired differences (``SE`` the bootstrap standard error).

    The same sign patterns serve the permutation test and the bootstrap.
    """
    u = units
    s_count = len(u.weights)
    a = value(u.num_a, u.den_a, u.stratum, u.weights, u.scale)
    b = value(u.num_b, u.den_b, u.stratum, u.weights, u.scale)
    d = a - b
    g = np.bincount(u.stratum, minlength=s_count)
    top_a = np.bincount(u.stratum, weights=u.num_a, minlength=s_count)
    top_b = np.bincount(u.stratum, weights=u.num_b, minlength=s_count)
    bot_a = np.bincount(u.stratum, weights=u.den_a, minlength=s_count)
    bot_b = np.bincount(u.stratum, weights=u.den_b, minlength=s_count)
    with np.errstate(invalid="ignore", divide="ignore"):
        ra, rb = top_a / bot_a, top_b / bot_b
        w = u.scale * u.weights
        infl = w[u.stratum] * ((u.num_a - ra[u.stratum] * u.den_a) / bot_a[u.stratum]
                               - (u.num_b - rb[u.stratum] * u.den_b) / bot_b[u.stratum])
    infl = np.nan_to_num(infl)
    reason = None
    if np.any(g < 2):
        reason = "fewer than 2 independent units in a stratum: the spread of the differences cannot be estimated"
        c = np.zeros(s_count)
    else:
        c = np.sqrt(g / (g - 1.0))
    scaled = c[u.stratum] * infl
    var_s = np.bincount(u.stratum, weights=scaled * scaled, minlength=s_count)
    se = math.sqrt(float(var_s.sum()))
    df = satterthwaite_df(var_s, np.maximum(g - 1, 1)) if reason is None else 1.0

    exact, total = _patterns(u.n, resamples)
    onehot = np.zeros((u.n, s_count))
    onehot[np.arange(u.n), u.stratum] = 1.0
    # one product per chunk: the swapped units' differences per stratum (num, den) and the bootstrap sum
    cols = np.column_stack([onehot * (u.num_a - u.num_b)[:, None], onehot * (u.den_a - u.den_b)[:, None], scaled])
    stats_perm = np.empty(total)
    boot = np.empty(total)
    done = 0
    for prod in _sign_products(exact, total, cols, rng):
        k = prod.shape[0]
        per_num, per_den = prod[:, :s_count], prod[:, s_count:2 * s_count]
        with np.errstate(invalid="ignore", divide="ignore"):
            a_star = (top_a - per_num) / (bot_a - per_den)
            b_star = (top_b + per_num) / (bot_b + per_den)
            stats_perm[done:done + k] = u.scale * np.sum(u.weights * (a_star - b_star), axis=1)
        boot[done:done + k] = d + 2.0 * prod[:, 2 * s_count]  # e = 2 x bit - 1, and the u_j sum to 0
        done += k

    if binary and _one_binary_item_per_unit(u):
        p = mcnemar_exact(u.num_a > 0.5, u.num_b > 0.5)
        test = "mcnemar_exact"
    else:
        p = _two_sided(stats_perm, d, exact)
        test = "sign_flip_permutation_exact" if exact else "sign_flip_permutation_monte_carlo"
    ci: tuple[float, float] | None = None
    if reason is None:
        try:
            ci = _t_percentile(boot, d, df=df, level=level, bounds=(None, None))
        except NoInterval as exc:
            reason = str(exc)
    mde = (_t(df, level) + _t(df, 1 - 2 * (1 - POWER))) * se if reason is None else None
    return PairResult(a, b, d, ci, reason, p, test, u.n, se if reason is None else None, mde)


def _one_binary_item_per_unit(u: Units) -> bool:
    return (len(u.weights) == 1 and bool(np.all(u.den_a == 1)) and bool(np.all(u.den_b == 1))
            and bool(np.all(np.isin(u.num_a, (0.0, 1.0)))) and bool(np.all(np.isin(u.num_b, (0.0, 1.0)))))


def _two_sided(null: np.ndarray, observed: float, exact: bool) -> float:
    """``min(1, 2 min(P(T <= t), P(T >= t)))`` with scipy's tolerance; Monte Carlo counts the
    observed pattern once more (``(k + 1) / (R + 1)``), as scipy.stats.permutation_test does."""
    null = null[np.isfinite(null)]
    gamma = abs(_TOLERANCE * observed)
    less = float(np.sum(null <= observed + gamma))
    greater = float(np.sum(null >= observed - gamma))
    adjust = 0.0 if exact else 1.0
    n = null.size + adjust
    return float(min(1.0, 2.0 * min((less + adjust) / n, (greater + adjust) / n)))


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


def tie_groups(values: Sequence[float], distinguishable) -> list[dict[str, object]]:
    """A leaderboard: outputs sorted by value (highest first), in groups. A group's leader is the
    best output not yet placed; its group holds the leader and the outputs after it, in order, up to
    the first that ``distinguishable(leader, other)`` (Holm-adjusted p < alpha) separates from the
    leader. Returns per output (in leaderboard order): ``index``, ``rank``, ``group``, and
    ``rank_range`` = [1 + outputs significantly better, N - outputs significantly worse]."""
    n = len(values)
    order = sorted(range(n), key=lambda i: (-values[i], i))
    rows: list[dict[str, object]] = []
    group = 0
    leader = None
    for rank, i in enumerate(order, start=1):
        if leader is None or distinguishable(leader, i):
            group += 1
            leader = i
        better = sum(1 for j in range(n) if values[j] > values[i] and distinguishable(j, i))
        worse = sum(1 for j in range(n) if values[j] < values[i] and distinguishable(i, j))
        rows.append({"index": i, "rank": rank, "group": group, "rank_range": [1 + better, n - worse]})
    return rows
