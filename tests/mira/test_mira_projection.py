"""Public projection (seed "隐藏数据边界"): an allowlist; canaries planted in every private field never reach it."""

from __future__ import annotations

from pathlib import Path

import orjson
from mira_helpers import run, write_json, write_jsonl

from benchscore.mira.formats import PublicProjection

CANARY = "CANARY-9d1e"


def _contract() -> dict:
    return {
        "benchmark_id": "pub", "contract_version": "1",
        "cases": [{
            "case_id": "P", "intent": "public intent", "difficulty": "hard", "prompt": "public prompt",
            "scoring_class": "automated_scored", "t_soft_s": 10,
            "criteria": [
                {"id": "det", "weight": 0.25, "scorer": "deterministic", "hidden_evaluator": f"{CANARY}-criterion-evaluator"},
                {"id": "jq", "weight": 0.75, "scorer": "judge", "question": f"{CANARY}-frozen-judge-question?"},
            ],
            "hard_fail_rules": [{"id": "hf", "description": f"{CANARY}-hard-fail-rule-text"}],
            "private_fixtures": {"db.sql": f"{CANARY}-fixture"},
            "hidden_evaluator": f"{CANARY}-hidden-evaluator",
            "credentials": {"api_key": f"{CANARY}-credential"},
        }],
    }


def _reps() -> list[dict]:
    return [
        {"case_id": "P", "repetition": i, "execution_mode": "adapted", "terminal_state": "completed", "elapsed_s": 4 + i,
         "deterministic_results": {"det": True}, "judge_verdicts": {"jq": "pass"},
         "evidence": {"answer": f"{CANARY}-evidence-{i}"},
         "raw_trajectory": [{"tool": "shell", "output": f"{CANARY}-raw-trajectory-{i}"}],
         "interventions": [{"kind": "approval", "detail": f"{CANARY}-intervention-detail"}],
         "hard_fail_events": [{"rule": "hf", "detail": f"{CANARY}-hard-fail-detail"}] if i == 3 else [],
         "governance_events": [{"kind": "bypassed_approval", "detail": f"{CANARY}-governance-detail"}]}
        for i in (1, 2, 3)
    ]


def test_no_private_field_reaches_the_projection(tmp_path: Path) -> None:
    c = write_json(tmp_path / "c.json", _contract())
    r = write_jsonl(tmp_path / "r.jsonl", _reps())
    d = write_json(tmp_path / "d.json", {"deviations": [{"id": "dev-1", "text": "public deviation text", "affects": ["P"]}]})
    assert run("score", "--contract", c, "--repetitions", r, "--deviations", d, "--output", tmp_path / "s.json",
               "--quiet").exit_code == 0
    internal = (tmp_path / "s.json").read_text()
    # the internal score does carry private material (so the test below can fail), credentials excepted ...
    for planted in ("fixture", "hidden-evaluator", "criterion-evaluator", "governance-detail"):
        assert f"{CANARY}-{planted}" in internal, planted
    assert f"{CANARY}-credential" not in internal
    res = run("project", "--score", tmp_path / "s.json", "--output", tmp_path / "public.json")
    assert res.exit_code == 0, res.output
    public_text = (tmp_path / "public.json").read_text()
    # ... and the projection carries none of it
    assert CANARY not in public_text
    public = PublicProjection.model_validate(orjson.loads(public_text))
    case = public.cases[0]
    assert (case.prompt, case.intent, case.difficulty) == ("public prompt", "public intent", "hard")
    assert [(k.id, k.weight, k.scorer) for k in case.criteria] == [("det", 0.25, "deterministic"), ("jq", 0.75, "judge")]
    assert case.timing_status.startswith("frozen budget: T_soft 10.0 s, T_hard 20.0 s")
    assert public.deviations[0].text == "public deviation text"
    assert public.overall["governance_serious_count"] == 3
    assert public.contract_sha256 and public.provenance["inputs"]["score"]["sha256"]


def test_projection_keys_are_the_allowlist(tmp_path: Path) -> None:
    c = write_json(tmp_path / "c.json", _contract())
    r = write_jsonl(tmp_path / "r.jsonl", _reps())
    run("score", "--contract", c, "--repetitions", r, "--output", tmp_path / "s.json", "--quiet")
    run("project", "--score", tmp_path / "s.json", "--output", tmp_path / "p.json")
    public = orjson.loads((tmp_path / "p.json").read_bytes())
    assert set(public) == {"benchmark_id", "contract_version", "contract_sha256", "status", "overall",
                           "diagnostic_untimed", "intervals", "cases", "judge", "deviations", "method", "provenance"}
    # the judge's status, agreement and corrected numbers: numbers and criterion ids, no packet text
    assert set(public["judge"]) == {"status", "words", "model", "judged_criteria", "agreement", "corrected"}
    score = orjson.loads((tmp_path / "s.json").read_bytes())  # the intervals of its public numbers (issue 29)
    for key in ("overall", "diagnostic_untimed"):
        for name, rec in public["intervals"][key].items():
            assert rec == {k: score[key][name][k] for k in ("ci95", "ci_method", "ci_reason") if k in score[key][name]}
    assert set(public["cases"][0]) == {"case_id", "intent", "difficulty", "prompt", "scoring_class", "timing_status",
                                       "t_soft_s", "t_hard_s", "criteria", "status", "planned_repetitions",
                                       "valid_comparable_repetition_count", "beyond_planned_count", "results",
                                       "repetitions"}
    assert set(public["cases"][0]["repetitions"][0]) == {"repetition", "execution_mode", "comparability", "used", "status",
                                                         "timing_credit", "official_task_success",
                                                         "untimed_task_success", "needed_task_solving_help"}


def test_projection_refuses_a_file_that_is_not_a_score(tmp_path: Path) -> None:
    bad = write_json(tmp_path / "s.json", {"benchmark_id": "x"})
    res = run("project", "--score", bad, "--output", tmp_path / "p.json")
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "p.json").exists()
