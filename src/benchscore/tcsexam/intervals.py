"""95 % intervals beside the TCSExam headline numbers (issue 16).

- The index and each track mean: ``stratified_bootstrap`` over tasks. Tracks are strata: a
  resample draws each track's tasks from that track only (with replacement, as many as it has),
  and each drawn task's attempts from that task, so the 30/30/30/10 weights and "every task of a
  track weighs the same" hold in every resample. Only complete tasks enter; a track or an index
  that is null has a null interval with the reason.
- A Solver task's ``relative_score``: ``t`` over its scored instances (the mean of independent
  instance scores).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchscore.common import stats as S

from .formulas import TRACKS, WEIGHTS

#: tracks whose scores lie in [0, 1] (construction rewards are only non-negative)
_UNIT_RANGE = {"theorem", "solver", "conjecture"}


def model_intervals(scores: dict[str, list[list[float]]], track_means: dict[str, float | None],
                    index: float | None, *, model: str, seed: int, resamples: int) -> dict[str, Any]:
    """``{"index": record, "track_means": {track: record}}`` for one model; ``scores[track]`` holds
    the adopted valid attempt scores of each complete task of the track (one list per task)."""
    arrays = {t: np.asarray(scores.get(t, []), dtype=float) for t in TRACKS}
    out: dict[str, Any] = {}

    def track(t: str) -> dict[str, Any]:
        if track_means[t] is None:
            return S.beside("stratified_bootstrap", None,
                            unavailable="the track mean is null: a task of the track has no complete result")
        return S.beside("stratified_bootstrap", lambda: S.stratified_bootstrap(
            [arrays[t]], [1.0], resamples=resamples, rng=S.rng_for(seed, model, t),
            bounds=(0.0, 1.0 if t in _UNIT_RANGE else None)))

    if index is None:
        out["index"] = S.beside("stratified_bootstrap", None, unavailable="the index is null: the result is incomplete")
    else:
        out["index"] = S.beside("stratified_bootstrap", lambda: S.stratified_bootstrap(
            [arrays[t] for t in TRACKS], [WEIGHTS[t] for t in TRACKS], resamples=resamples,
            rng=S.rng_for(seed, model, "index"), bounds=(0.0, None)))
    out["track_means"] = {t: track(t) for t in TRACKS}
    return out


def relative_score_interval(instance_scores: np.ndarray) -> dict[str, Any]:
    """The ``t`` interval of a Solver task's ``relative_score`` over its scored instances."""
    return S.beside("t", lambda: S.t_interval(instance_scores, bounds=(0.0, 1.0), unit="scored instance"))
