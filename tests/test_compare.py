"""``benchscore compare A.json B.json [C.json ...]`` (issues 16 and 29).

Items are paired (rxn: question, mira: case, tcsexam: task weighted as the index weighs it, or
instance); per metric a, b, a - b, one verdict and, from the same test, its interval, p-value, the
smallest attainable p-value and the minimum detectable effect; McNemar for one 0/1 outcome per unit;
three or more results: Holm-adjusted verdicts with intervals at the matching level, rank intervals
and letters; the items that differ most; outputs of different contracts or items are refused in one
line (exit 2) unless ``--intersection``. The audit's cases (5 tasks a track, three rxn evaluations)
are tests here: the interval never contradicts the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import orjson
import pytest
from click.testing import CliRunner
from scipy import stats

from benchscore.cli import cli
from benchscore.common.terminal import fmt
from benchscore.stats import paired as P

ENV = {"SOURCE_DATE_EPOCH": "1767225600"}
REPO = Path(__file__).resolve().parents[1]
MIRA = REPO / "examples" / "mira"


def run(*args, expect=0):
    result = CliRunner().invoke(cli, [str(a) for a in args], env=ENV)
    assert result.exit_code == expect, (result.output, result.stderr_bytes)
    return result


@pytest.fixture(scope="module")
def rxn(tmp_path_factory):
    """Three evaluations of the deoxyfluorination MC questions: seeded random, best, and worst answers."""
    root = tmp_path_factory.mktemp("cmp-rxn")
    run("rxn", "build-mc", "--bundled", "deoxyfluorination", "--output-dir", root)
    folder = next(root.glob("*_multiple_choice"))
    types = ("all_varying", "single_varying")
    data = {q: json.loads((folder / f"multiple_choice_{q}.json").read_text())["samples"] for q in types}
    preds = {"random": {}, "best": {}, "worst": {}}
    for q in types:
        preds["random"].update(json.loads((folder / f"example_prediction_{q}.json").read_text()))
        for s in data[q]:
            rel = s["meta"]["option_relative_scores"]
            preds["best"][s["id"]] = s["answer"][0]
            preds["worst"][s["id"]] = int(np.argmin(rel))
    outs = {}
    for name, p in preds.items():
        (root / f"{name}.pred.json").write_text(json.dumps(p))
        outs[name] = root / f"{name}.json"
        run("rxn", "eval-mc", *(a for q in types for a in ("--dataset", folder / f"multiple_choice_{q}.json")),
            "--prediction", root / f"{name}.pred.json", "--output", outs[name])
    for name, p in preds.items():
        av = {k: v for k, v in p.items() if k.startswith("all_varying:")}
        (root / f"{name}.av.pred.json").write_text(json.dumps(av))
        run("rxn", "eval-mc", "--dataset", folder / "multiple_choice_all_varying.json", "--prediction",
            root / f"{name}.av.pred.json", "--output", root / f"{name}_all_varying.json")
    return {"root": root, "folder": folder, "outs": outs, "data": data}


def _load(p: Path) -> dict:
    return orjson.loads(p.read_bytes())


def test_two_rxn_evaluations_are_compared_question_by_question(rxn, tmp_path):
    a, b = rxn["outs"]["best"], rxn["outs"]["random"]
    r = run("compare", a, b, "--output", tmp_path / "cmp.json")
    doc = _load(tmp_path / "cmp.json")
    assert doc["format"] == "benchscore-compare" and doc["results"] == [a.name, b.name]  # short labels
    (c,) = doc["comparisons"]
    rows = {m["name"]: m for m in c["metrics"]}
    assert list(rows) == ["avg_relative_score", "exact_match_accuracy"]
    da, db = _load(a), _load(b)
    n_items = sum(len(v) for v in da["per_sample"].values())
    tables = {x["table_id"] for v in da["per_sample"].values() for x in v}
    for name, m in rows.items():
        assert m["a"] == da["overall"][name] and m["b"] == db["overall"][name]  # the outputs' own numbers
        assert m["difference"] == m["a"] - m["b"]
        assert m["n_items"] == n_items and m["n_units"] == len(tables) < n_items  # clustered by condition table
        assert m["ci95"][0] <= m["difference"] <= m["ci95"][1] and m["ci_method"] == "sign_flip_inversion"
        assert m["minimum_detectable_effect"] > 0 and 0 <= m["p_value"] <= 1 and m["ci_level"] == 0.95
        assert (m["ci95"][0] > 0 or m["ci95"][1] < 0) == (m["verdict"] == "differs") == (m["p_value"] < 0.05)
        assert -1.0 <= m["ci95"][0] and m["ci95"][1] <= 1.0
        # tables give several questions: exact match is not McNemar (its items are not independent)
        assert m["test"] == "sign_flip_permutation_monte_carlo"
    # the items that differ most, with both values, largest difference first
    by_id = {x["id"]: x for v in da["per_sample"].values() for x in v}
    other = {x["id"]: x for v in db["per_sample"].values() for x in v}
    worst = rows["avg_relative_score"]["items_that_differ_most"]
    assert len(worst) == 10
    for row in worst:
        assert row["a"] == by_id[row["item"]]["relative_score"] and row["b"] == other[row["item"]]["relative_score"]
        assert row["unit"] == by_id[row["item"]]["table_id"]
    diffs = [abs(row["difference"]) for row in worst]
    assert diffs == sorted(diffs, reverse=True)
    assert diffs[0] == max(abs(by_id[i]["relative_score"] - other[i]["relative_score"]) for i in by_id)
    # the answer first, every number in the terminal
    assert r.output.splitlines()[0].startswith("compare rxn eval (multiple_choice): 2 results")
    for m in rows.values():
        for key in ("a", "b", "difference", "p_value", "minimum_detectable_effect", "smallest_attainable_p"):
            assert fmt(m[key]) in r.output, key  # rounded for reading (4 significant digits)
        assert f"{m['name']}: {'differs' if m['verdict'] == 'differs' else 'not separated'} (" in r.output
    assert doc["provenance"]["seed"] == 16 and doc["provenance"]["resamples"] == 10_000
    # reproducible: the same command writes the same bytes
    run("compare", a, b, "--output", tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == (tmp_path / "cmp.json").read_bytes()


def test_one_question_per_table_uses_mcnemar(rxn, tmp_path):
    root = rxn["root"]
    run("compare", root / "best_all_varying.json", root / "random_all_varying.json", "--output", tmp_path / "c.json")
    m = {x["name"]: x for x in _load(tmp_path / "c.json")["comparisons"][0]["metrics"]}["exact_match_accuracy"]
    a = [x["exact_match"] for x in _load(root / "best_all_varying.json")["per_sample"]["all_varying"]]
    b = [x["exact_match"] for x in _load(root / "random_all_varying.json")["per_sample"]["all_varying"]]
    n10 = sum(x and not y for x, y in zip(a, b, strict=True))
    n01 = sum(y and not x for x, y in zip(a, b, strict=True))
    assert m["test"] == "mcnemar_exact" and m["n_units"] == m["n_items"] == len(a)
    assert m["p_value"] == pytest.approx(stats.binomtest(n10, n10 + n01, 0.5).pvalue)


def test_three_results_are_holm_corrected_with_rank_intervals_and_letters(rxn, tmp_path):
    outs = rxn["outs"]
    run("compare", outs["random"], outs["best"], outs["worst"], "--output", tmp_path / "cmp.json")
    doc = _load(tmp_path / "cmp.json")
    assert [(c["a"], c["b"]) for c in doc["comparisons"]] == [
        (outs["random"].name, outs["best"].name), (outs["random"].name, outs["worst"].name),
        (outs["best"].name, outs["worst"].name)]
    rows = [{m["name"]: m for m in c["metrics"]}["avg_relative_score"] for c in doc["comparisons"]]
    assert [r["p_holm"] for r in rows] == pytest.approx(P.holm([r["p_value"] for r in rows]))
    board = doc["leaderboards"]["avg_relative_score"]
    assert [r["label"] for r in board] == [outs["best"].name, outs["random"].name, outs["worst"].name]
    # with dozens of tables best, random and worst answers are far apart: three letters, exact ranks
    assert [r["groups"] for r in board] == [["a"], ["b"], ["c"]] and [r["rank_range"] for r in board] == [[1, 1], [2, 2], [3, 3]]
    assert all(r["indistinguishable_from"] == [] and r["equal_to"] == [] for r in board)
    assert "rank" not in board[0] and "group" not in board[0]  # no bare 1..N rank
    for c in doc["comparisons"]:  # the interval is at the level that matches Holm's verdict
        for m in c["metrics"]:
            assert m["ci_level"] >= 0.95 and (m["verdict"] == "differs") == (m["p_holm"] < 0.05)
            if m["ci95"] is None:  # best is right on every question, worst on none: no spread to estimate
                assert "differs by exactly the same amount" in m["ci_reason"] and m["name"] == "exact_match_accuracy"
                continue
            assert (m["ci95"][0] > 0 or m["ci95"][1] < 0) == (m["verdict"] == "differs")
    own = _load(outs["best"])["intervals"]["overall"]["avg_relative_score"]["ci95"]
    assert board[0]["ci95"] == own  # each result's own interval beside its value


def test_a_refusal_is_one_line_naming_what_differs(rxn, tmp_path):
    outs, root = rxn["outs"], rxn["root"]
    res = CliRunner().invoke(cli, ["compare", str(outs["best"]), str(MIRA / "expected" / "score.json")], env=ENV)
    assert res.exit_code == 2
    assert res.output.count("\n") == 1 and "is a rxn eval (multiple_choice) output" in res.output
    assert "a mira score output: compare needs outputs of one contract" in res.output
    # other questions: one line that names the counts and the way out
    res = CliRunner().invoke(cli, ["compare", str(root / "best_all_varying.json"), str(outs["random"])], env=ENV)
    assert res.exit_code == 2 and res.output.count("\n") == 1
    assert "are not on the same items for avg_relative_score" in res.output and "--intersection" in res.output
    # not an output compare knows; a single result
    res = CliRunner().invoke(cli, ["compare", str(MIRA / "contract.json"), str(outs["best"])], env=ENV)
    assert res.exit_code == 2 and "not an output benchscore compare knows" in res.output
    res = CliRunner().invoke(cli, ["compare", str(outs["best"])], env=ENV)
    assert res.exit_code == 2 and "at least two results" in res.output
    # an edited number: the items no longer give it
    doc = _load(outs["random"])
    doc["overall"]["avg_relative_score"] += 0.01
    (tmp_path / "edited.json").write_bytes(orjson.dumps(doc))
    res = CliRunner().invoke(cli, ["compare", str(outs["best"]), str(tmp_path / "edited.json")], env=ENV)
    assert res.exit_code == 2 and "the file was changed after it was written" in res.output


def test_intersection_compares_the_common_items_and_lists_what_it_dropped(rxn, tmp_path):
    outs, root = rxn["outs"], rxn["root"]
    run("compare", root / "best_all_varying.json", outs["random"], "--intersection", "--output", tmp_path / "c.json")
    doc = _load(tmp_path / "c.json")
    single = [s["id"] for s in rxn["data"]["single_varying"]]
    info = doc["intersection"]["avg_relative_score"]
    assert info == {"items": len(rxn["data"]["all_varying"]), "dropped": {outs["random"].name: single}}
    m = {x["name"]: x for x in doc["comparisons"][0]["metrics"]}["avg_relative_score"]
    assert m["a"] == _load(root / "best_all_varying.json")["overall"]["avg_relative_score"]
    random_av = [x["relative_score"] for x in _load(outs["random"])["per_sample"]["all_varying"]]
    assert m["b"] == pytest.approx(sum(random_av) / len(random_av))


def test_questions_of_another_build_are_refused(rxn, tmp_path):
    run("rxn", "build-mc", "--bundled", "deoxyfluorination", "--seed", "5", "--output-dir", tmp_path)
    folder = next(tmp_path.glob("*_multiple_choice"))
    ids = [s["id"] for s in json.loads((folder / "multiple_choice_all_varying.json").read_text())["samples"]]
    (tmp_path / "p.json").write_text(json.dumps(dict.fromkeys(ids, 0)))
    run("rxn", "eval-mc", "--dataset", folder / "multiple_choice_all_varying.json", "--prediction", tmp_path / "p.json",
        "--output", tmp_path / "other.json")
    res = CliRunner().invoke(cli, ["compare", str(rxn["root"] / "best_all_varying.json"), str(tmp_path / "other.json")],
                             env=ENV)
    assert res.exit_code == 2 and "comes from dataset sha256" in res.output and res.output.count("\n") == 1


def _mira_score(tmp_path: Path, name: str, change=None) -> Path:
    rows = [json.loads(line) for line in (MIRA / "repetitions.jsonl").read_text().splitlines()]
    if change:
        change(rows)
    reps = tmp_path / f"{name}.jsonl"
    reps.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / f"{name}.json"
    run("mira", "score", "--contract", MIRA / "contract.json", "--repetitions", reps, "--output", out, "--quiet")
    return out


def test_mira_scores_are_compared_case_by_case(tmp_path):
    def fail_adv03(rows):
        for r in rows:
            if r["case_id"] == "ADV-03" and r["repetition"] in (1, 2):
                r["deterministic_results"] = {"correct-answer": False}

    a, b = _mira_score(tmp_path, "a"), _mira_score(tmp_path, "b", fail_adv03)
    run("compare", a, b, "--output", tmp_path / "c.json")
    rows = {m["name"]: m for m in _load(tmp_path / "c.json")["comparisons"][0]["metrics"]}
    assert list(rows) == ["task_success", "reliability", "pass_at_1", "stable_at_3", "complete_at_3"]
    sa, sb = _load(a), _load(b)
    for name, m in rows.items():
        assert (m["a"], m["b"]) == (sa["overall"][name]["value"], sb["overall"][name]["value"])
        assert m["n_items"] == m["n_units"] == 3  # the automated_scored cases, each with its repetitions
    assert rows["pass_at_1"]["test"] == "mcnemar_exact"
    assert rows["pass_at_1"]["p_value"] == pytest.approx(stats.binomtest(1, 1, 0.5).pvalue)
    assert rows["task_success"]["test"] == "sign_flip_permutation_exact"
    assert [x["item"] for x in rows["task_success"]["items_that_differ_most"]] == ["ADV-03"]
    # 3 cases of which one differs: half of the 8 sign patterns are as extreme, two-sided p = 1
    assert rows["task_success"]["p_value"] == 1.0


def test_an_incomplete_score_is_compared_only_on_common_cases(tmp_path):
    a = _mira_score(tmp_path, "a")
    inc = tmp_path / "inc.json"
    run("mira", "score", "--contract", MIRA / "contract.json", "--repetitions", MIRA / "repetitions_incomplete.jsonl",
        "--output", inc, "--quiet", expect=1)  # incomplete: exit 1, written
    res = CliRunner().invoke(cli, ["compare", str(a), str(inc)], env=ENV)
    assert res.exit_code == 2 and "nothing to compare" in res.output and "--intersection" in res.output
    run("compare", a, inc, "--intersection", "--output", tmp_path / "c.json")
    doc = _load(tmp_path / "c.json")
    assert doc["intersection"]["task_success"]["dropped"] == {a.name: ["ADV-03"]}
    assert {m["n_items"] for m in doc["comparisons"][0]["metrics"]} == {2}


def test_tcsexam_models_are_compared_task_by_task(tmp_path, pinned_time):
    from benchscore.tcsexam.commands import run_demo

    out = tmp_path / "demo"
    run_demo(out)
    r = run("compare", out / "index.json", "--output", tmp_path / "c.json")
    doc = _load(tmp_path / "c.json")
    assert doc["results"] == ["index.json:synthetic-model-a", "index.json:synthetic-model-b"]
    assert doc["not_compared"]["index"].startswith("null in index.json:synthetic-model-b")
    rows = {m["name"]: m for m in doc["comparisons"][0]["metrics"]}
    index = _load(out / "index.json")["models"]
    assert rows["track_means.solver"]["a"] == index["synthetic-model-a"]["track_means"]["solver"]
    assert "not compared: index" in r.output
    # the solver track: 5 tasks all better for a: 2 of 32 sign patterns as extreme, and 2/32 is the
    # smallest p-value 5 tasks allow: it cannot be separated, whatever the data, and the output says so
    solver = rows["track_means.solver"]
    assert solver["p_value"] == pytest.approx(2 / 32) == solver["smallest_attainable_p"]
    assert solver["verdict"] == "cannot_separate_at_this_n" and "0.0625" in solver["verdict_reason"]
    assert solver["minimum_detectable_effect"] is None and solver["ci95"] == [-1.0, 1.0]
    assert "cannot separate at this n" in r.output
    # two Solver attempts of one task, instance by instance; another task is refused
    s = out / "solver-scores" / "synthetic-model-a"
    run("compare", s / "demo-tsp" / "attempt-1.json", s / "demo-tsp" / "attempt-2.json", "--output", tmp_path / "s.json")
    (m,) = _load(tmp_path / "s.json")["comparisons"][0]["metrics"]
    assert m["name"] == "relative_score" and m["n_items"] == _load(s / "demo-tsp" / "attempt-1.json")["scored_instance_count"]
    res = CliRunner().invoke(cli, ["compare", str(s / "demo-tsp" / "attempt-1.json"), str(s / "demo-sat" / "attempt-1.json")])
    assert res.exit_code == 2 and "differ in task: demo-tsp vs demo-sat" in res.output


def test_the_index_difference_weighs_tasks_as_the_index_does(tmp_path):
    """Tasks are weighted 30/k per track (10/k for conjectures): the difference of two indexes is
    the weighted sum of their tasks' differences, and the sign flips act on whole tasks."""
    tracks = {"theorem": ["t1", "t2", "t3"], "solver": ["s1", "s2"], "construction": ["c1", "c2"],
              "conjecture": ["o1", "o2"]}
    (tmp_path / "suite.json").write_text(json.dumps({"suite": "mini", "tracks": tracks}))
    (tmp_path / "cohort.json").write_text(json.dumps({
        "suite": "mini", "solver_protocol": "offline", "solver_reference_id": "k3", "adoption_rule": "first",
        "models": {"a": {"attempts_per_task": 1}, "b": {"attempts_per_task": 1}}}))
    lines = ["model,track,item,attempt,score,adoption_status,score_status,score_type,solver_protocol"]
    scores = {"t1": 1, "t2": 0, "t3": 1, "s1": 0.5, "s2": 0.25, "c1": 1.5, "c2": 0.5, "o1": 0, "o2": 1}
    for model in ("a", "b"):
        for track, items in tracks.items():
            for item in items:
                score = 0 if (model, item) == ("b", "t1") else scores[item]
                kind = "fixed_reference_relative,offline" if track == "solver" else "original_task_score,"
                lines.append(f"{model},{track},{item},1,{score},selected,valid,{kind}")
    (tmp_path / "attempts.csv").write_text("\n".join(lines) + "\n")
    run("tcsexam", "score", "--suite", tmp_path / "suite.json", "--attempts", tmp_path / "attempts.csv", "--cohort",
        tmp_path / "cohort.json", "--output", tmp_path / "i.json")
    run("compare", tmp_path / "i.json", "--output", tmp_path / "c.json")
    m = {x["name"]: x for x in _load(tmp_path / "c.json")["comparisons"][0]["metrics"]}["index"]
    assert m["difference"] == pytest.approx(30 / 3 * 1.0)
    assert m["items_that_differ_most"] == [{"item": "theorem/t1", "a": 1.0, "b": 0.0, "difference": 1.0}]
    assert m["n_items"] == m["n_units"] == 9 and m["test"] == "sign_flip_permutation_exact"


