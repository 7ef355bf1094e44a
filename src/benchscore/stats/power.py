"""The minimum detectable effect of the paired sign-flip test, against the test the verdict runs (issue 38).

The MDE a comparison reports is a number computed from the data (``c x SE``, the observed standard
error times a factor), so "80 % power at the reported MDE" is a claim about two data sets: the one
that gave the MDE, whose SE is itself an estimate, and a fresh one with that true difference. The
factor ``c`` is chosen so that the power averaged over both is 80 %:

- a unit model: unit j adds ``delta x share_j + sigma_j z_j`` to the difference (``z_j`` standard
  normal; ``share_j`` the unit's share of the number, summing to 1; ``sigma_j`` proportional to
  ``share_j`` inside a stratum, the strata scaled by their observed spreads; ``sum sigma_j^2 = 1``:
  effects are in units of the difference's true standard deviation);
- the test: the same sign-flip test the verdict runs, on the same kind of patterns (all ``2^G`` when
  the verdict enumerates them, else random ones), so its discreteness is in the power: at 6 units only
  "every unit the same way" rejects;
- per simulated data set the smallest effect the test rejects (``crit``: the test's statistic moves
  along a line in ``delta`` for every pattern, so this is an order statistic of the patterns' crossing
  points, no search), and the data set's own standard error ``s`` (the cluster-robust one the
  comparison reports, in the same units);
- ``c`` is the 80 % quantile of ``crit_k / s_i`` over all pairs of data sets: then
  ``P(crit < c s) = 0.8`` for independent ``crit`` and ``s``, the power at the reported MDE averaged
  over the SE that reported it.

This replaces the earlier power at the observed spread with a normal-theory inflation factor, which
gave 63 % at 6 units and 71-78 % just past the switch to random patterns (issue 38's simulation).
"""

from __future__ import annotations

import functools
import math

import numpy as np

#: simulated data sets per MDE (each for ``crit`` and ``s``; their pairs number its square)
DRAWS = 1000
#: the most random sign patterns a simulated data set is tested on (the verdict's own count when
#: smaller; more change the power by less than the simulation's error)
PATTERNS = 2000
#: up to this many units the MDE is simulated; past it ``(t(df, 1 - alpha/2) + t(df, 0.80)) x SE``
SIMULATED_UNITS = 100
POWER = 0.80
#: the simulation's seed: the MDE is a function of the data alone (and the same for every pair of
#: results with the same units, which shares one simulation)
SEED = 38


def unit_model(share: np.ndarray, stratum: np.ndarray, residual: np.ndarray) -> np.ndarray:
    """``sigma_j`` of the unit model: proportional to ``share_j`` inside a stratum, each stratum scaled
    so that its total variance is its observed one (``sum`` of its units' squared residuals), all
    normalised to ``sum sigma_j^2 = 1``. A stratum whose units show no spread keeps its share's scale
    (the model never has a unit without noise)."""
    s_count = int(stratum.max()) + 1 if stratum.size else 0
    observed = np.bincount(stratum, weights=residual**2, minlength=s_count)
    expected = np.bincount(stratum, weights=share**2, minlength=s_count)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where((observed > 0) & (expected > 0), observed / expected, 0.0)
    if not np.any(scale > 0):
        scale = np.ones(s_count)
    scale = np.where(scale > 0, scale, float(np.mean(scale[scale > 0])))
    sigma = share * np.sqrt(scale[stratum])
    return sigma / math.sqrt(float(sigma @ sigma))


