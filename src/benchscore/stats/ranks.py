"""Simultaneous confidence sets for the ranks of many results: the max-t multiplier bootstrap over all pairs
with stepdown, block-streamed.

Mogstad, Romano, Shaikh and Wilhelm (2023), "Inference for ranks with applications to mobility across
neighbourhoods and academic achievement across countries", Review of Economic Studies,
doi:10.1093/restud/rdad006; the reference implementation is the R package csranks (``csranks(x, Sigma,
simul=TRUE, stepdown=TRUE, cstype="two-sided")``, i.e. ``csranks_simul`` over ``csdiffmeans``).

The estimates ``theta_hat`` of ``N`` results are means over the same ``G`` independent units; ``U`` (``G x
N``) holds each unit's linearised contribution to each estimate (:func:`contributions`), so that
``theta_hat - theta`` is approximately ``sum_g U_g`` and its covariance is ``Sigma = U' U``. Then

- ``sigma_jk = sqrt(Sigma_jj + Sigma_kk - 2 Sigma_jk)`` (the paired standard error of ``theta_j - theta_k``)
  and ``T_jk = (theta_hat_j - theta_hat_k) / sigma_jk``;
- draw ``b = 1..R``: multipliers ``xi_b ~ N(0, I_G)`` and ``Z_b = xi_b' U``, distributed exactly as
  csranks' parametric draw ``N(0, Sigma)``;
- step ``s``: over the ordered pairs ``S_s`` still in play (``S_1``: every ``j != k``), the maximum
  ``M_sb = max_{(j,k) in S_s} (Z_bj - Z_bk) / sigma_jk`` per draw; the critical value ``c_s`` is the
  ``(K+1)``-th largest of ``M_s1..M_sR`` with ``K`` the largest count for which ``(K + 1) / (R + 1) <
  alpha`` (the Monte-Carlo test's rule, so a pair is rejected exactly when its Monte-Carlo p-value
  ``(#{M_sb >= T_jk} + 1) / (R + 1)`` is below alpha; csranks reads R's type-7 quantile, which differs by at
  most one draw); every ``(j, k)`` in ``S_s`` with ``T_jk > c_s`` is rejected ("``theta_j > theta_k``") and
  leaves ``S_{s+1}``; the steps stop when one rejects nothing;
- rank 1 is the largest value: ``rank_j = 1 + #{k: theta_k > theta_j}``, and the set is ``[1 + #{k: (k, j)
  rejected}, N - #{k: (j, k) rejected}]``. With probability at least ``1 - alpha`` (asymptotically in the
  units) no true hypothesis is rejected, and then every set holds every rank its result could take, ties
  included, all at once.

It assumes independent units and every studentized difference close to normal far into its tail (the
maximum over many pairs is read there); its simulated coverage holds from :data:`MIN_UNITS` units
(``tests/stats/rank_grid.py``; the table in docs/statistics.md), and compare claims no separation below.

Never ``R x pairs`` in memory: ``Z`` is ``N x R`` (float32 for the pair pass; ``U`` and ``Sigma`` stay
float64), and the first step streams every pair in tiles of a few rows and columns of the results
sorted by estimate (so ``T_jk >= 0`` for ``j`` above ``k``), keeping per draw the largest forward and
reverse difference. Later steps go over the pairs left, never again over all: a reverse direction
(``T_kj <= 0``) is never rejected, so its maxima carry over unchanged; a forward pair with ``T_jk`` at most
the critical value of a set that stays in play at every step can never be rejected either and joins
those maxima once; the steps then run over the few pairs near the boundary. The decisions are the
plain algorithm's, draw for draw (``tests/stats/test_ranks.py`` checks them against a direct
implementation that holds every ordered pair).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

#: multiplier draws when not told otherwise
DEFAULT_DRAWS = 1000
#: the fewest units at which the sets' simulated coverage holds (docs/statistics.md, the rank-sets table): below,
#: a studentized difference of a few hundred 0/1 outcomes has heavier tails than the normal draws, and at 100
#: results x 300 units every true rank was covered in only 92 % of boards
MIN_UNITS = 1000
#: the method's name in outputs
METHOD = "max_t_stepdown"
#: a pair whose paired variance is below this share of the two variances differs by the same amount on
#: every unit (or not at all): no spread to studentize by
_DEGENERATE = 1e-12
#: draws generated and multiplied at once (the stream is the same whatever the block)
_DRAW_BLOCK = 500
#: tile of results (rows x columns) streamed with all draws: 16 x 16 x 1,000 float32 stays in cache
_TILE = 16
#: pairs gathered at once in later steps
_GATHER = 256
#: the z of a 95 % Monte-Carlo interval of the critical value
_Z95 = 1.959963984540054


@dataclass(frozen=True)
class Step:
    """One step of the stepdown: the ordered pairs still in play, the critical value from their draws'
    maxima, its Monte-Carlo error (a 95 % interval for the critical value infinitely many draws would
    give, from the order statistics, and the standard error it implies) and the pairs rejected."""

    hypotheses: int
    critical_value: float
    mc_interval: tuple[float, float]
    mc_standard_error: float
    rejected: int


@dataclass(frozen=True)
class RankSets:
    """Simultaneous rank confidence sets (:func:`rank_sets`): per result in the given order, ``lower`` and
    ``upper`` (rank 1: the largest value), the steps, and the pair queries compare's rows read."""

    lower: np.ndarray
    upper: np.ndarray
    alpha: float
    draws: int
    steps: tuple[Step, ...]
    #: pairs whose statistic lies inside the last critical value's Monte-Carlo interval: their decision
    #: could change with other draws
    within_mc_error: int
    _theta: np.ndarray = field(repr=False)
    _sigma_of: Callable[[np.ndarray, np.ndarray], np.ndarray] = field(repr=False)
    _final_maxima: np.ndarray = field(repr=False)

    @property
    def critical_value(self) -> float:
        """The last step's critical value: a pair is separated exactly when ``|T| >`` this."""
        return self.steps[-1].critical_value

    def standard_error(self, i: int, j: int) -> float:
        """``sigma_ij``, the paired standard error of ``theta_hat_i - theta_hat_j`` (0: degenerate)."""
        return float(self._sigma_of(np.array([i]), np.array([j]))[0])

    def statistic(self, i: int, j: int) -> float:
        """``|T_ij|`` (inf: the two differ by the same amount on every unit; 0: equal)."""
        return float(_statistic(self._theta[[i]] - self._theta[[j]], self._sigma_of(np.array([i]), np.array([j])),
                                self._theta[[i]], self._theta[[j]])[0])

    def separated(self, i: int, j: int) -> bool:
        return self.statistic(i, j) > self.critical_value

    def p_value(self, i: int, j: int) -> float:
        """``(#{M_b >= |T_ij|} + 1) / (R + 1)`` over the last step's maxima: below alpha exactly when the
        pair is separated (the Monte-Carlo p-value against the pairs left at the end)."""
        t = self.statistic(i, j)
        at_least = self.draws - int(np.searchsorted(self._final_maxima, t, side="left"))
        return (at_least + 1) / (self.draws + 1)

    def not_separated_from(self, i: int) -> np.ndarray:
        """The results (given order) not separated from ``i``, itself excluded."""
        n = self._theta.size
        others = np.arange(n)
        t = _statistic(self._theta[i] - self._theta, self._sigma_of(np.full(n, i), others),
                       np.full(n, self._theta[i]), self._theta)
        keep = (t <= self.critical_value) & (others != i)
        return others[keep]