def _lite(tmp_path: Path, a: dict, b: dict) -> Path:
    """Two models in one Lite-shaped ``tcsexam score`` output: 5 tasks a track, one attempt."""
    tracks = {t: [f"{t[:4]}{i}" for i in range(5)] for t in ("theorem", "solver", "construction", "conjecture")}
    (tmp_path / "suite.json").write_text(json.dumps({"suite": "lite", "tracks": tracks}))
    (tmp_path / "cohort.json").write_text(json.dumps({
        "suite": "lite", "solver_protocol": "offline", "solver_reference_id": "k3", "adoption_rule": "first",
        "models": {"a": {"attempts_per_task": 1}, "b": {"attempts_per_task": 1}}}))
    lines = ["model,track,item,attempt,score,adoption_status,score_status,score_type,solver_protocol"]
    for model, scores in (("a", a), ("b", b)):
        for track, items in tracks.items():
            for i, item in enumerate(items):
                kind = "fixed_reference_relative,offline" if track == "solver" else "original_task_score,"
                lines.append(f"{model},{track},{item},1,{scores[track](i)},selected,valid,{kind}")
    (tmp_path / "attempts.csv").write_text("\n".join(lines) + "\n")
    run("tcsexam", "score", "--suite", tmp_path / "suite.json", "--attempts", tmp_path / "attempts.csv", "--cohort",
        tmp_path / "cohort.json", "--output", tmp_path / "i.json")
    return tmp_path / "i.json"


