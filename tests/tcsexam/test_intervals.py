"""95 % intervals beside the TCSExam index, track means and a Solver task's relative_score (issues 16, 29)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from test_index import SUITE, ok, row

from benchscore.stats import intervals as S

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tcsexam" / "seed-example"
BIG_SUITE = {"suite": "mini", "tracks": {"theorem": ["t1", "t2", "t3", "t4"], "solver": ["s1", "s2", "s3"],
                                         "construction": ["c1", "c2", "c3"], "conjecture": ["o1", "o2"]}}


def _rows(scores: dict[str, list[str]], tracks: dict[str, str]) -> list[str]:
    return [row(tracks[i], i, str(a + 1), v) for i, vs in scores.items() for a, v in enumerate(vs)]


def _big(tmp_path, monkeypatch, scores):
    import test_index

    monkeypatch.setattr(test_index, "SUITE", BIG_SUITE)
    tracks = {i: t for t, items in BIG_SUITE["tracks"].items() for i in items}
    return ok(tmp_path, _rows(scores, tracks), attempts=2)


SCORES = {"t1": ["1", "0"], "t2": ["1", "1"], "t3": ["0", "0"], "t4": ["1", "0"],
          "s1": ["0.5", "0.7"], "s2": ["0.25", "0.2"], "s3": ["0.9", "0.8"],
          "c1": ["1.5", "0.5"], "c2": ["2", "1"], "c3": ["0.75", "1"],
          "o1": ["0", "1"], "o2": ["1", "1"]}


def _task_means(scores: dict[str, list[str]], items: list[str]) -> np.ndarray:
    return np.array([np.mean([float(v) for v in scores[i]]) for i in items])


def test_track_intervals_take_tasks_as_units_and_the_lite_index_has_none(tmp_path, monkeypatch):
    data = _big(tmp_path, monkeypatch, SCORES)
    m = data["models"]["m"]
    assert data["provenance"]["intervals"] == {"level": 0.95}
    for t, items in BIG_SUITE["tracks"].items():
        rec = m["intervals"]["track_means"][t]
        x = _task_means(SCORES, items)
        if t == "construction":  # rewards without an upper bound: none below 20 tasks
            assert rec == {"ci95": None, "ci_method": "skew_corrected_t",
                           "ci_reason": "3 construction tasks: a calibrated 95 % interval needs at least 20 "
                                        "construction tasks (its values have no upper bound, so a few can hide a long tail)"}
            continue
        if len(items) < 3:
            assert rec["ci95"] is None and "needs at least 3" in rec["ci_reason"], (t, rec)
            continue
        want = S.ratio_interval(x, np.ones_like(x))
        assert rec == {"ci95": [want.low, want.high], "ci_method": want.method}, t
        assert want.low <= m["track_means"][t] <= want.high
    assert m["intervals"]["index"]["ci95"] is None
    assert m["intervals"]["index"]["ci_reason"].startswith("the construction track has no interval")


def test_the_index_combines_the_track_intervals_when_every_track_has_one(tmp_path, monkeypatch):
    import test_index

    suite = {"suite": "mini", "tracks": {"theorem": [f"t{i}" for i in range(6)], "solver": [f"s{i}" for i in range(5)],
                                        "construction": [f"c{i}" for i in range(20)],
                                        "conjecture": [f"o{i}" for i in range(4)]}}
    rng = np.random.default_rng(3)
    scores = {**{f"t{i}": [str(int(rng.random() < 0.6)), str(int(rng.random() < 0.6))] for i in range(6)},
              **{f"s{i}": [f"{rng.random():.3f}", f"{rng.random():.3f}"] for i in range(5)},
              **{f"c{i}": [f"{rng.lognormal(-0.5, 0.5):.3f}", f"{rng.lognormal(-0.5, 0.5):.3f}"] for i in range(20)},
              **{f"o{i}": ["1" if i == 0 else "0", "0"] for i in range(4)}}
    monkeypatch.setattr(test_index, "SUITE", suite)
    tracks = {i: t for t, items in suite["tracks"].items() for i in items}
    m = ok(tmp_path, _rows(scores, tracks), attempts=2)["models"]["m"]
    intervals, means = [], []
    for t in ("theorem", "solver", "construction", "conjecture"):
        x = _task_means(scores, suite["tracks"][t])
        got = S.ratio_interval(x, np.ones_like(x), bounded=t != "construction")
        assert m["intervals"]["track_means"][t] == {"ci95": [got.low, got.high], "ci_method": got.method}
        intervals.append(got)
        means.append(m["track_means"][t])
    want = S.mover(means, intervals, [30, 30, 30, 10])
    assert m["intervals"]["index"] == {"ci95": [want.low, want.high], "ci_method": "mover"}
    assert want.low < m["index"] < want.high


def test_a_track_scored_the_same_on_every_task_still_has_an_interval(tmp_path, monkeypatch):
    """The audit's case: a Lite track scored 0 on all 5 tasks had [0, 0]; every value the same is no
    evidence that another draw of tasks could not differ."""
    flat = {**SCORES, **{i: ["1", "1"] for i in ("t1", "t2", "t3", "t4")}, **{i: ["0.5", "0.5"] for i in ("s1", "s2", "s3")}}
    m = _big(tmp_path, monkeypatch, flat)["models"]["m"]
    low, high = m["intervals"]["track_means"]["theorem"]["ci95"]
    assert high == 1.0 and low < 0.6 and m["intervals"]["track_means"]["theorem"]["ci_method"] == "exact_mid_p"
    low, high = m["intervals"]["track_means"]["solver"]["ci95"]
    assert low < 0.5 < high and m["intervals"]["track_means"]["solver"]["ci_method"] == "units_wilson"


def test_incomplete_or_single_task_tracks_say_why(tmp_path):
    data = ok(tmp_path, [r for r in [
        row("theorem", "t1", "1", "1"), row("theorem", "t2", "1", "0"), row("solver", "s1", "1", "0.5"),
        row("construction", "c1", "1", "1")]])  # no conjecture result
    m = data["models"]["m"]
    assert m["index"] is None
    assert m["intervals"]["index"] == {"ci95": None, "ci_method": "mover",
                                       "ci_reason": "the index is null: the result is incomplete"}
    assert m["intervals"]["track_means"]["conjecture"]["ci_reason"].startswith("the track mean is null")
    assert m["intervals"]["track_means"]["solver"]["ci_reason"] == (
        "1 solver task: a calibrated 95 % interval needs at least 3 solver tasks")
    assert m["intervals"]["track_means"]["theorem"]["ci_reason"].startswith("2 theorem tasks")
    assert SUITE["tracks"]["solver"] == ["s1"]


def test_solver_relative_score_interval_takes_the_scored_instances_as_units():
    out = json.loads((EXAMPLE / "expected" / "maxcut-relative.json").read_text())
    scores = np.array([v["score"] for v in out["instances"].values()])
    assert len(scores) == out["scored_instance_count"]
    if len(scores) < 3:
        assert out["intervals"]["relative_score"]["ci95"] is None
    else:
        want = S.ratio_interval(scores, np.ones_like(scores))
        assert out["intervals"] == {"relative_score": {"ci95": [want.low, want.high], "ci_method": want.method}}
    assert out["provenance"]["intervals"] == {"level": 0.95}