def _statistic(diff: np.ndarray, sigma: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``|diff| / sigma``; a degenerate pair (sigma 0) is infinitely far apart when the two estimates differ
    beyond rounding, else 0."""
    diff = np.abs(diff)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = diff / sigma
    zero = sigma <= 0.0
    if np.any(zero):
        apart = diff > 1e-12 * np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
        t = np.where(zero, np.where(apart, np.inf, 0.0), t)
    return t


def contributions(num: np.ndarray, den: np.ndarray, stratum: np.ndarray, weights: np.ndarray,
                  scale: float) -> np.ndarray:
    """Each unit's linearised contribution to each result's number, ``G x N``.

    A number is ``scale sum_s W_s (sum_{g in s} num_g) / (sum_{g in s} den_g)``; unit ``g`` of stratum ``s``
    contributes ``c_s scale W_s (num_g - R_s den_g) / D_s`` (``R_s``, ``D_s``: the stratum's ratio and
    denominator; ``c_s = sqrt(G_s / (G_s - 1))``, the small-sample factor of the cluster-robust variance),
    so that ``U' U`` is the cluster-robust covariance of the numbers and ``sigma_jk`` equals the paired
    standard error :func:`benchscore.stats.paired.infer_pair` reports for the pair. ``num`` and ``den``
    are ``G x N`` (units x results); a stratum with fewer than two units contributes nothing (no spread
    to estimate: the caller refuses such data)."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    s_count = len(weights)
    g_of = np.bincount(stratum, minlength=s_count)
    onehot = np.zeros((s_count, stratum.size))
    onehot[stratum, np.arange(stratum.size)] = 1.0
    top, bottom = onehot @ num, onehot @ den  # S x N
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(bottom != 0, top / np.where(bottom != 0, bottom, 1.0), 0.0)
        factor = np.where(g_of >= 2, np.sqrt(g_of / np.maximum(g_of - 1.0, 1.0)), 0.0) * scale * np.asarray(weights)
        per = np.where(bottom != 0, factor[:, None] / np.where(bottom != 0, bottom, 1.0), 0.0)
    u = (num - ratio[stratum] * den) * per[stratum]
    return np.ascontiguousarray(u)


def multiplier_draws(u: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """``Z = xi U`` (``draws x N``) with ``xi ~ N(0, I_G)`` per draw, generated a block of draws at a time
    (the generator's stream, hence ``Z``, does not depend on the block)."""
    g, n = u.shape
    z = np.empty((draws, n))
    for start in range(0, draws, _DRAW_BLOCK):
        stop = min(draws, start + _DRAW_BLOCK)
        xi = rng.standard_normal((stop - start, g))
        np.matmul(xi, u, out=z[start:stop])
    return z


def critical_value(maxima: np.ndarray, alpha: float) -> float:
    """The ``(K+1)``-th largest of the maxima, ``K`` the largest count with ``(K + 1) / (R + 1) < alpha``
    (inf when even one draw is too many: too few draws for this alpha)."""
    r = maxima.size
    k = math.ceil(alpha * (r + 1)) - 2
    if k < 0:
        return math.inf
    return float(np.partition(maxima, r - 1 - k)[r - 1 - k])


def mc_error(maxima: np.ndarray, alpha: float) -> tuple[tuple[float, float], float]:
    """A 95 % interval for the critical value infinitely many draws would give (order statistics at ranks
    ``R p -+ 1.96 sqrt(R p (1 - p))``, ``p = 1 - alpha``: distribution-free) and the standard error it
    implies (its half-width / 1.96)."""
    r = maxima.size
    p = 1.0 - alpha
    half = _Z95 * math.sqrt(r * p * (1.0 - p))
    lo = min(r - 1, max(0, math.floor(r * p - half) - 1))
    hi = min(r - 1, max(0, math.ceil(r * p + half) - 1))
    ordered = np.sort(maxima)
    low, high = float(ordered[lo]), float(ordered[hi])
    return (low, high), (high - low) / (2 * _Z95)


class _Board:
    """The results sorted by estimate (highest first, ties by given order), their covariance and draws."""

    def __init__(self, u: np.ndarray, theta: np.ndarray, draws: int, rng: np.random.Generator) -> None:
        n = theta.size
        self.n = n
        self.order = np.lexsort((np.arange(n), -theta))
        self.position = np.empty(n, dtype=np.int64)
        self.position[self.order] = np.arange(n)
        self.theta = theta[self.order]
        gram = u.T @ u
        self.gram = gram[np.ix_(self.order, self.order)]
        del gram
        self.var = np.ascontiguousarray(np.diag(self.gram))
        z = multiplier_draws(u, draws, rng)
        self.zt = np.ascontiguousarray(z[:, self.order].T, dtype=np.float32)  # N x R
        del z

    def sigma(self, j: np.ndarray, k: np.ndarray) -> np.ndarray:
        """``sigma_jk`` of sorted positions (0 where degenerate)."""
        vj, vk = self.var[j], self.var[k]
        s2 = vj + vk - 2.0 * self.gram[j, k]
        return np.where(s2 > _DEGENERATE * (vj + vk), np.sqrt(np.maximum(s2, 0.0)), 0.0)

    def tile_sigma(self, j0: int, j1: int, k0: int, k1: int) -> np.ndarray:
        vj, vk = self.var[j0:j1, None], self.var[None, k0:k1]
        s2 = vj + vk - 2.0 * self.gram[j0:j1, k0:k1]
        return np.where(s2 > _DEGENERATE * (vj + vk), np.sqrt(np.maximum(s2, 0.0)), 0.0)

    def tile_statistic(self, j0: int, j1: int, k0: int, k1: int) -> np.ndarray:
        a, b = self.theta[j0:j1, None], self.theta[None, k0:k1]
        return _statistic(a - b, self.tile_sigma(j0, j1, k0, k1), np.broadcast_to(a, (j1 - j0, k1 - k0)),
                          np.broadcast_to(b, (j1 - j0, k1 - k0)))

    def first_step(self, progress: Callable[[int, int], None] | None) -> tuple[np.ndarray, np.ndarray]:
        """Per draw, the largest forward ``(Z_j - Z_k) / sigma_jk`` and the largest reverse ``(Z_k - Z_j) /
        sigma_jk`` over every pair ``j`` above ``k`` (a degenerate pair's is 0)."""
        n, r = self.zt.shape
        forward = np.full(r, -np.inf, dtype=np.float32)
        reverse = np.full(r, -np.inf, dtype=np.float32)
        buf = np.empty((_TILE, _TILE, r), dtype=np.float32)
        upper = np.triu(np.ones((_TILE, _TILE), dtype=bool), 1)[:, :, None]
        rows = range(0, n, _TILE)
        for done, j0 in enumerate(rows):
            j1 = min(n, j0 + _TILE)
            sigma = self.tile_sigma(j0, j1, j0, n)  # this block of rows against every column from j0
            with np.errstate(divide="ignore"):
                w = np.where(sigma > 0, 1.0 / np.where(sigma > 0, sigma, 1.0), 0.0).astype(np.float32)
            for k0 in range(j0, n, _TILE):
                k1 = min(n, k0 + _TILE)
                e = buf[: j1 - j0, : k1 - k0]
                np.subtract(self.zt[j0:j1, None, :], self.zt[None, k0:k1, :], out=e)
                np.multiply(e, w[:, k0 - j0:k1 - j0, None], out=e)
                if k0 == j0:  # the diagonal tile: only k above j
                    if k1 - k0 < 2:
                        continue
                    mask = upper[: j1 - j0, : k1 - k0]
                    np.maximum(forward, np.where(mask, e, -np.inf).max(axis=(0, 1)), out=forward)
                    np.maximum(reverse, -np.where(mask, e, np.inf).min(axis=(0, 1)), out=reverse)
                else:
                    np.maximum(forward, e.max(axis=(0, 1)), out=forward)
                    np.maximum(reverse, -e.min(axis=(0, 1)), out=reverse)
            if progress is not None:
                progress(done + 1, len(rows))
        return forward.astype(np.float64), reverse.astype(np.float64)

    def pairs_at_most(self, bound: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every pair ``j`` above ``k`` (sorted positions) with ``T_jk <= bound``, and its statistic."""
        n = self.n
        js, ks, ts = [], [], []
        step = max(1, 4_000_000 // max(1, n))
        for j0 in range(0, n, step):
            j1 = min(n, j0 + step)
            t = self.tile_statistic(j0, j1, 0, n)
            keep = (t <= bound) & (np.arange(n)[None, :] > np.arange(j0, j1)[:, None])
            jj, kk = np.nonzero(keep)
            js.append((jj + j0).astype(np.int64))
            ks.append(kk.astype(np.int64))
            ts.append(t[jj, kk])
        return np.concatenate(js), np.concatenate(ks), np.concatenate(ts)

    def forward_max(self, js: np.ndarray, ks: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Per draw, the largest ``(Z_j - Z_k) / sigma_jk`` over the listed pairs (-inf: none)."""
        r = self.zt.shape[1]
        out = np.full(r, -np.inf, dtype=np.float32)
        for start in range(0, js.size, _GATHER):
            stop = min(js.size, start + _GATHER)
            e = self.zt[js[start:stop]]
            np.subtract(e, self.zt[ks[start:stop]], out=e)
            np.multiply(e, w[start:stop, None], out=e)
            np.maximum(out, e.max(axis=0), out=out)
        return out.astype(np.float64)

    def counts(self, c: float, band: tuple[float, float]) -> tuple[np.ndarray, np.ndarray, int]:
        """Per sorted position, the results separated above and below it at critical value ``c``, and the
        pairs whose statistic lies in ``band`` (the critical value's Monte-Carlo interval)."""
        n = self.n
        above = np.zeros(n, dtype=np.int64)
        below = np.zeros(n, dtype=np.int64)
        within = 0
        step = max(1, 4_000_000 // max(1, n))
        ks = np.arange(n)
        for j0 in range(0, n, step):
            j1 = min(n, j0 + step)
            t = self.tile_statistic(j0, j1, 0, n)
            later = ks[None, :] > np.arange(j0, j1)[:, None]
            sep = (t > c) & later
            below[j0:j1] += sep.sum(axis=1)
            above += sep.sum(axis=0)
            within += int(np.sum(later & (t > band[0]) & (t <= band[1])))
        return above, below, within


def _step(maxima: np.ndarray, alpha: float) -> tuple[float, tuple[float, float], float]:
    c = critical_value(maxima, alpha)
    interval, se = mc_error(maxima, alpha)
    return c, interval, se


def rank_sets(u: np.ndarray, theta: np.ndarray, *, alpha: float = 0.05, draws: int = DEFAULT_DRAWS,
              rng: np.random.Generator, stepdown: bool = True,
              progress: Callable[[int, int], None] | None = None) -> RankSets:
    """Simultaneous ``1 - alpha`` confidence sets for the ranks of ``theta`` (rank 1: the largest), by the
    max-t multiplier bootstrap over all pairs with stepdown (the module doc gives the formula and its
    source). ``u``: the units' contributions (``G x N``, :func:`contributions`); ``theta``: the ``N``
    estimates; ``draws``: multiplier draws ``R`` (seeded by ``rng``); ``stepdown=False``: the single step
    (wider). ``progress(done, total)`` is told how the first step advances."""
    u = np.ascontiguousarray(u, dtype=float)
    theta = np.asarray(theta, dtype=float)
    if u.ndim != 2 or theta.ndim != 1 or u.shape[1] != theta.size:
        raise ValueError(f"contributions {u.shape} do not match {theta.size} estimates")
    if theta.size < 2:
        raise ValueError("rank sets need at least two results")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), not {alpha!r}")
    if draws < 1:
        raise ValueError(f"draws must be positive, not {draws!r}")
    n = theta.size
    board = _Board(u, theta, draws, rng)
    forward, reverse = board.first_step(progress)
    maxima = np.maximum(forward, reverse)
    hypotheses = n * (n - 1)
    c, interval, se = _step(maxima, alpha)
    steps: list[Step] = []
    # the forward pairs not rejected by the first step
    js, ks, ts = board.pairs_at_most(c)
    rejected = n * (n - 1) // 2 - js.size
    steps.append(Step(hypotheses, c, interval, se, rejected))
    hypotheses -= rejected
    if stepdown and rejected:
        assert c >= 0.0  # a maximum over both directions of a pair is never negative
        w = np.zeros(js.size, dtype=np.float32)
        sig = board.sigma(js, ks)
        w[sig > 0] = (1.0 / sig[sig > 0]).astype(np.float32)
        # draws' maxima over ordered pairs that stay in play at every step: every reverse direction
        # (T <= 0 never exceeds a critical value, which is never negative), then every forward pair at
        # most the critical value of that set (a subset of every step's set bounds every step's value)
        base = reverse
        while True:
            floor = critical_value(base, alpha)
            fold = ts <= floor
            if not fold.any():
                break
            base = np.maximum(base, board.forward_max(js[fold], ks[fold], w[fold]))
            js, ks, ts, w = js[~fold], ks[~fold], ts[~fold], w[~fold]
        while True:
            maxima = np.maximum(base, board.forward_max(js, ks, w)) if js.size else base
            c, interval, se = _step(maxima, alpha)
            assert c >= 0.0
            out = ts > c
            steps.append(Step(hypotheses, c, interval, se, int(out.sum())))
            if not out.any():
                break
            hypotheses -= int(out.sum())
            js, ks, ts, w = js[~out], ks[~out], ts[~out], w[~out]
    last = steps[-1]
    above, below, within = board.counts(last.critical_value, last.mc_interval)
    lower = np.empty(n, dtype=np.int64)
    upper = np.empty(n, dtype=np.int64)
    lower[board.order] = 1 + above
    upper[board.order] = n - below
    pos = board.position
    board.zt = None  # the draws are no longer needed; the covariance stays for the pair queries

    def sigma_of(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return board.sigma(pos[i], pos[j])

    return RankSets(lower, upper, alpha, draws, tuple(steps), within, theta, sigma_of, np.sort(maxima))


def pair_inference(sets: RankSets | None, i: int, j: int, a: float, b: float, n_units: int,
                   value_bounds: tuple[float | None, float | None]):
    """The inference of results ``i`` and ``j`` from the rank sets, in the shape of a paired test
    (:class:`benchscore.stats.paired.PairInference`), so compare writes it as it writes any pair: p-value
    :meth:`RankSets.p_value` (below alpha exactly when the pair is separated), interval ``d -+ c sigma_ij``
    at the last critical value ``c`` (it excludes 0 exactly then), minimum detectable effect ``(c + z_0.80)
    sigma_ij`` (the normal approximation of the power to exceed ``c``). ``value_bounds``: the smallest and
    largest value the metric can take (None: none). ``sets`` None (too few units for the sets to hold their
    level): p-value and smallest attainable p-value 1, the interval what the metric allows."""
    from scipy.special import ndtr, ndtri

    from benchscore.stats import paired as P

    d = a - b
    lo, hi = value_bounds
    bounds = (lo - hi, hi - lo) if lo is not None and hi is not None else (-math.inf, math.inf)
    reach = math.inf if hi is None else max(0.0, hi - min(a, b))
    if sets is None:
        return P.PairInference(a, b, d, n_units, METHOD, 1.0, 1.0, None, bounds,
                               lambda alpha: (-math.inf, math.inf), lambda effect, alpha: 0.0, reach=reach)
    c = sets.critical_value
    se = sets.standard_error(i, j)

    def interval(alpha: float) -> tuple[float, float]:
        if se <= 0.0:
            raise P._Constant(  # noqa: SLF001 - the paired tests' own "no interval" signal
                f"the two results are the same on every one of the {n_units} units: no spread of differences "
                "to estimate, so no interval" if d == 0 else
                f"every one of the {n_units} units differs by exactly the same amount: the spread of the "
                "differences cannot be estimated, so no interval (the test stands on its own)")
        return d - c * se, d + c * se

    def power(effect: float, alpha: float) -> float:
        return float(ndtr(effect / se - c)) if se > 0 else float(effect > 0)

    def mde(alpha: float) -> float:
        return (c + float(ndtri(0.80))) * se

    return P.PairInference(a, b, d, n_units, METHOD, sets.p_value(i, j), 1.0 / (sets.draws + 1),
                           se if se > 0 else None, bounds, interval, power, mde if se > 0 else None, reach=reach)