def test_five_tasks_a_track_cannot_be_separated_and_nothing_says_otherwise(tmp_path):
    """The audit: theorem 1 vs 0 on every task printed ci95 [1, 1] beside p 0.0625 and an MDE of 0;
    solver +0.4 on every task [0.4, 0.4]; conjecture [0.45, 1.15], beyond what 0/1 scores allow."""
    out = _lite(tmp_path, {"theorem": lambda i: 1, "solver": lambda i: 0.6, "construction": lambda i: 1.0 + 0.1 * i,
                           "conjecture": lambda i: 1},
                {"theorem": lambda i: 0, "solver": lambda i: 0.2 + 0.03 * i, "construction": lambda i: 0.5 + 0.05 * i,
                 "conjecture": lambda i: 0})
    r = run("compare", out, "--output", tmp_path / "c.json")
    rows = {m["name"]: m for m in _load(tmp_path / "c.json")["comparisons"][0]["metrics"]}
    for name in ("track_means.theorem", "track_means.solver", "track_means.conjecture", "track_means.construction"):
        m = rows[name]
        assert m["verdict"] == "cannot_separate_at_this_n" and m["p_value"] == 0.0625, name
        assert m["minimum_detectable_effect"] is None and "0.0625" in m["mde_reason"]
        if m["ci95"] is not None:
            assert m["ci95"][0] <= 0 <= m["ci95"][1] and m["ci95"][0] >= -1 and m["ci95"][1] <= 1, (name, m["ci95"])
            assert m["ci95"][1] > m["ci95"][0]
        else:
            assert m["ci_reason"]
    theorem = rows["track_means.theorem"]  # 1 against 0 on every task: not [1, 1]
    assert theorem["test"] == "mcnemar_exact" and theorem["ci95"][0] < 0 < theorem["ci95"][1] == 1.0
    assert "cannot separate at this n (with 5 units the smallest attainable p-value is 0.0625" in r.output
    # the index pools 20 tasks, but its own interval is null (construction needs 20 tasks): compare obeys
    # that floor (issue 38 point 4: tests/test_compare_floors.py)
    index = rows["index"]
    assert index["verdict"] == "cannot_separate_at_this_n" and index["ci95"] is None
    assert index["minimum_detectable_effect"] is None and "construction" in index["verdict_reason"]


