"""issue 16: 95 % intervals beside the TCSExam index, track means and a Solver task's relative_score."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from test_index import SUITE, ok, row

from benchscore.common import stats as S

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


def test_index_and_track_intervals_are_the_stratified_bootstrap(tmp_path, monkeypatch):
    data = _big(tmp_path, monkeypatch, SCORES)
    m = data["models"]["m"]
    prov = data["provenance"]["intervals"]
    assert prov == {"level": 0.95, "seed": 16, "resamples": 2000}
    arrays = {t: np.array([[float(v) for v in SCORES[i]] for i in items]) for t, items in BIG_SUITE["tracks"].items()}
    weights = {"theorem": 30.0, "solver": 30.0, "construction": 30.0, "conjecture": 10.0}
    want = S.stratified_bootstrap(list(arrays.values()), list(weights.values()), resamples=2000,
                                  rng=S.rng_for(16, "m", "index"), bounds=(0, None))
    assert m["intervals"]["index"] == {"ci95": list(want), "ci_method": "stratified_bootstrap"}
    assert m["intervals"]["index"]["ci95"][0] <= m["index"] <= m["intervals"]["index"]["ci95"][1]
    for t, arr in arrays.items():
        upper = None if t == "construction" else 1.0
        want = S.stratified_bootstrap([arr], [1.0], resamples=2000, rng=S.rng_for(16, "m", t), bounds=(0, upper))
        assert m["intervals"]["track_means"][t]["ci95"] == list(want), t


def test_every_resample_keeps_the_weights_and_tracks(tmp_path, monkeypatch):
    """Tracks whose tasks all score the same have no spread: the index interval then comes from the
    other tracks only, with their 30/30/30/10 weights (a bootstrap pooling tasks across tracks would
    mix a constant track with the others and widen it)."""
    flat = {**SCORES, **{i: ["1", "1"] for i in ("t1", "t2", "t3", "t4")}, **{i: ["0.5", "0.5"] for i in ("s1", "s2", "s3")},
            **{i: ["0", "0"] for i in ("o1", "o2")}}
    m = _big(tmp_path, monkeypatch, flat)["models"]["m"]
    for t, v in (("theorem", 1.0), ("solver", 0.5), ("conjecture", 0.0)):
        assert m["intervals"]["track_means"][t]["ci95"] == [v, v]
    lo, hi = m["intervals"]["index"]["ci95"]
    c_lo, c_hi = m["intervals"]["track_means"]["construction"]["ci95"]
    fixed = 30 * 1.0 + 30 * 0.5 + 10 * 0.0
    assert (lo, hi) == (fixed + 30 * c_lo, fixed + 30 * c_hi)


def test_incomplete_or_single_task_tracks_say_why(tmp_path):
    data = ok(tmp_path, [r for r in [
        row("theorem", "t1", "1", "1"), row("theorem", "t2", "1", "0"), row("solver", "s1", "1", "0.5"),
        row("construction", "c1", "1", "1")]])  # no conjecture result
    m = data["models"]["m"]
    assert m["index"] is None
    assert m["intervals"]["index"] == {"ci95": None, "ci_method": "stratified_bootstrap",
                                       "ci_reason": "the index is null: the result is incomplete"}
    assert m["intervals"]["track_means"]["conjecture"]["ci_reason"].startswith("the track mean is null")
    assert m["intervals"]["track_means"]["solver"]["ci_reason"].startswith("a track has one task")
    assert m["intervals"]["track_means"]["theorem"]["ci95"] is not None
    assert SUITE["tracks"]["solver"] == ["s1"]


def test_solver_relative_score_interval_is_t_over_scored_instances():
    out = json.loads((EXAMPLE / "expected" / "maxcut-relative.json").read_text())
    scores = [v["score"] for v in out["instances"].values()]
    assert len(scores) == out["scored_instance_count"]
    assert out["intervals"] == {"relative_score": {"ci95": list(S.t_interval(scores, bounds=(0, 1))), "ci_method": "t"}}
    assert out["provenance"]["intervals"] == {"level": 0.95}
