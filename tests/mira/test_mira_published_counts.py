"""Issue 9 item 10: the published counts reproduce every published metric, in the score and in the projection.

A case uses its first ``planned_repetitions`` valid comparable repetitions; the ones beyond the plan
are published apart (``beyond_planned_count``), so ``valid_comparable_repetition_count`` (the seed's
denominator) and ``on_time_pass_count`` give back Reliability exactly, and the other metrics follow
from the published counts and per-repetition values.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import orjson
import pytest
from mira_helpers import DATA, run, write_json, write_jsonl

CONTRACT = {"benchmark_id": "v", "contract_version": "1", "cases": [
    {"case_id": "E", "intent": "i", "difficulty": "d", "prompt": "p", "scoring_class": "automated_scored",
     "criteria": [{"id": "c", "weight": 1, "scorer": "deterministic"}], "t_soft_s": 10},
    {"case_id": "U", "intent": "i", "difficulty": "d", "prompt": "p", "scoring_class": "diagnostic_untimed",
     "planned_repetitions": 2, "criteria": [{"id": "c", "weight": 1, "scorer": "deterministic"}]},
]}


def _rep(case: str, n: int, ok: bool = True, elapsed: float = 2, **extra: Any) -> dict[str, Any]:
    return {"case_id": case, "repetition": n, "execution_mode": "adapted", "terminal_state": "completed",
            "elapsed_s": elapsed, "deterministic_results": {"c": ok}, **extra}


REPS = [
    _rep("E", 1), _rep("E", 2), _rep("E", 3),
    _rep("E", 4, ok=False, elapsed=50),  # valid comparable, beyond the plan: Reliability must stay 100
    _rep("U", 1), _rep("U", 2, interventions=[{"kind": "task_solving_help"}]), _rep("U", 3, ok=False),
]


def _score_and_project(tmp_path: Path, contract: Path, reps: Path) -> tuple[dict, dict]:
    res = run("score", "--contract", contract, "--repetitions", reps, "--output", tmp_path / "s.json", "--quiet")
    score = orjson.loads((tmp_path / "s.json").read_bytes())
    final = 0 if score["status"] == "complete" else 1  # exit 1: incomplete, still written
    assert res.exit_code == final, res.output
    res = run("project", "--score", tmp_path / "s.json", "--output", tmp_path / "p.json", "--quiet")
    assert res.exit_code == final, res.output
    return score, orjson.loads((tmp_path / "p.json").read_bytes())


def _check_case(case: dict[str, Any], values: dict[str, Any], used: list[dict[str, Any]], valid: int) -> None:
    """Every metric of a formal case from its published counts and its used repetitions' published values."""
    n = case["valid_comparable_repetition_count"]
    assert n == len(used) == case["planned_repetitions"]
    assert case["beyond_planned_count"] == valid - n
    statuses = [r["status"] for r in used]
    help_count = sum(r["needed_task_solving_help"] for r in used)
    assert values["autonomy"] == (n - help_count) / n
    if case["scoring_class"] == "diagnostic_untimed":
        assert values["pass_count"] == statuses.count("pass")
        assert values["untimed_task_success"] == math.fsum(r["untimed_task_success"] for r in used) / n
        return
    on_time = values["on_time_pass_count"]
    late = values["late_completion_count"]
    assert on_time == statuses.count("pass") and late == statuses.count("late_complete")
    assert values["reliability"] == on_time / n * 100
    assert values["pass_at_1"] == (statuses[0] == "pass")
    assert values["stable_at_3"] == ((on_time == 3) if n == 3 else None)
    assert values["complete_at_3"] == ((on_time + late == 3) if n == 3 else None)
    assert values["task_success"] == math.fsum(r["official_task_success"] for r in used) / n