def test_three_rxn_evaluations_count_only_what_the_tests_separate(rxn, tmp_path):
    """The audit: good vs a tweak of it (answers changed) had an interval excluding 0 beside p 0.128,
    and the page counted it among the supported differences."""
    from benchscore.common.html import Output
    from benchscore.publish.compare_figures import summary_rows, verdict_counts

    root, folder, data = rxn["root"], rxn["folder"], rxn["data"]
    best = json.loads((root / "best.pred.json").read_text())
    tweak = dict(best)
    for s in data["all_varying"][:3]:  # 3 answers changed: at most 2/8 of the sign patterns are as extreme
        rel = s["meta"]["option_relative_scores"]
        tweak[s["id"]] = int(np.argmin(rel))
    (tmp_path / "tweak.pred.json").write_text(json.dumps(tweak))
    types = ("all_varying", "single_varying")
    run("rxn", "eval-mc", *(a for q in types for a in ("--dataset", folder / f"multiple_choice_{q}.json")),
        "--prediction", tmp_path / "tweak.pred.json", "--output", tmp_path / "tweak.json")
    run("compare", rxn["outs"]["best"], rxn["outs"]["random"], tmp_path / "tweak.json", "--output", tmp_path / "c.json")
    doc = _load(tmp_path / "c.json")
    differs = 0
    for c in doc["comparisons"]:
        for m in c["metrics"]:
            assert (m["ci95"][0] > 0 or m["ci95"][1] < 0) == (m["verdict"] == "differs") == (m["p_holm"] < 0.05)
            differs += m["verdict"] == "differs"
    counts = verdict_counts(doc)
    assert counts["differs"] == differs
    row = summary_rows(Output(path=tmp_path / "c.json", label="c.json", sha256="0" * 64, doc=doc, kind="compare"))[0]
    assert row.headline[0].value == f"{differs} of {sum(counts.values())}"
    tweak_pair = next(c for c in doc["comparisons"] if c["b"] == "tweak.json" and c["a"] == rxn["outs"]["best"].name)
    m = {x["name"]: x for x in tweak_pair["metrics"]}["exact_match_accuracy"]
    assert m["verdict"] != "differs" and m["ci95"][0] <= 0 <= m["ci95"][1]
