"""TCSExam formulas: pure functions on plain values and numpy arrays (no files, no I/O).

Seed: 000_1a69c1833059069f.txt ("分数计算"). Section names below quote the seed's headings:
"固定参照下的 Solver 计分" (fixed-reference Solver scoring), "按以下顺序求平均" (averaging order),
"四类题型的成绩" (the four tracks) and "重新计算综合指数" (recomputing the index).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

#: the metric id of the composite index, exactly as the seed names it
METRIC_ID = "tcsexam-index-original-30303010-v0.1"
#: the Solver score type, exactly as the seed names it; also the solver-score metric id
SOLVER_METRIC_ID = "fixed_reference_relative"
#: track names in files, with their letter in the index formula and their weight
TRACKS = ("theorem", "solver", "construction", "conjecture")
TRACK_LETTERS = {"theorem": "P", "solver": "S", "construction": "C", "conjecture": "O"}
WEIGHTS = {"theorem": 30.0, "solver": 30.0, "construction": 30.0, "conjecture": 10.0}
#: tracks whose scores have no upper bound (construction rewards may exceed 1); the others lie in [0, 1]
UNBOUNDED_TRACKS = frozenset({"construction"})
#: result statuses, worst last
STATUS_ORDER = ("complete", "provisional", "incomplete")


def reference_stats(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per reference instance: ``(n_usable, mu, s)`` from a 2-D array of runs (NaN = unusable run).

    ``mu`` is the mean of the usable values, ``s`` their sample standard deviation
    ``sqrt(sum((x - mu)^2) / (n - 1))``. Rows with fewer than two usable values get NaN for
    ``mu``/``s`` (they are not scored). Seed: "固定参照下的 Solver 计分" (mu, s).
    """
    vals = np.asarray(values, dtype=float)
    if vals.ndim != 2:
        raise ValueError("reference values must be a 2-D array (instances x runs)")
    usable = ~np.isnan(vals)
    n = usable.sum(axis=1)
    filled = np.where(usable, vals, 0.0)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):  # callers check finiteness
        mu = filled.sum(axis=1) / n
        dev = np.where(usable, vals - mu[:, None], 0.0)
        s = np.sqrt((dev * dev).sum(axis=1) / (n - 1))
    scored = n >= 2
    mu = np.where(scored, mu, np.nan)
    s = np.where(scored, s, np.nan)
    return n, mu, s


def instance_scale(s, mu, relative: float, absolute: float):
    """``scale = max(s, relative * |mu|, absolute)``; relative = 0.02 and absolute = 1e-9 in
    the seed's reference. Works on floats and arrays (an overflow gives inf, no warning: callers
    check finiteness). Seed: "固定参照下的 Solver 计分"."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.maximum(np.maximum(s, relative * np.abs(mu)), absolute)


def instance_z(a, mu, scale, direction: str):
    """``z = (A - mu) / scale`` when maximizing, ``z = (mu - A) / scale`` when minimizing.
    Seed: "固定参照下的 Solver 计分"."""
    if direction == "maximize":
        return (np.asarray(a, dtype=float) - mu) / scale
    if direction == "minimize":
        return (mu - np.asarray(a, dtype=float)) / scale
    raise ValueError(f"direction must be 'maximize' or 'minimize', got {direction!r}")


def _phi(z):
    """The standard normal CDF ``Phi`` (``scipy.special.ndtr``; scipy is imported on first use)."""
    from scipy.special import ndtr

    return ndtr(z)


def instance_score(a, mu, scale, direction: str):
    """Instance score ``Phi(z)`` (standard normal CDF) of a valid candidate value ``A``; a valid
    value equal to ``mu`` scores 0.5. Seed: "固定参照下的 Solver 计分"."""
    return _phi(instance_z(a, mu, scale, direction))


def scored_instance_scores(a, ok, mu, scale, direction: str) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised instance scores: ``(score, z)``, where rows with ``ok`` False (invalid solution,
    timeout, crash, certificate failure) score 0 and get z = NaN. Seed: "固定参照下的 Solver 计分"
    (求解器提交无效解、超时或崩溃时，该实例得 0 分)."""
    ok = np.asarray(ok, dtype=bool)
    a = np.where(ok, np.asarray(a, dtype=float), np.asarray(mu, dtype=float))
    with np.errstate(invalid="ignore"):
        z = instance_z(a, mu, scale, direction)
    z = np.where(ok, z, np.nan)
    score = np.where(ok, _phi(np.where(ok, z, 0.0)), 0.0)
    return score, z


def task_score(instance_scores: Sequence[float] | np.ndarray) -> float:
    """Task score = mean of the instance scores over the scored instances (math.fsum).
    Seed: "固定参照下的 Solver 计分" (对符合计分条件的实例分数求平均，得到任务分数)."""
    arr = np.asarray(instance_scores, dtype=float)
    if arr.size == 0:
        raise ValueError("a task needs at least one scored instance")
    return math.fsum(arr.tolist()) / arr.size


def task_mean(attempt_scores: Sequence[float]) -> float:
    """Step 1 of the averaging order: mean of a task's adopted attempts (math.fsum).
    Seed: "按以下顺序求平均" 1."""
    if len(attempt_scores) == 0:
        raise ValueError("a task mean needs at least one adopted attempt")
    return math.fsum(attempt_scores) / len(attempt_scores)


def track_mean(task_means: Iterable[float]) -> float:
    """Step 2: tasks weigh equally within a track, whatever their number of repeats.
    Seed: "按以下顺序求平均" 2."""
    values = list(task_means)
    if not values:
        raise ValueError("a track mean needs at least one task")
    return math.fsum(values) / len(values)


def tcsexam_index(track_means: Mapping[str, float]) -> float:
    """Step 3: ``index = 30P + 30S + 30C + 10O`` in points (P theorem, S solver, C construction,
    O conjecture); may exceed 100 because construction rewards may exceed 1.
    Seed: "按以下顺序求平均" 3 and "四类题型的成绩" (30P+30S+30C+10O)."""
    missing = [t for t in TRACKS if t not in track_means]
    if missing:
        raise ValueError(f"track means missing for {', '.join(missing)}")
    return math.fsum(WEIGHTS[t] * float(track_means[t]) for t in TRACKS)


def worst_status(statuses: Iterable[str]) -> str:
    """The worst of ``complete`` < ``provisional`` < ``incomplete`` (``complete`` when empty).
    Seed: "按以下顺序求平均" (不完整 / 暂定)."""
    worst = 0
    for status in statuses:
        worst = max(worst, STATUS_ORDER.index(status))
    return STATUS_ORDER[worst]


def resolve_status(*, gaps: int, provisional: int, unexplained_exclusions: int) -> str:
    """``incomplete`` when any planned task or attempt is missing or not valid (``gaps`` > 0),
    else ``provisional`` when an adopted attempt is ``selected_provisional`` or an excluded attempt
    carries no reason (``unexplained_exclusions`` > 0), else ``complete``.
    Seed: "按以下顺序求平均" (缺少任务结果或计划中的重复尝试时，结果标为不完整 ... 暂定) and "尝试记录表"
    (如果替换某次尝试，将原行保留为 excluded，并记录采用替代结果的原因)."""
    if gaps > 0:
        return "incomplete"
    if provisional > 0 or unexplained_exclusions > 0:
        return "provisional"
    return "complete"
