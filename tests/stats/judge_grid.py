"""The calibration grid of the judge statistics (issue 36): judges of known error rates, seeded.

A population of :data:`POPULATION` judged items has true 0/1 values of prevalence ``prev``; a judge of
sensitivity ``sens`` and specificity ``spec`` gives each its verdict; ``n`` items, drawn at random, get their
known value. Per cell, over ``reps`` data sets:

- :func:`ppi_cell`: how often :func:`benchscore.stats.ppi.corrected_mean`'s 95 % interval holds ``prev``
  (the mean the items are drawn from), the corrected estimate's bias and the judge's raw mean's bias;
- :func:`kappa_cell`: how often the kappa interval of :func:`benchscore.stats.agreement.kappa_interval`
  holds the judge's true kappa, and how often the sensitivity and specificity intervals hold theirs.

The grid is the issue's: sensitivity and specificity 0.6, 0.8, 0.95, 0.99; prevalence 0.1, 0.5, 0.9;
20, 50, 100, 400 known verdicts.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from benchscore.stats import agreement as A
from benchscore.stats import ppi as PPI
from benchscore.stats.intervals import NoInterval, mid_p

SENS = (0.6, 0.8, 0.95, 0.99)
SPEC = (0.6, 0.8, 0.95, 0.99)
PREV = (0.1, 0.5, 0.9)
KNOWN = (20, 50, 100, 400)
POPULATION = 1000
COVERAGE_MIN = 0.93
BIAS_MAX = 0.01


@dataclass(frozen=True)
class Cell:
    sens: float
    spec: float
    prev: float
    n: int


def grid() -> list[Cell]:
    return [Cell(*c) for c in itertools.product(SENS, SPEC, PREV, KNOWN)]


def true_kappa(c: Cell) -> float:
    p = np.array([c.prev * c.sens, c.prev * (1 - c.sens), (1 - c.prev) * (1 - c.spec), (1 - c.prev) * c.spec])
    return float(A.kappa_of_cells(p))


def draw(c: Cell, rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    y = (rng.random(size) < c.prev).astype(float)
    yhat = np.where(y == 1.0, rng.random(size) < c.sens, rng.random(size) >= c.spec).astype(float)
    return y, yhat


Estimator = Callable[[np.ndarray, list, np.ndarray], tuple[float, float | None, float | None]]


def corrected(yhat: np.ndarray, known: list, judged: np.ndarray) -> tuple[float, float | None, float | None]:
    got = PPI.corrected_mean(yhat, known, judged)
    return got.estimate, got.low, got.high


def ppi_cell(c: Cell, reps: int, seed: int, estimator: Estimator = corrected) -> dict[str, float]:
    """Coverage of the corrected interval, bias of the corrected and of the raw estimate, share of nulls."""
    rng = np.random.default_rng([seed, int(c.sens * 100), int(c.spec * 100), int(c.prev * 100), c.n])
    judged = np.ones(POPULATION, dtype=bool)
    covered = nulls = 0
    errors, raw_errors = [], []
    for _ in range(reps):
        y, yhat = draw(c, rng, POPULATION)
        known: list = [None] * POPULATION
        for i in rng.choice(POPULATION, size=c.n, replace=False):
            known[i] = float(y[i])
        estimate, low, high = estimator(yhat, known, judged)
        errors.append(estimate - c.prev)
        raw_errors.append(float(yhat.mean()) - c.prev)
        if low is None:
            nulls += 1
        elif low <= c.prev <= high:
            covered += 1
    return {"coverage": covered / reps, "bias": float(np.mean(errors)), "raw_bias": float(np.mean(raw_errors)),
            "bias_se": float(np.std(errors) / np.sqrt(reps)), "nulls": nulls / reps}


def kappa_cell(c: Cell, reps: int, seed: int, draws: int = 4000,
               interval: Callable[[A.Confusion, np.random.Generator], tuple[float, float]] | None = None
               ) -> dict[str, float]:
    """Coverage of the kappa, sensitivity and specificity intervals (``interval``: another kappa method, for the
    test that shows the grid can fail one)."""
    rng = np.random.default_rng([seed, 7, int(c.sens * 100), int(c.spec * 100), int(c.prev * 100), c.n])
    truth = true_kappa(c)
    p = np.array([c.prev * c.sens, c.prev * (1 - c.sens), (1 - c.prev) * (1 - c.spec), (1 - c.prev) * c.spec])
    hits = {"kappa": 0, "sensitivity": 0, "specificity": 0}
    given = {"kappa": 0, "sensitivity": 0, "specificity": 0}
    for cells in rng.multinomial(c.n, p, size=reps):
        table = A.Confusion(*map(int, cells))
        try:
            if interval is None:
                got = A.kappa_interval(table, rng=rng, draws=draws)
                low, high = got.low, got.high
            else:
                low, high = interval(table, rng)
            given["kappa"] += 1
            hits["kappa"] += low <= truth <= high
        except NoInterval:
            pass
        for name, k, m, true in (("sensitivity", table.true_pass, table.known_pass, c.sens),
                                 ("specificity", table.true_fail, table.known_fail, c.spec)):
            if m >= A.MIN_CLASS:
                lo, hi = mid_p(k, m)
                given[name] += 1
                hits[name] += lo <= true <= hi
    return {f"{k}_coverage": hits[k] / given[k] if given[k] else float("nan") for k in hits} | {
        "kappa_nulls": 1 - given["kappa"] / reps, "kappa": truth}