def mde_factor(share: np.ndarray, stratum: np.ndarray, sigma: np.ndarray, alpha: float, *, exact: bool,
               patterns: int, seed: int = SEED, draws: int = DRAWS, power: float = POWER) -> float:
    """``c``: the reported MDE is ``c x SE`` (module doc). ``share`` sums to 1; ``exact``: the verdict
    enumerates all ``2^G`` patterns, else it draws ``patterns`` random ones (counted with the observed,
    as :func:`benchscore.stats.paired.infer_pair` does). Returns ``inf`` when the test can reject nothing."""
    n = share.size
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, draws)) * sigma[:, None]
    if exact:
        total = 2**n
        flips = ((np.arange(total, dtype=np.int64)[:, None] >> np.arange(n, dtype=np.int64)) & 1).astype(np.float64)
        adj = 0
    else:
        total = min(patterns, PATTERNS)
        flips = (rng.random((total, n)) < 0.5).astype(np.float64)
        adj = 1
    # reject (upper tail) when at most ``allowed`` patterns, the identity included, give a statistic >= the
    # observed: 2 (count + adj) / (N + adj) < alpha
    allowed = math.ceil(alpha * (total + adj) / 2.0 - 1e-9) - 1 - adj
    if allowed < 0 or allowed + 1 > total:
        return math.inf
    moved = flips @ share  # how far each pattern moves the statistic per unit of delta (over 2)
    inverse = np.where(moved > 0, -1.0 / np.where(moved > 0, moved, 1.0), 0.0)
    crit = np.empty(draws)
    step = max(1, 4_000_000 // total)
    for start in range(0, draws, step):  # (data sets x patterns) blocks: contiguous rows for the partition
        noise = z[:, start:start + step].T @ flips.T  # how far the noise moves each pattern's statistic (over 2)
        crossing = noise * inverse  # each pattern stays at or above the observed while delta <= its crossing
        crossing[:, moved <= 0] = np.inf
        # the (allowed + 1)-th largest crossing: past it at most ``allowed`` patterns are at or above
        crit[start:start + step] = -np.partition(-crossing, allowed, axis=1)[:, allowed]
    # each data set's standard error, as the comparison computes it (cluster-robust, per stratum)
    s_count = int(stratum.max()) + 1
    x = z  # the SE does not depend on delta: residuals inside a stratum remove it
    within = np.bincount(stratum, weights=share, minlength=s_count)
    frac = share / within[stratum]
    sums = np.zeros((s_count, draws))
    np.add.at(sums, stratum, x)
    resid = x - frac[:, None] * sums[stratum]
    g = np.bincount(stratum, minlength=s_count).astype(float)
    c2 = np.where(g >= 2, g / np.maximum(g - 1.0, 1.0), 0.0)[stratum]
    se = np.sqrt(np.sum(c2[:, None] * resid**2, axis=0))
    crit = crit[np.isfinite(crit)]
    if crit.size < draws * power or not np.all(se > 0):
        return math.inf
    ratios = (crit[:, None] / se[None, :]).ravel()
    # a share of data sets never rejected counts as an infinite ratio
    ratios = np.concatenate([ratios, np.full((draws - crit.size) * draws, np.inf)])
    return float(np.quantile(ratios, power, method="higher"))


@functools.lru_cache(maxsize=512)
def _cached(share: bytes, stratum: bytes, sigma: bytes, alpha: float, exact: bool, patterns: int) -> float:
    return mde_factor(np.frombuffer(share), np.frombuffer(stratum, dtype=np.int64), np.frombuffer(sigma), alpha,
                      exact=exact, patterns=patterns)


def cached_mde_factor(share: np.ndarray, stratum: np.ndarray, sigma: np.ndarray, alpha: float, *, exact: bool,
                      patterns: int) -> float:
    """:func:`mde_factor` at the fixed :data:`SEED`, kept for units of the same shape (every pair of a
    board of results on the same items, one stratum, shares one simulation)."""
    return _cached(np.ascontiguousarray(share, dtype=np.float64).tobytes(),
                   np.ascontiguousarray(stratum, dtype=np.int64).tobytes(),
                   np.round(np.ascontiguousarray(sigma, dtype=np.float64), 12).tobytes(), float(alpha), bool(exact),
                   int(patterns))
