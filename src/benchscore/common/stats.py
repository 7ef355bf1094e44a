"""Statistics shared by the domains: a few moments, and the 95 % intervals written beside headline numbers.

Every interval is written next to the number it qualifies, never instead of it, in one shape
(:func:`beside`)::

    {"ci95": [low, high], "ci_method": "cluster_t"}                      # an interval
    {"ci95": null, "ci_method": "cluster_t", "ci_reason": "..."}         # none, and why

The methods (one name each, explained with their assumptions in docs/statistics.md):

- ``wilson``: the Wilson score interval of a proportion of independent items (:func:`wilson`);
- ``t``: the Student t interval of a mean of independent items (:func:`t_interval`);
- ``cluster_t``: the same with a cluster-robust standard error, for items that come in dependent
  groups (:func:`cluster_t`);
- ``cluster_bootstrap``: a bootstrap that resamples whole clusters, for a pooled ratio
  (:func:`cluster_bootstrap`);
- ``stratified_bootstrap``: a two-stage bootstrap inside strata (tasks within tracks, attempts
  within tasks) for a weighted sum of stratum means (:func:`stratified_bootstrap`).

The bootstraps share one rule for turning replicates into an interval (:func:`_t_percentile`):
deviations from the estimate are scaled by ``sqrt(n / (n - 1))`` per stratum (the plug-in variance
is ``(n - 1) / n`` of the unbiased one) and read at the percentile whose normal quantile is the
Student t quantile of the stratum's degrees of freedom (Hesterberg's expanded percentile); without
these two corrections a bootstrap over a handful of units is far too narrow.

The paired functions used by ``benchscore compare`` live in :mod:`benchscore.common.paired`.
Functions raise :class:`NoInterval` (with the reason) when the data cannot support an interval.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np

#: the confidence level of every interval benchscore writes (the key is ``ci95``)
LEVEL = 0.95
#: bootstrap resamples when a command is not told otherwise (recorded in provenance)
DEFAULT_RESAMPLES = 2000
#: the bootstrap seed when a command is not told otherwise (recorded in provenance)
DEFAULT_SEED = 16
#: the ``ci_method`` names (docs/statistics.md explains each)
METHODS = ("wilson", "t", "cluster_t", "cluster_bootstrap", "stratified_bootstrap")
#: the most multinomial draws (replicates x distinct clusters) or indices built at once
_CHUNK_CELLS = 4_000_000


class NoInterval(ValueError):
    """The data cannot support an interval; ``str(exc)`` says why (written as ``ci_reason``)."""


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


def beside(method: str, compute: Any, *, scale: float = 1.0, unavailable: str | None = None) -> dict[str, Any]:
    """The interval record written beside a number: ``{"ci95": [low, high], "ci_method": method}``.

    ``compute`` is a zero-argument callable returning ``(low, high)``; a :class:`NoInterval` it
    raises becomes ``{"ci95": None, "ci_method": method, "ci_reason": reason}``. ``unavailable``
    (a reason) skips the computation: the number itself is null (an incomplete result). Bounds are
    multiplied by ``scale`` (a percentage is a proportion times 100).
    """
    if method not in METHODS:
        raise ValueError(f"unknown interval method {method!r}")
    if unavailable is not None:
        return {"ci95": None, "ci_method": method, "ci_reason": unavailable}
    try:
        low, high = compute()
    except NoInterval as exc:
        return {"ci95": None, "ci_method": method, "ci_reason": str(exc)}
    return {"ci95": [float(low) * scale, float(high) * scale], "ci_method": method}


def rng_for(seed: int, *names: str) -> np.random.Generator:
    """A generator for one interval: the seed plus the names of what it is for (crc32), so adding or
    removing one number never changes the resamples of another."""
    return np.random.default_rng([int(seed), *(zlib.crc32(n.encode("utf-8")) for n in names)])


def _z(level: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(1.0 - (1.0 - level) / 2.0))


def _t(df: float, level: float) -> float:
    """The two-sided Student t quantile ``t(df)`` of ``level`` (``scipy.special.stdtrit``)."""
    from scipy.special import stdtrit

    return float(stdtrit(df, 1.0 - (1.0 - level) / 2.0))


def _clip(low: float, high: float, bounds: tuple[float | None, float | None]) -> tuple[float, float]:
    lo, hi = bounds
    if lo is not None:
        low, high = max(low, lo), max(high, lo)
    if hi is not None:
        low, high = min(low, hi), min(high, hi)
    return float(low), float(high)


def cluster_codes(clusters: Iterable[Hashable]) -> tuple[np.ndarray, int]:
    """Integer codes 0..G-1 for cluster labels (in order of first appearance) and G."""
    seen: dict[Hashable, int] = {}
    codes = np.fromiter((seen.setdefault(c, len(seen)) for c in clusters), dtype=np.int64)
    return codes, len(seen)


# --- analytic intervals ----------------------------------------------------------------------------


def wilson(successes, n, level: float = LEVEL):
    """Wilson score interval of a proportion ``p = successes / n`` of independent 0/1 items:

    ``(p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)`` with ``z = Phi^-1(0.975)``.

    Works on numbers or numpy arrays (elementwise); ``n`` must be positive.
    """
    k = np.asarray(successes, dtype=float)
    m = np.asarray(n, dtype=float)
    if np.any(m <= 0):
        raise NoInterval("no items")
    z = _z(level)
    p = k / m
    denom = 1.0 + z * z / m
    centre = (p + z * z / (2.0 * m)) / denom
    half = z * np.sqrt(p * (1.0 - p) / m + z * z / (4.0 * m * m)) / denom
    low = np.where(k <= 0, 0.0, np.clip(centre - half, 0.0, 1.0))
    high = np.where(k >= m, 1.0, np.clip(centre + half, 0.0, 1.0))
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def _too_few(g: int, unit: str) -> NoInterval:
    return NoInterval(f"{g} {unit}{'' if g == 1 else 's'}: the spread between {unit}s cannot be estimated")


def cluster_t(values, clusters: Iterable[Hashable] | None = None, *, level: float = LEVEL,
              bounds: tuple[float | None, float | None] = (None, None), unit: str | None = None
              ) -> tuple[float, float]:
    """Mean of ``values`` -+ ``t(G-1) x SE``, with the cluster-robust (CR1) standard error

    ``SE^2 = G / (G - 1) x sum over clusters g of (sum_{i in g} (y_i - mean))^2 / N^2``

    for N items in G clusters (``clusters[i]`` labels item i; None: every item its own cluster,
    which is the ordinary ``s / sqrt(N)``). Items of one cluster may be dependent in any way;
    clusters must be independent. The interval is clipped to ``bounds``; ``unit`` names a cluster
    in the reason when there are fewer than two (default: ``cluster``, or ``item``).
    """
    y = np.asarray(values, dtype=float)
    n = y.size
    if n == 0:
        raise NoInterval("no items")
    if clusters is None:
        codes, g = np.arange(n), n
    else:
        codes, g = cluster_codes(clusters)
        if codes.size != n:
            raise ValueError("clusters must label every value")
    if g < 2:
        raise _too_few(g, unit or ("item" if clusters is None else "cluster"))
    centre = float(y.mean())
    sums = np.bincount(codes, weights=y - centre, minlength=g)
    se = math.sqrt(g / (g - 1) * float(sums @ sums)) / n
    half = _t(g - 1, level) * se
    return _clip(centre - half, centre + half, bounds)


def t_interval(values, *, level: float = LEVEL, bounds: tuple[float | None, float | None] = (None, None),
               unit: str = "item") -> tuple[float, float]:
    """Student t interval ``mean -+ t(n-1) s / sqrt(n)`` of independent values, clipped to ``bounds``
    (:func:`cluster_t` with every value its own cluster)."""
    return cluster_t(values, None, level=level, bounds=bounds, unit=unit)


# --- bootstraps ----------------------------------------------------------------------------------------


def _t_percentile(replicates: np.ndarray, estimate: float, *, df: float, level: float,
                  bounds: tuple[float | None, float | None]) -> tuple[float, float]:
    """The interval from bootstrap replicates whose deviations are already scaled to the unbiased
    variance: their percentiles at ``Phi(-+ t(df))`` (Hesterberg's expanded percentile)."""
    reps = replicates[np.isfinite(replicates)]
    if reps.size == 0:
        raise NoInterval("no resample has a value")
    if not np.any(reps != reps[0]):
        return _clip(float(reps[0]), float(reps[0]), bounds)
    tail = float(phi(-_t(df, level)))
    low, high = np.quantile(reps, [tail, 1.0 - tail])
    return _clip(float(low), float(high), bounds)


def _chunks(total: int, width: int) -> Iterable[int]:
    step = max(1, _CHUNK_CELLS // max(1, width))
    for start in range(0, total, step):
        yield min(step, total - start)


def cluster_bootstrap(num, den, *, resamples: int, rng: np.random.Generator, level: float = LEVEL,
                      bounds: tuple[float | None, float | None] = (None, None), unit: str = "cluster"
                      ) -> tuple[float, float]:
    """Bootstrap interval of the pooled ratio ``R = sum_g num_g / sum_g den_g`` over G clusters
    (e.g. cases: ``num_g`` the sum of a case's repetition scores, ``den_g`` its repetitions).

    Each resample draws G clusters with replacement. Clusters with identical ``(num, den)`` are
    interchangeable, so a resample is drawn as multinomial counts over the distinct pairs (the
    same distribution, at a cost that grows with the distinct pairs, not with G); when most pairs
    are distinct, cluster indices are drawn instead. Deviations ``R* - R`` are scaled by
    ``sqrt(G / (G - 1))`` and read at the percentiles of the t(G-1) level (:func:`_t_percentile`).
    """
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    g = num.size
    if g < 2:
        raise _too_few(g, unit)
    total_den = float(den.sum())
    if total_den == 0.0:
        raise NoInterval("nothing to average")
    estimate = float(num.sum()) / total_den
    pairs, counts = np.unique(np.column_stack([num, den]), axis=0, return_counts=True)
    if pairs.shape[0] == 1:
        return _clip(estimate, estimate, bounds)
    out = np.empty(resamples)
    done = 0
    if pairs.shape[0] * 4 <= g:
        p = counts / g
        for size in _chunks(resamples, pairs.shape[0]):
            drawn = rng.multinomial(g, p, size=size).astype(float)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[done:done + size] = (drawn @ pairs[:, 0]) / (drawn @ pairs[:, 1])
            done += size
    else:
        for size in _chunks(resamples, g):
            idx = rng.integers(0, g, size=(size, g))
            with np.errstate(invalid="ignore", divide="ignore"):
                out[done:done + size] = num[idx].sum(axis=1) / den[idx].sum(axis=1)
            done += size
    scaled = estimate + math.sqrt(g / (g - 1)) * (out - estimate)
    return _t_percentile(scaled, estimate, df=g - 1, level=level, bounds=bounds)


def two_stage_replicates(scores, *, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap replicates of the mean of task means for one stratum: ``scores`` is a k x m array
    (k tasks, m attempts each). A resample draws k tasks with replacement and, within each drawn
    task, m of its attempts with replacement.

    Drawing at both stages would count the attempt-to-attempt spread twice (it is already part of
    the spread of the task means; Davison & Hinkley 1997, section 3.8), so a drawn task's mean
    enters shrunk towards the stratum mean by ``c = sqrt(max(0, 1 - W / (m V)))`` (``V`` the
    spread of the task means, ``W`` the mean squared deviation of an attempt from its task's mean):
    the replicates then have the plug-in variance ``V / k`` of a one-stage bootstrap, with the
    attempts resampled. Deviations are scaled by ``sqrt(k / (k - 1))`` (see the module doc).
    """
    x = np.asarray(scores, dtype=float)
    k, m = x.shape
    means = x.mean(axis=1)
    grand = float(means.mean())
    resid = x - means[:, None]
    v = float(((means - grand) ** 2).mean())
    w = float((resid**2).mean())
    c = math.sqrt(max(0.0, 1.0 - w / (m * v))) if v > 0.0 else 0.0
    flat = resid.ravel()
    out = np.empty(resamples)
    done = 0
    for size in _chunks(resamples, k * m):
        tasks = rng.integers(0, k, size=(size, k))
        value = grand + c * (means[tasks] - grand)
        if m > 1 and w > 0.0:
            attempts = rng.integers(0, m, size=(size, k, m))
            value = value + np.take(flat, (tasks * m)[..., None] + attempts).sum(axis=2) / m
        out[done:done + size] = value.mean(axis=1)
        done += size
    return grand + (math.sqrt(k / (k - 1)) if k > 1 else 0.0) * (out - grand)


def satterthwaite_df(variances: Sequence[float], dfs: Sequence[float]) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of independent parts with the given variances
    and degrees of freedom: ``(sum v)^2 / sum(v^2 / df)``."""
    v = np.asarray(variances, dtype=float)
    d = np.asarray(dfs, dtype=float)
    top = float(v.sum()) ** 2
    bottom = float((v * v / d).sum())
    return top / bottom if bottom > 0.0 else float(d.min())


def stratified_bootstrap(strata: Sequence[np.ndarray], weights: Sequence[float], *, resamples: int,
                         rng: np.random.Generator, level: float = LEVEL,
                         bounds: tuple[float | None, float | None] = (None, None)) -> tuple[float, float]:
    """Bootstrap interval of ``sum_s weight_s x mean over the tasks of stratum s of the task's mean``
    (the TCSExam index: strata are tracks, weights 30/30/30/10; one stratum and weight 1 is a
    track mean). ``strata[s]`` is a k_s x m_s array of attempt scores.

    Each stratum is resampled on its own (:func:`two_stage_replicates`), so every resample keeps
    the weights and the number of tasks per stratum; the interval reads the replicates of the
    weighted sum at the t level of the Welch-Satterthwaite degrees of freedom of the strata.
    """
    if not strata:
        raise NoInterval("no stratum")
    for x in strata:
        if np.asarray(x).shape[0] < 2:
            raise NoInterval("a track has one task: the spread between its tasks cannot be estimated")
    reps = np.zeros(resamples)
    estimate = 0.0
    variances, dfs = [], []
    for x, wt in zip(strata, weights, strict=True):
        arr = np.asarray(x, dtype=float)
        r = two_stage_replicates(arr, resamples=resamples, rng=rng)
        reps += wt * r
        estimate += wt * float(arr.mean(axis=1).mean())
        variances.append(float(np.var(wt * r)))
        dfs.append(arr.shape[0] - 1)
    return _t_percentile(reps, estimate, df=satterthwaite_df(variances, dfs), level=level, bounds=bounds)
