"""Seed sections 2 and 3: named quality checks, Q, the quality gate, R(content) and score_output."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchscore.swarm.quality import (
    QualityCheck,
    assess_output_quality,
    detect_quality_risk,
    s07_quality_checks,
)
from benchscore.swarm.scoring import score_output


def checks(passed: int, failed: int, *, critical_failed: int = 0) -> list[QualityCheck]:
    out = [QualityCheck(name=f"p{i}", passed=True) for i in range(passed)]
    out += [QualityCheck(name=f"f{i}", passed=False, critical=i < critical_failed) for i in range(failed)]
    return out


def test_q_is_passed_over_n_and_each_check_is_reported():
    a = assess_output_quality(checks(3, 1))
    assert a.Q == 0.75 and a.passed == 3 and a.total == 4
    assert [c.name for c in a.checks] == ["p0", "p1", "p2", "f0"]
    assert a.quality_pass  # 0.75 >= 0.72, no critical failed


def test_gate_threshold_is_072_inclusive():
    # 18/25 = 0.72 exactly passes, 17/25 = 0.68 fails
    assert assess_output_quality(checks(18, 7)).quality_pass
    assert not assess_output_quality(checks(17, 8)).quality_pass


def test_a_failed_critical_check_fails_the_gate_even_with_high_q():
    a = assess_output_quality(checks(9, 1, critical_failed=1))
    assert a.Q == 0.9 and not a.quality_pass and a.critical_failed == ("f0",)


def test_assess_rejects_empty_and_duplicate_names():
    with pytest.raises(ValueError):
        assess_output_quality([])
    with pytest.raises(ValueError, match="unique"):
        assess_output_quality([QualityCheck(name="a", passed=True), QualityCheck(name="a", passed=False)])


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40))
def test_quality_properties(flags):
    cs = [QualityCheck(name=f"c{i}", passed=p, critical=c) for i, (p, c) in enumerate(flags)]
    a = assess_output_quality(cs)
    assert 0.0 <= a.Q <= 1.0
    assert a.Q == sum(p for p, _ in flags) / len(flags)
    assert a.quality_pass == (a.Q >= 0.72 and all(p for p, c in flags if c))
    # flipping one failed check to passed never turns the gate from pass to fail
    for i, (p, c) in enumerate(flags):
        if not p:
            better = list(cs)
            better[i] = QualityCheck(name=f"c{i}", passed=True, critical=c)
            assert assess_output_quality(better).Q > a.Q
            assert assess_output_quality(better).quality_pass >= a.quality_pass


@pytest.mark.parametrize("text, kind", [
    ("I'm sorry, but I cannot help with that request.", "refusal"),
    ("I must decline.", "refusal"),
    ("抱歉，我无法协助完成这个任务。", "refusal"),
    ("As an AI language model I cannot review code.", "role_refusal"),
    ("作为AI助手，我不能执行这个操作", "role_refusal"),
    ("OFF-TOPIC: here is a poem about spring", "off_topic"),
    ("QUALITY_FAILURE: the model produced nothing useful", "quality_failure"),
    ("   ", "quality_failure"),
])
def test_risk_markers(text, kind):
    assert kind in detect_quality_risk(text)


def test_ordinary_review_text_has_no_risk():
    assert detect_quality_risk("STEP-02 reviews fastapi/routing.py: APIRouter.add_api_route and Depends.") == ()


# -- section 3 ---------------------------------------------------------------------------------

def test_score_output_branches_with_seed_numbers():
    assert score_output(1.0, quality_pass=True, risk=True, step_index=6, final_step=True) == 0.12
    assert score_output(0.5, quality_pass=False, risk=False, step_index=0, final_step=False) == pytest.approx(0.475)
    assert score_output(0.0, quality_pass=False, risk=False, step_index=0, final_step=False) == pytest.approx(0.3)
    assert score_output(0.9, quality_pass=True, risk=False, step_index=6, final_step=True) == 1.0
    assert score_output(0.8, quality_pass=True, risk=False, step_index=2, final_step=False) == pytest.approx(0.864)
    # the 0.98 cap on intermediate steps: 0.62 + 0.28 + 0.01*10 = 1.0 -> 0.98
    assert score_output(1.0, quality_pass=True, risk=False, step_index=10, final_step=False) == 0.98


def test_score_output_rejects_bad_arguments():
    for bad in (-0.1, 1.1, float("nan")):
        with pytest.raises(ValueError):
            score_output(bad, quality_pass=False, risk=False, step_index=0, final_step=False)
    with pytest.raises(ValueError):
        score_output(0.5, quality_pass=False, risk=False, step_index=-1, final_step=False)


@given(st.floats(0, 1), st.booleans(), st.booleans(), st.integers(0, 50), st.booleans())
def test_score_output_properties(q, gate, risk, i, final):
    s = score_output(q, quality_pass=gate, risk=risk, step_index=i, final_step=final)
    assert 0.05 <= s <= 1.0
    if risk:
        assert s == 0.12
    elif not gate:
        assert s <= 0.65 + 1e-12  # a failed gate never reaches a passing intermediate score (>= 0.62+0.28*0.72)
    elif not final:
        assert 0.62 <= s <= 0.98
    else:
        assert s == 1.0


@given(st.floats(0, 1), st.floats(0, 1), st.booleans(), st.integers(0, 20))
def test_score_output_is_monotone_in_q(q1, q2, gate, i):
    lo, hi = sorted((q1, q2))
    assert score_output(lo, quality_pass=gate, risk=False, step_index=i, final_step=False) <= score_output(
        hi, quality_pass=gate, risk=False, step_index=i, final_step=False)


# -- S07 checks --------------------------------------------------------------------------------

GOOD = """STEP-03 continues STEP-02 on fastapi/fastapi at 0.115.0.
- fastapi/routing.py: APIRouter.add_api_route wires Depends into the dependant tree.
- fastapi/applications.py: FastAPI( delegates to Starlette and keeps the router.
- HTTPException handlers are registered before middleware, which matters for errors.
The review checks request validation, response models and dependency caching across the router,
and records the open questions for the next step of the chain in a compact summary."""


def s07(text, step=3):
    return s07_quality_checks(text, step=step, repository="fastapi/fastapi", pinned_ref="0.115.0",
                              source_files=["fastapi/routing.py", "fastapi/applications.py"])


def test_s07_checks_pass_on_a_good_step():
    a = assess_output_quality(s07(GOOD))
    assert a.quality_pass and a.Q == 1.0 and a.total == 10
    assert sum(c.critical for c in a.checks) == 7


@pytest.mark.parametrize("mutation, failed", [
    (lambda t: t.replace("STEP-03", "STEP-3"), "current_step_marker"),
    (lambda t: t.replace("STEP-02", "the last step"), "previous_step_marker"),
    (lambda t: t.replace("fastapi/fastapi", "the framework"), "external_repository"),
    (lambda t: t.replace("0.115.0", "latest"), "pinned_ref"),
    (lambda t: t + "\nSee benchscore/swarm for comparison.", "no_drift_to_local_project"),
    (lambda t: t + "\nOFF-TOPIC", "no_quality_risk"),
])
def test_each_critical_s07_check_fails_the_gate_on_its_own(mutation, failed):
    a = assess_output_quality(s07(mutation(GOOD)))
    assert a.critical_failed == (failed,) and not a.quality_pass


def test_s07_noncritical_checks_make_q_a_real_gate():
    # all seven critical checks pass but no non-critical one: Q = 0.7 < 0.72 -> gate fails
    bare = "STEP-03 after STEP-02 on fastapi/fastapi 0.115.0: APIRouter and Depends."
    a = assess_output_quality(s07(bare))
    assert a.critical_failed == () and a.Q == pytest.approx(0.7) and not a.quality_pass
    a2 = assess_output_quality(s07(bare + " fastapi/routing.py"))
    assert a2.Q == pytest.approx(0.8) and a2.quality_pass


@given(st.sampled_from(["OFF-TOPIC", "QUALITY_FAILURE", "I cannot help with that", "偏题", "质量失败"]),
       st.integers(0, len(GOOD)))
def test_a_risk_marker_anywhere_fails_the_s07_gate(marker, at):
    text = GOOD[:at] + f"\n{marker}\n" + GOOD[at:]
    a = assess_output_quality(s07(text))
    assert not a.quality_pass and "no_quality_risk" in a.critical_failed
    assert score_output(a.Q, quality_pass=a.quality_pass, risk=bool(detect_quality_risk(text)), step_index=2,
                        final_step=False) == 0.12
