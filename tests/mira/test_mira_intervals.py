"""issue 16: the 95 % intervals beside the overall Mira metrics (cases are the unit of resampling)."""

from __future__ import annotations

from pathlib import Path

import orjson
from mira_helpers import DATA, run

from benchscore.common import stats as S


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


def test_pooled_metrics_resample_whole_cases_and_per_case_metrics_are_wilson(tmp_path):
    score = _score(tmp_path)
    overall = score["overall"]
    prov = score["provenance"]["intervals"]
    assert prov == {"level": 0.95, "seed": S.DEFAULT_SEED, "resamples": S.DEFAULT_RESAMPLES}
    num, den = _by_case(score, "official_task_success")
    want = S.cluster_bootstrap(num, den, resamples=prov["resamples"], rng=S.rng_for(prov["seed"], "automated_scored.task_success"),
                               bounds=(0, 1))
    assert overall["task_success"]["ci95"] == list(want) and overall["task_success"]["ci_method"] == "cluster_bootstrap"
    num, den = _by_case(score, "pass")
    want = S.cluster_bootstrap(num, den, resamples=prov["resamples"], rng=S.rng_for(prov["seed"], "automated_scored.reliability"),
                               bounds=(0, 1))
    assert overall["reliability"]["ci95"] == [want[0] * 100, want[1] * 100]
    cases = [c for c in score["cases"] if c["scoring_class"] == "automated_scored"]
    for name in ("pass_at_1", "stable_at_3", "complete_at_3"):
        k = sum(bool(c["metrics"][name]["value"]) for c in cases)
        lo, hi = S.wilson(k, len(cases))
        assert overall[name]["ci95"] == [lo * 100, hi * 100] and overall[name]["ci_method"] == "wilson", name
    for name, m in overall.items():  # only the headline metrics carry one, and it holds its number
        assert ("ci95" in m) == (name in ("task_success", "reliability", "pass_at_1", "stable_at_3", "complete_at_3"))
        if m.get("ci95"):
            assert m["ci95"][0] <= m["value"] <= m["ci95"][1], name


def test_the_seed_and_resamples_change_only_the_interval(tmp_path):
    a = _score(tmp_path)
    b = _score(tmp_path, "repetitions.jsonl", "--ci-seed", "7", "--ci-resamples", "500")
    assert b["provenance"]["intervals"] == {"level": 0.95, "seed": 7, "resamples": 500}
    num, den = _by_case(b, "official_task_success")
    assert b["overall"]["task_success"]["ci95"] == list(S.cluster_bootstrap(
        num, den, resamples=500, rng=S.rng_for(7, "automated_scored.task_success"), bounds=(0, 1)))
    strip = ("ci95", "ci_method", "ci_reason")
    for key in ("overall", "diagnostic_untimed"):
        assert {k: {f: v for f, v in m.items() if f not in strip} for k, m in a[key].items()} == \
            {k: {f: v for f, v in m.items() if f not in strip} for k, m in b[key].items()}
    assert a["cases"] == b["cases"] and a["repetitions"] == b["repetitions"]


def test_an_incomplete_score_has_null_intervals_with_the_reason(tmp_path):
    score = _score(tmp_path, "repetitions_incomplete.jsonl")
    rec = score["overall"]["task_success"]
    assert rec["value"] is None and rec["ci95"] is None
    assert rec["ci_reason"].startswith("the result is incomplete (case ADV-03)")


def test_one_diagnostic_case_has_no_interval(tmp_path):
    rec = _score(tmp_path)["diagnostic_untimed"]["untimed_task_success"]
    assert rec["ci95"] is None and rec["value"] is not None
    assert rec["ci_reason"] == "1 case: the spread between cases cannot be estimated"
