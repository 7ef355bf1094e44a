"""The 95 % intervals beside the overall Mira metrics: cases are the units (issues 16, 29)."""

from __future__ import annotations

from pathlib import Path

import orjson
from mira_helpers import DATA, run

from benchscore.stats import intervals as S


def _score(tmp_path: Path, reps: str = "repetitions.jsonl", *extra: str) -> dict:
    out = tmp_path / "s.json"
    res = run("score", "--contract", DATA / "contract.json", "--repetitions", DATA / reps, "--output", out, "--quiet",
              *extra)
    doc = orjson.loads(out.read_bytes())
    assert res.exit_code == (0 if doc["status"] == "complete" else 1), res.output
    return doc


def _by_case(score: dict, field: str) -> tuple[list[float], list[float]]:
    reps = {r["id"]: r for r in score["repetitions"]}
    num, den = [], []
    for c in score["cases"]:
        if c["scoring_class"] != "automated_scored":
            continue
        used = [reps[i] for i in c["repetitions_used"]]
        num.append(float(sum(1 for r in used if r["status"] == "pass")) if field == "pass"
                   else float(sum(r[field] for r in used)))
        den.append(float(len(used)))
    return num, den


def test_pooled_metrics_take_cases_as_units_and_per_case_metrics_are_exact(tmp_path):
    score = _score(tmp_path)
    overall = score["overall"]
    assert score["provenance"]["intervals"] == {"level": 0.95}
    num, den = _by_case(score, "official_task_success")
    want = S.ratio_interval(num, den, unit="case")
    assert overall["task_success"]["ci95"] == [want.low, want.high]
    assert overall["task_success"]["ci_method"] == want.method in ("cluster_wilson", "units_wilson")
    num, den = _by_case(score, "pass")
    want = S.ratio_interval(num, den, unit="case")
    assert overall["reliability"]["ci95"] == [want.low * 100, want.high * 100]
    cases = [c for c in score["cases"] if c["scoring_class"] == "automated_scored"]
    for name in ("pass_at_1", "stable_at_3", "complete_at_3"):
        k = sum(bool(c["metrics"][name]["value"]) for c in cases)
        lo, hi = S.mid_p(k, len(cases))
        assert overall[name]["ci95"] == [lo * 100, hi * 100] and overall[name]["ci_method"] == "exact_mid_p", name
    for name, m in overall.items():  # only the headline metrics carry one, and it holds its number
        assert ("ci95" in m) == (name in ("task_success", "reliability", "pass_at_1", "stable_at_3", "complete_at_3"))
        if m.get("ci95"):
            assert m["ci95"][0] <= m["value"] <= m["ci95"][1] and m["ci95"][0] < m["ci95"][1], name


def test_three_cases_that_all_pass_have_no_point_interval():
    """The audit's case: Reliability [100, 100] and Task Success [1, 1] beside Pass@1 [43.85, 100]."""
    from benchscore.mira.intervals import add_intervals

    reps = [{"status": "pass", "official_task_success": 1.0, "untimed_task_success": 1.0}] * 3
    cases = [{"case_id": f"c{i}", "scoring_class": "automated_scored", "status": "formal", "_used": reps,
              "metrics": {"pass_at_1": {"value": True}, "stable_at_3": {"value": True}, "complete_at_3": {"value": True}}}
             for i in range(3)]
    metrics = {"task_success": {"value": 1.0}, "reliability": {"value": 100.0}, "pass_at_1": {"value": 100.0}}
    add_intervals(metrics, cases, "automated_scored")
    for name, scale in (("task_success", 1.0), ("reliability", 100.0), ("pass_at_1", 100.0)):
        low, high = metrics[name]["ci95"]
        assert high == scale and low < 0.5 * scale, (name, metrics[name])


def test_an_incomplete_score_has_null_intervals_with_the_reason(tmp_path):
    score = _score(tmp_path, "repetitions_incomplete.jsonl")
    rec = score["overall"]["task_success"]
    assert rec["value"] is None and rec["ci95"] is None
    assert rec["ci_reason"].startswith("the result is incomplete (case ADV-03)")


def test_one_diagnostic_case_has_no_interval(tmp_path):
    rec = _score(tmp_path)["diagnostic_untimed"]["untimed_task_success"]
    assert rec["ci95"] is None and rec["value"] is not None
    assert rec["ci_reason"] == "1 case: a calibrated 95 % interval needs at least 3 cases"
