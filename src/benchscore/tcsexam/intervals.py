"""95 % intervals beside the TCSExam headline numbers.

- Each track mean (the mean of its task means): :func:`benchscore.stats.intervals.ratio_interval` with
  the tasks as units: ``exact_mid_p`` for a 0/1 track with one attempt a task, ``cluster_wilson``
  for other tracks in [0, 1] (theorem and conjecture with several attempts, solver), and the
  ``skew_corrected_t`` interval for construction rewards (no upper bound), which needs 20 tasks:
  with fewer, a few tasks can hide a long tail and no interval is calibrated (docs/statistics.md).
- The index ``30P + 30S + 30C + 10O``: ``mover``, the intervals of the four track means combined
  (the tracks' tasks are independent); none when a track has none.
- A Solver task's ``relative_score``: ``ratio_interval`` over its scored instances (in [0, 1]).

Only complete tasks enter; a track or an index that is null has a null interval with the reason.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchscore.stats import intervals as S

from .formulas import TRACKS, UNBOUNDED_TRACKS, WEIGHTS


def _method(track: str) -> str:
    return "skew_corrected_t" if track in UNBOUNDED_TRACKS else "cluster_wilson"


def model_intervals(scores: dict[str, list[list[float]]], track_means: dict[str, float | None],
                    index: float | None) -> dict[str, Any]:
    """``{"index": record, "track_means": {track: record}}`` for one model; ``scores[track]`` holds
    the adopted valid attempt scores of each complete task of the track (one list per task)."""
    task_means = {t: np.array([float(np.mean(x)) for x in scores.get(t, [])], dtype=float) for t in TRACKS}
    got: dict[str, S.Interval | str] = {}
    out: dict[str, Any] = {"track_means": {}}
    for t in TRACKS:
        if track_means[t] is None:
            why = "the track mean is null: a task of the track has no complete result"
            out["track_means"][t] = S.beside(None, unavailable=why, method=_method(t))
            got[t] = why
            continue
        x = task_means[t]
        try:
            got[t] = S.ratio_interval(x, np.ones_like(x), bounded=t not in UNBOUNDED_TRACKS, unit=f"{t} task")
        except S.NoInterval as exc:
            got[t] = str(exc)
        record = got[t]
        out["track_means"][t] = S.beside(lambda record=record: _raise_or(record), method=_method(t))
    if index is None:
        out["index"] = S.beside(None, unavailable="the index is null: the result is incomplete", method="mover")
    else:
        missing = [t for t in TRACKS if not isinstance(got[t], S.Interval)]
        if missing:
            t = missing[0]
            out["index"] = S.beside(None, method="mover", unavailable=f"the {t} track has no interval ({got[t]})")
        else:
            out["index"] = S.beside(lambda: S.mover([float(track_means[t]) for t in TRACKS],  # type: ignore[arg-type]
                                                    [got[t] for t in TRACKS],  # type: ignore[misc]
                                                    [WEIGHTS[t] for t in TRACKS]))
    out = {"index": out.pop("index"), "track_means": out["track_means"]}
    return out


def _raise_or(record: S.Interval | str) -> S.Interval:
    if isinstance(record, str):
        raise S.NoInterval(record)
    return record


def relative_score_interval(instance_scores: np.ndarray) -> dict[str, Any]:
    """The interval of a Solver task's ``relative_score`` over its scored instances (scores in [0, 1])."""
    x = np.asarray(instance_scores, dtype=float)
    return S.beside(lambda: S.ratio_interval(x, np.ones_like(x), unit="scored instance"), method="cluster_wilson")
