"""issue 38 point 4: compare obeys the floors of single intervals. A TCSExam Lite index (5 tasks a track)
has no interval of its own (the construction track needs 20 tasks); compare gave the same index a finite
interval, an MDE of about 38 points and a verdict built on the 5 construction tasks the floor says
cannot be trusted. Now: cannot_separate_at_this_n with the reason, no interval, no MDE, and the
components it can compare listed."""

from __future__ import annotations

import orjson

from benchscore.stats import compare as C
from test_compare import _lite, run


def _load(p):
    return orjson.loads(p.read_bytes())


def _lite_pair(tmp_path):
    return _lite(tmp_path, {"theorem": lambda i: i % 2, "solver": lambda i: 0.5 + 0.05 * i,
                            "construction": lambda i: 1.0 + 0.3 * i, "conjecture": lambda i: 1},
                 {"theorem": lambda i: 0, "solver": lambda i: 0.3 + 0.04 * i, "construction": lambda i: 0.5 + 0.1 * i,
                  "conjecture": lambda i: i % 2})


def test_a_lite_index_without_its_own_interval_cannot_be_separated_in_compare(tmp_path):
    out = _lite_pair(tmp_path)
    own = _load(out)["models"]["a"]["intervals"]["index"]
    assert own["ci95"] is None and "construction" in own["ci_reason"]
    r = run("compare", out, "--output", tmp_path / "c.json")
    doc = _load(tmp_path / "c.json")
    rows = {m["name"]: m for m in doc["comparisons"][0]["metrics"]}
    index = rows["index"]
    assert index["verdict"] == "cannot_separate_at_this_n"
    assert index["ci95"] is None and index["minimum_detectable_effect"] is None
    assert "construction" in index["verdict_reason"] and "20" in index["verdict_reason"]
    assert index["ci_reason"] == index["verdict_reason"] and index["mde_reason"] == index["verdict_reason"]
    # the components it can compare: the tracks with an interval of their own (construction has none)
    assert index["components"] == ["track_means.theorem", "track_means.solver", "track_means.conjecture"]
    assert "its components compared instead: track_means.theorem, track_means.solver, track_means.conjecture" in (
        index["verdict_reason"])
    assert "cannot separate at this n (the own interval of index in i.json:a is null" in r.output
    assert r.output.count("the own interval of index in i.json:a is null") == 1  # said once, not again as ci_reason
    # the construction track has no interval of its own either: the same floor, no components
    construction = rows["track_means.construction"]
    assert construction["verdict"] == "cannot_separate_at_this_n" and construction["ci95"] is None
    assert "components" not in construction and "20" in construction["verdict_reason"]
    # the bounded tracks are compared as before
    assert rows["track_means.solver"]["ci95"] is not None
    C.formats()["benchscore-compare"].model_validate(doc)