def _check_overall(overall: dict[str, Any], cases: list[dict[str, Any]], values_of, used_of, timed: bool) -> None:
    mine = [c for c in cases if (c["scoring_class"] == "automated_scored") == timed]
    used = [r for c in mine for r in used_of(c)]
    n = overall["valid_comparable_repetition_count"]
    assert n == sum(c["valid_comparable_repetition_count"] for c in mine) == len(used)
    assert overall["beyond_planned_count"] == sum(c["beyond_planned_count"] for c in mine)
    assert overall["case_count"] == len(mine)
    help_count = sum(r["needed_task_solving_help"] for r in used)
    assert overall["autonomy"] == (n - help_count) / n
    for name in ("hard_fail_count", "governance_serious_count", "governance_minor_count") + (
            ("on_time_pass_count", "late_completion_count") if timed else ("pass_count",)):
        assert overall[name] == sum(values_of(c)[name] for c in mine), name
    if timed:
        assert overall["reliability"] == overall["on_time_pass_count"] / n * 100
        for name in ("pass_at_1", "stable_at_3", "complete_at_3"):
            flags = [values_of(c)[name] for c in mine]
            assert overall[name] == (None if None in flags else sum(flags) / len(flags) * 100), name


def _check_score(score: dict[str, Any]) -> None:
    reps = {r["id"]: r for r in score["repetitions"]}
    for case in score["cases"]:
        mine = [r for r in score["repetitions"] if r["case_id"] == case["case_id"]]
        valid = sum(r["comparability"] == "valid_comparable" for r in mine)
        values = {k: m["value"] for k, m in case["metrics"].items()}
        _check_case(case, values, [reps[i] for i in case["repetitions_used"]], valid)
        assert list(case["repetitions_excluded"].values()).count("beyond_planned") == case["beyond_planned_count"]
    for timed, section in ((True, "overall"), (False, "diagnostic_untimed")):
        _check_overall({k: m["value"] for k, m in score[section].items()}, score["cases"],
                       lambda c: {k: m["value"] for k, m in c["metrics"].items()},
                       lambda c: [reps[i] for i in c["repetitions_used"]], timed)


def _check_public(public: dict[str, Any]) -> None:
    for case in public["cases"]:
        used = [r for r in case["repetitions"] if r["used"]]
        valid = sum(r["comparability"] == "valid_comparable" for r in case["repetitions"])
        _check_case(case, case["results"], used, valid)
        # the used repetitions are the first N valid comparable ones by repetition index
        firsts = [r for r in case["repetitions"] if r["comparability"] == "valid_comparable"][:len(used)]
        assert used == firsts
    for timed, section in ((True, "overall"), (False, "diagnostic_untimed")):
        _check_overall(public[section], public["cases"], lambda c: c["results"],
                       lambda c: [r for r in c["repetitions"] if r["used"]], timed)


def test_beyond_planned_repetitions_are_published_apart(tmp_path: Path) -> None:
    c = write_json(tmp_path / "c.json", CONTRACT)
    r = write_jsonl(tmp_path / "r.jsonl", REPS)
    score, public = _score_and_project(tmp_path, c, r)
    e = score["cases"][0]
    assert (e["valid_comparable_repetition_count"], e["beyond_planned_count"]) == (3, 1)
    assert e["metrics"]["reliability"]["value"] == 100.0 and e["metrics"]["on_time_pass_count"]["value"] == 3
    pe = public["cases"][0]
    assert (pe["valid_comparable_repetition_count"], pe["beyond_planned_count"]) == (3, 1)
    assert [x["used"] for x in pe["repetitions"]] == [True, True, True, False]
    assert "valid_comparable_count" not in orjson.dumps(score).decode()
    _check_score(score)
    _check_public(public)


@pytest.mark.parametrize("reps", ["repetitions.jsonl", "repetitions_incomplete.jsonl"])
def test_demo_counts_reproduce_every_metric(tmp_path: Path, reps: str) -> None:
    score, public = _score_and_project(tmp_path, DATA / "contract.json", DATA / reps)
    adv1 = next(c for c in score["cases"] if c["case_id"] == "ADV-01")
    assert (adv1["valid_comparable_repetition_count"], adv1["beyond_planned_count"]) == (3, 1)
    if score["status"] == "complete":
        _check_score(score)
        _check_public(public)
    else:  # an incomplete case publishes its counts toward the plan and no metric
        for case in score["cases"]:
            if case["status"] == "incomplete":
                assert case["valid_comparable_repetition_count"] < case["planned_repetitions"]
                assert all(m["value"] is None for m in case["metrics"].values())
        miss = score["missing"][0]
        assert miss["valid_comparable_repetition_count"] == 2 and miss["planned_repetitions"] == 3
