"""The calibration grid of the simultaneous rank sets (:mod:`benchscore.stats.ranks`): seeded boards whose true
ranks are known.

A board is ``models`` results on the same ``units`` questions drawn afresh from a population of
questions: result ``j`` answers question ``i`` right with probability ``logistic(a_j - b_i + e_ij)``, the
difficulty ``b_i ~ N(0, 1.2^2)`` shared by every model (so results are correlated, as real ones are) and
``e_ij ~ N(0, 0.6^2)`` a model x question interaction. Its true value is ``theta_j = E logistic(a_j - v)``
with ``v ~ N(0, 1.2^2 + 0.6^2)`` (Gauss-Hermite quadrature, 200 nodes): equal abilities give exactly equal
values (ties), abilities a tenth of a standard error apart near-ties. A draw *covers* when every result's
set holds every rank its result could take, ``[1 + #{theta_k > theta_j}, N - #{theta_k < theta_j}]``, all at
once (the whole tied range, stronger than one rank per tie).

Designs (:func:`abilities`): ``null`` (every model tied: the hardest case for a familywise level;
``null, high rate`` the same at a rate near 0.85, where 0/1 outcomes are skewed),
``ties`` (tied groups of 1-5 models, neighbouring groups 0.2-3 standard errors apart: ties and near-ties
everywhere), ``near-ties`` (every model a tenth of a standard error from the next, every tenth pair tied),
``spread`` (a wide board, most pairs far apart, with tied pairs: many rejections and several steps). The
spacing is in standard errors of a difference at the cell's units, so every cell is at the limit of
what its units can separate.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from benchscore.stats import ranks as K

#: the spread of question difficulty and of the model x question interaction (logit scale)
DIFFICULTY_SD = 1.2
INTERACTION_SD = 0.6
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(200)


def true_values(a: np.ndarray) -> np.ndarray:
    """``E logistic(a - v)``, ``v ~ N(0, DIFFICULTY_SD^2 + INTERACTION_SD^2)``: probabilists' Gauss-Hermite."""
    sd = math.hypot(DIFFICULTY_SD, INTERACTION_SD)
    p = 1.0 / (1.0 + np.exp(-(a[:, None] - sd * _NODES[None, :])))
    return p @ _WEIGHTS / math.sqrt(2 * math.pi)


def _slope(a: float = 0.0) -> float:
    """d theta / d a at ``a`` (to space abilities in standard errors)."""
    h = 1e-4
    return float((true_values(np.array([a + h])) - true_values(np.array([a - h])))[0] / (2 * h))


def abilities(design: str, models: int, units: int, rng: np.random.Generator) -> np.ndarray:
    """The models' abilities (logit) for a design, spaced in standard errors of a difference at ``units``."""
    se = math.sqrt(2 * 0.2 / units) / _slope()  # a difference's standard error at these units, in logit
    if design == "null":
        return np.zeros(models)
    if design == "null, high rate":
        return np.full(models, 2.5)
    if design == "near-ties":
        a = np.arange(models) * 0.1 * se
        a[1::10] = a[0::10][: a[1::10].size]  # every tenth pair tied
        return a - a.mean()
    if design == "ties":
        out: list[float] = []
        level = 0.0
        while len(out) < models:
            out.extend([level] * int(rng.integers(1, 6)))
            level += float(rng.choice([0.2, 0.5, 1.0, 3.0])) * se
        a = np.array(out[:models])
        return a - a.mean()
    if design == "spread":
        a = np.linspace(-2.0, 2.0, models)
        a[1::7] = a[0::7][: a[1::7].size]
        return a
    raise ValueError(design)


def draw_board(rng: np.random.Generator, a: np.ndarray, units: int) -> np.ndarray:
    """0/1 outcomes, ``units x models``."""
    b = rng.normal(0.0, DIFFICULTY_SD, size=units)
    e = rng.normal(0.0, INTERACTION_SD, size=(units, a.size))
    logit = a[None, :] - b[:, None] + e
    return (rng.random((units, a.size)) < 1.0 / (1.0 + np.exp(-logit))).astype(float)


