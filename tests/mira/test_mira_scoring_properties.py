"""Properties of the assembled score: order invariance, diagnostics never move formal numbers, never averaged from fewer."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchscore.mira.formats import Case
from benchscore.mira.scoring import effective_derivation, score

CASE = Case.model_validate({
    "case_id": "H", "intent": "i", "difficulty": "d", "prompt": "p", "scoring_class": "automated_scored",
    "criteria": [{"id": "a", "weight": 0.25, "scorer": "deterministic"}, {"id": "b", "weight": 0.75, "scorer": "judge",
                                                                          "question": "q?"}],
    "hard_fail_rules": [{"id": "hf", "description": "x"}], "t_soft_s": 10,
})


ANY_MODE = st.sampled_from(["canonical", "adapted", "noncanonical", "invalid"])


@st.composite
def record(draw, mode=ANY_MODE):
    completed = draw(st.booleans())
    post = (not completed) and draw(st.booleans())
    rec = {
        "case_id": "H", "execution_mode": draw(mode),
        "terminal_state": "completed" if completed else draw(st.sampled_from(["failed", "cancelled"])),
        "elapsed_s": draw(st.floats(0, 20)) if completed else (draw(st.floats(20.5, 40)) if post else None),
        "post_cutoff_completion": post,
        "deterministic_results": {"a": draw(st.booleans())},
        "judge_verdicts": {"b": draw(st.sampled_from(["pass", "fail"]))},
        "hard_fail_events": [{"rule": "hf"}] if draw(st.integers(0, 5)) == 0 else [],
        "interventions": [{"kind": draw(st.sampled_from(["task_solving_help", "approval", "resume"]))}]
        if draw(st.booleans()) else [],
    }
    return rec


def _numbered(recs):
    return [{**r, "repetition": i} for i, r in enumerate(recs, start=1)]


def _values(out):
    return ({k: m["value"] for k, m in out["overall"].items()},
            [{k: m["value"] for k, m in c["metrics"].items()} for c in out["cases"]])


@settings(max_examples=60)
@given(st.lists(record(), min_size=1, max_size=8), st.randoms(use_true_random=False))
def test_record_order_does_not_matter(recs, rnd: random.Random) -> None:
    recs = _numbered(recs)
    shuffled = recs[:]
    rnd.shuffle(shuffled)
    assert _values(score([CASE], recs)) == _values(score([CASE], shuffled))


@settings(max_examples=60)
@given(st.lists(record(st.sampled_from(["canonical", "adapted"])), min_size=3, max_size=3),
       st.lists(record(st.sampled_from(["noncanonical", "invalid"])), max_size=4))
def test_diagnostic_and_infrastructure_repetitions_never_move_formal_numbers(valid, extra) -> None:
    base = score([CASE], _numbered(valid))
    mixed = _numbered(extra + valid)  # diagnostics get the lower indices, so they come "first"
    assert _values(score([CASE], mixed)) == _values(base)
    assert base["status"] == "complete"


@settings(max_examples=60)
@given(st.lists(record(), max_size=6))
def test_fewer_than_planned_valid_repetitions_never_give_numbers(recs) -> None:
    recs = _numbered(recs)
    out = score([CASE], recs)
    valid = sum(1 for r in recs if r["execution_mode"] in ("canonical", "adapted"))
    case = out["cases"][0]
    if valid < 3:
        assert out["status"] == "incomplete" and case["status"] == "incomplete"
        assert all(m["value"] is None for m in case["metrics"].values())
        assert all(m["value"] is None for m in out["overall"].values())
    else:
        assert case["status"] == "formal"
        assert case["repetitions_used"] == [f"H#{r['repetition']}" for r in recs
                                            if r["execution_mode"] in ("canonical", "adapted")][:3]
        used = [r for r in out["repetitions"] if r["id"] in case["repetitions_used"]]
        assert case["metrics"]["reliability"]["value"] == sum(r["status"] == "pass" for r in used) / 3 * 100
        ts = case["metrics"]["task_success"]["value"]
        assert 0.0 <= ts <= 1.0
        assert ts == pytest.approx(sum(r["official_task_success"] for r in used) / 3, rel=1e-12)


@settings(max_examples=60)
@given(st.lists(record(), min_size=1, max_size=8))
def test_every_repetition_is_reported_once_with_consistent_numbers(recs) -> None:
    recs = _numbered(recs)
    out = score([CASE], recs)
    assert [r["id"] for r in out["repetitions"]] == [f"H#{r['repetition']}" for r in recs]
    for r in out["repetitions"]:
        if r["comparability"] == "infrastructure":
            assert r["status"] is None and r["official_task_success"] is None
            continue
        assert r["official_task_success"] <= r["raw_success"]
        if r["hard_fail_rules"] or r["status"] == "post_cutoff_completion":
            assert r["official_task_success"] == 0.0
        if r["status"] == "pass":
            assert r["official_task_success"] == 1.0 and r["timing_credit"] == 1.0
    case = out["cases"][0]
    accounted = set(case["repetitions_used"]) | set(case["repetitions_excluded"])
    if case["status"] == "formal":
        assert accounted == {r["id"] for r in out["repetitions"]}


UNTIMED = Case.model_validate({
    "case_id": "U", "intent": "i", "difficulty": "d", "prompt": "p", "scoring_class": "diagnostic_untimed",
    "planned_repetitions": 2, "criteria": [{"id": "a", "weight": 1, "scorer": "deterministic"}],
})


@settings(max_examples=80)
@given(st.lists(record(), min_size=1, max_size=8), st.lists(record(), max_size=4))
def test_every_metric_accounts_for_every_repetition_once(recs, untimed) -> None:
    """Written once per case and per aggregate, each metric's full derivation still names every
    repetition (or its case) exactly once, as used or with a known reason."""
    rows = _numbered(recs) + [{**r, "case_id": "U", "judge_verdicts": {}, "post_cutoff_completion": False}
                              for r in _numbered(untimed)]
    out = score([CASE, UNTIMED], rows)
    for case in out["cases"]:
        ids = {r["id"] for r in out["repetitions"] if r["case_id"] == case["case_id"]}
        for name, m in case["metrics"].items():
            d = effective_derivation(case["derivation"], m["derivation"])
            assert d["formula"] == name and name in out["formulas"]
            assert not set(d["used"]) & set(d["excluded"])
            assert set(d["excluded"].values()) <= set(out["exclusion_reasons"])
            covered = set(d["used"]) | set(d["excluded"])
            assert covered <= ids | {case["case_id"]}
            if case["case_id"] not in d["excluded"]:  # the case itself is not left out as a whole
                assert covered == ids, name
            if m["value"] is not None:
                assert d["used"]
    for section in ("overall", "diagnostic_untimed"):
        shared = out[section + "_derivation"]
        for name, m in out[section].items():
            d = effective_derivation(shared, m["derivation"])
            assert d["formula"] == "overall." + name
            named = set(d["used"]) | set(d["excluded"])
            assert {c["case_id"] for c in out["cases"]} <= named | {
                c["case_id"] for c in out["cases"] if f"scoring_class:{c['scoring_class']}" in d["excluded"]}


@settings(max_examples=80)
@given(st.lists(record(), min_size=1, max_size=8), st.lists(record(), max_size=4))
def test_published_counts_reproduce_reliability_and_split_the_valid_repetitions(recs, untimed) -> None:
    """Issue 9 item 10: valid_comparable_repetition_count + beyond_planned_count is every valid comparable
    repetition; the first is what the case counts (Reliability's denominator), so the counts give back
    the published Reliability, Stable@3 and Complete@3 exactly, per case and overall."""
    rows = _numbered(recs) + [{**r, "case_id": "U", "judge_verdicts": {}, "post_cutoff_completion": False}
                              for r in _numbered(untimed)]
    out = score([CASE, UNTIMED], rows)
    for case in out["cases"]:
        valid = sum(r["comparability"] == "valid_comparable" for r in out["repetitions"] if r["case_id"] == case["case_id"])
        n, beyond = case["valid_comparable_repetition_count"], case["beyond_planned_count"]
        assert n + beyond == valid and n == min(valid, case["planned_repetitions"])
        assert beyond == list(case["repetitions_excluded"].values()).count("beyond_planned")
        values = {k: m["value"] for k, m in case["metrics"].items()}
        if case["status"] == "formal" and case["scoring_class"] == "automated_scored":
            assert values["reliability"] == values["on_time_pass_count"] / n * 100
            assert values["stable_at_3"] == (values["on_time_pass_count"] == 3)
            assert values["complete_at_3"] == (values["on_time_pass_count"] + values["late_completion_count"] == 3)
    overall = {k: m["value"] for k, m in out["overall"].items()}
    if overall["reliability"] is not None:
        assert overall["reliability"] == overall["on_time_pass_count"] / overall["valid_comparable_repetition_count"] * 100
        assert overall["beyond_planned_count"] == out["cases"][0]["beyond_planned_count"]
