"""issue 38 point 1: every ``differs`` says what it rests on (the fewest units whose removal changes it), in
the JSON, the terminal and the comparison page; a leaderboard says which separations are fragile."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
from click.testing import CliRunner

from benchscore.cli import cli
from benchscore.stats import compare as C

ENV = {"SOURCE_DATE_EPOCH": "1767225600"}


def run(*args, expect=0):
    result = CliRunner().invoke(cli, [str(a) for a in args], env=ENV)
    assert result.exit_code == expect, (result.output, result.stderr_bytes)
    return result


def _six_tasks(tmp_path: Path) -> Path:
    """Two models, 6 tasks a track: a solves every theorem task and b none (2/64: separated, and
    without any one task 5 cannot be); the other tracks the same for both but for small shifts."""
    tracks = {t: [f"{t[:4]}{i}" for i in range(6)] for t in ("theorem", "solver", "construction", "conjecture")}
    (tmp_path / "suite.json").write_text(json.dumps({"suite": "six", "tracks": tracks}))
    (tmp_path / "cohort.json").write_text(json.dumps({
        "suite": "six", "solver_protocol": "offline", "solver_reference_id": "k3", "adoption_rule": "first",
        "models": {"a": {"attempts_per_task": 1}, "b": {"attempts_per_task": 1}}}))
    scores = {"a": {"theorem": lambda i: 1, "solver": lambda i: 0.5 + 0.05 * i, "construction": lambda i: 1.0 + i,
                    "conjecture": lambda i: i % 2},
              "b": {"theorem": lambda i: 0, "solver": lambda i: 0.5 + 0.04 * i, "construction": lambda i: 1.0 + i,
                    "conjecture": lambda i: i % 2}}
    lines = ["model,track,item,attempt,score,adoption_status,score_status,score_type,solver_protocol"]
    for model, s in scores.items():
        for track, items in tracks.items():
            for i, item in enumerate(items):
                kind = "fixed_reference_relative,offline" if track == "solver" else "original_task_score,"
                lines.append(f"{model},{track},{item},1,{s[track](i)},selected,valid,{kind}")
    (tmp_path / "attempts.csv").write_text("\n".join(lines) + "\n")
    run("tcsexam", "score", "--suite", tmp_path / "suite.json", "--attempts", tmp_path / "attempts.csv", "--cohort",
        tmp_path / "cohort.json", "--output", tmp_path / "i.json")
    return tmp_path / "i.json"


def test_a_differs_on_six_units_rests_on_one_and_says_so_everywhere(tmp_path):
    r = run("compare", _six_tasks(tmp_path), "--output", tmp_path / "c.json")
    rows = {m["name"]: m for m in orjson.loads((tmp_path / "c.json").read_bytes())["comparisons"][0]["metrics"]}
    theorem = rows["track_means.theorem"]
    assert theorem["verdict"] == "differs" and theorem["test"] == "mcnemar_exact"
    f = theorem["fragility"]
    assert f["units_to_change"] == 1 and f["n_units"] == 6 and f["method"] == "exact" and f["fragile"] is True
    assert f["removed"][0].startswith("theorem/theo") and f["share"] == 1 / 6
    # a verdict other than differs rests on nothing: no fragility
    assert all("fragility" not in m for m in rows.values() if m["verdict"] != "differs")
    assert "rests on 1 of 6 units (exact: every smaller set of units tried): removing theorem/theo" in r.output
    assert "FRAGILE" in r.output
    # the comparison page says the same
    page = tmp_path / "page.html"
    got = CliRunner().invoke(cli, ["report", str(tmp_path / "c.json"), "--output", str(page)], env=ENV)
    assert got.exit_code == 0, got.output
    assert "rests on 1 of 6 units" in page.read_text() and "FRAGILE" in page.read_text()
    # the output is a compare output as its model says
    C.formats()["benchscore-compare"].model_validate(orjson.loads((tmp_path / "c.json").read_bytes()))


def _entry(label: str, values: list[float]) -> C.Entry:
    items = {f"q{k}": (v, 1.0) for k, v in enumerate(values)}
    return C.Entry(label, "plain", {}, [C.Metric("accuracy", sum(values) / len(values), items, binary=True,
                                                 bounds=(0.0, 1.0))])


def test_a_leaderboard_names_the_separations_that_are_fragile(capsys):
    """a beats b on 6 of 6 items (separated, fragile: 5 items cannot separate) and c on 20 of 20 (not
    fragile: it takes 16 items); the rank intervals and groups count both, fragile_separations says which
    is fragile."""
    a = _entry("a", [1.0] * 26)
    b = _entry("b", [0.0] * 6 + [1.0] * 20)
    c = _entry("c", [1.0] * 6 + [0.0] * 20)
    doc = C.compare([a, b, c], seed=1)
    rows = {(p["a"], p["b"]): p["metrics"][0] for p in doc["comparisons"]}
    assert rows[("a", "b")]["verdict"] == rows[("a", "c")]["verdict"] == "differs"
    assert rows[("a", "b")]["fragility"]["fragile"] is True
    assert rows[("a", "c")]["fragility"]["fragile"] is False
    board = {r["label"]: r for r in doc["leaderboards"]["accuracy"]}
    assert board["a"]["fragile_separations"] == ["b"] and board["b"]["fragile_separations"] == ["a"]
    assert "fragile_separations" not in board["c"]
    assert board["a"]["rank_range"] == [1, 1]  # the fragile separation still counts
    C.print_comparison(doc)  # the terminal: a column, and each differs says what it rests on
    out = capsys.readouterr().out
    assert "fragile_separations" in out and "rests on 1 of 26 units" in out


def test_the_leaderboard_site_says_what_a_differs_rests_on(tmp_path):
    run("leaderboard", _six_tasks(tmp_path), "--output-dir", tmp_path / "site")
    doc = orjson.loads((tmp_path / "site" / "leaderboard.json").read_bytes())
    board = next(m for m in doc["metrics"] if m["name"] == "track_means.theorem")
    (pair,) = board["adjacent_pairs"]
    assert pair["verdict"] == "differs" and pair["fragility"]["units_to_change"] == 1
    assert pair["fragility"]["fragile"] is True
    page = (tmp_path / "site" / pair["page"]).read_text()
    assert "rests on 1 of 6 units" in page and "FRAGILE" in page
    rows = {r["label"]: r for r in board["rows"]}
    assert rows["i.json:a"]["fragile_separations"] == ["i.json:b"]
    assert rows["i.json:b"]["fragile_separations"] == ["i.json:a"]