def true_range(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per result, every rank it could take: ``[1 + #{theta_k > theta_j}, N - #{theta_k < theta_j}]``."""
    n = theta.size
    better = (theta[None, :] > theta[:, None]).sum(axis=1)
    worse = (theta[None, :] < theta[:, None]).sum(axis=1)
    return 1 + better, n - worse


def mean_contributions(x: np.ndarray) -> np.ndarray:
    g = x.shape[0]
    return K.contributions(x, np.ones_like(x), np.zeros(g, dtype=np.int64), np.array([1.0]), 1.0)


Method = Callable[[np.ndarray, np.ndarray, np.random.Generator], tuple[np.ndarray, np.ndarray]]


def max_t(u: np.ndarray, theta: np.ndarray, rng: np.random.Generator, draws: int = K.DEFAULT_DRAWS):
    r = K.rank_sets(u, theta, draws=draws, rng=rng)
    return r.lower, r.upper, r


@dataclass(frozen=True)
class RankCell:
    design: str
    models: int
    units: int

    @property
    def label(self) -> str:
        return f"{self.design}, {self.models} models x {self.units} questions"


@dataclass
class RankResult:
    cell: RankCell
    draws: int
    coverage: float
    mean_width: float
    steps: float
    separated: float

    @property
    def se(self) -> float:
        return math.sqrt(max(self.coverage * (1 - self.coverage), 0.05 * 0.95) / self.draws)


def run_cell(cell: RankCell, sims: int, seed: int, method: Method | None = None,
             multiplier_draws: int = K.DEFAULT_DRAWS) -> RankResult:
    """``sims`` seeded boards of a cell: the share whose sets cover every true rank range at once, the
    mean width of a set (``upper - lower + 1``), the mean number of steps and share of pairs separated."""
    rng = np.random.default_rng(seed)
    a = abilities(cell.design, cell.models, cell.units, rng)
    theta = true_values(a)
    lo_true, hi_true = true_range(theta)
    covered = 0
    width = steps = separated = 0.0
    n = cell.models
    for _ in range(sims):
        x = draw_board(rng, a, cell.units)
        u = mean_contributions(x)
        child = np.random.default_rng(int(rng.integers(1 << 62)))
        if method is None:
            lower, upper, r = max_t(u, x.mean(axis=0), child, multiplier_draws)
            steps += len(r.steps)
            separated += sum(s.rejected for s in r.steps) / (n * (n - 1) / 2)
        else:
            lower, upper = method(u, x.mean(axis=0), child)
        covered += bool(np.all(lower <= lo_true) and np.all(upper >= hi_true))
        width += float(np.mean(upper - lower + 1))
    return RankResult(cell, sims, covered / sims, width / sims, steps / sims, separated / sims)


def verdict(r: RankResult) -> str | None:
    """None when the cell meets the claim (every true rank covered at once in at least 95 % of draws, up to
    two Monte-Carlo standard errors of the simulation), else why not. Below :data:`ranks.MIN_UNITS` the method
    claims nothing (compare gives no rank sets there): the cell is run to show why."""
    if r.cell.units < K.MIN_UNITS:
        return None
    return verdict_alone(r)


def verdict_alone(r: RankResult) -> str | None:
    """The same band, whatever the units (what the method would give without compare's floor)."""
    if r.coverage < 0.95 - 2 * r.se:
        return f"covers {100 * r.coverage:.1f} % of draws, below 95 % by more than two standard errors"
    return None


def grid(thorough: bool) -> list[tuple[RankCell, int]]:
    """The cells and their simulated boards: 10, 100 and 1,000 models, 100 to 10,000 questions (below
    :data:`ranks.MIN_UNITS` to show where the method stops holding)."""
    if not thorough:
        return [(RankCell("null", 10, 1000), 300), (RankCell("ties", 10, 1000), 200),
                (RankCell("near-ties", 100, 1000), 60), (RankCell("ties", 100, 1000), 60)]
    cells: list[tuple[RankCell, int]] = []
    for models, sims, sims_large in ((10, 1000, 300), (100, 500, 100)):
        for units in (100, 300, 1000, 10_000):
            for design in ("null", "null, high rate", "ties", "near-ties", "spread"):
                cells.append((RankCell(design, models, units), sims if units <= 1000 else sims_large))
    for design in ("null", "ties", "near-ties", "spread"):
        cells.append((RankCell(design, 1000, 1000), 200))
    cells.append((RankCell("ties", 1000, 10_000), 60))
    return cells


def agreement(design: str, models: int, units: int, boards: int, seed: int) -> dict[str, float]:
    """Holm over every pair's exact test against the max-t sets on ``boards`` seeded boards of a design (0/1
    outcomes, compare's leaderboard): the share of results whose sets are identical, narrower or wider with
    the max-t sets, and the largest difference of a bound."""
    from benchscore.stats import compare as C

    rng = np.random.default_rng(seed)
    ids = [f"q{i}" for i in range(units)]
    same = narrower = wider = total = 0
    most = 0
    for b in range(boards):
        x = draw_board(rng, abilities(design, models, units, rng), units)
        entries = [C.Entry(f"m{j:03d}", "simulated", {}, [C.Metric(
            "accuracy", float(x[:, j].mean()), dict(zip(ids, [(float(v), 1.0) for v in x[:, j]], strict=True)),
            binary=True, bounds=(0.0, 1.0))]) for j in range(models)]
        h, m = ({r["label"]: r["rank_range"] for r in C.compare(
            entries, rank_sets=method, seed=b, standings=True, detectable_effects=False)["leaderboards"]["accuracy"]}
            for method in ("holm", "max-t"))
        for label, (lo, hi) in h.items():
            mlo, mhi = m[label]
            total += 1
            same += (lo, hi) == (mlo, mhi)
            narrower += mhi - mlo < hi - lo
            wider += mhi - mlo > hi - lo
            most = max(most, abs(lo - mlo), abs(hi - mhi))
    return {"identical": same / total, "narrower": narrower / total, "wider": wider / total, "largest": most}
