"""Seed section 12: swarmness_score, minimal_compliance_score, hard caps and grade bands."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchscore.swarm.compliance import (
    FEATURES,
    LOCAL,
    SCENARIOS,
    grade,
    minimal_compliance_score,
    swarmness_score,
)

ALL = FEATURES + SCENARIOS + LOCAL


def ones(**zeros):
    return {k: 0 if k in zeros else 1 for k in ALL}


def test_seed_example_all_ones_is_100_100():
    c = minimal_compliance_score(ones())
    assert c.swarmness_score == 100.0 and c.minimal_compliance_score == 100.0 and c.raw_minimal_compliance_score == 100
    assert c.caps_applied == () and c.grade == "strong_local_minimal_swarm_compliance"


@pytest.mark.parametrize("feature", FEATURES)
def test_any_feature_zero_caps_at_59(feature):
    c = minimal_compliance_score(ones(**{feature: 0}))
    assert c.raw_minimal_compliance_score == 90 and c.minimal_compliance_score == 59
    assert [a.name for a in c.caps_applied] == ["any_feature_failed"] and c.caps_applied[0].lowered_score
    assert c.grade == "not_a_swarm" and c.swarmness_score == pytest.approx(500 / 6)


@pytest.mark.parametrize("scenario, raw", [("S07", 90), ("S08", 95), ("S09", 90)])
def test_any_scenario_zero_caps_at_84(scenario, raw):
    c = minimal_compliance_score(ones(**{scenario: 0}))
    assert c.raw_minimal_compliance_score == raw and c.minimal_compliance_score == 84
    assert [a.name for a in c.caps_applied] == ["any_scenario_failed"]
    assert c.grade == "minimal_acceptable_swarm"


@pytest.mark.parametrize("local, raw", [("L01", 93), ("L02", 92)])
def test_any_local_zero_caps_at_94(local, raw):
    c = minimal_compliance_score(ones(**{local: 0}))
    assert c.raw_minimal_compliance_score == raw and c.minimal_compliance_score == raw
    assert c.caps_applied[0].name == "any_local_failed" and not c.caps_applied[0].lowered_score
    assert c.grade == "compliant_swarm_prototype"


def test_both_locals_zero_and_caps_compose():
    assert minimal_compliance_score(ones(L01=0, L02=0)).minimal_compliance_score == 85
    c = minimal_compliance_score(ones(F01=0, S07=0, L01=0))
    assert c.minimal_compliance_score == 59 and len(c.caps_applied) == 3


def test_grade_bands_edges():
    assert grade(59.99)[0] == "not_a_swarm"
    assert grade(60)[0] == "partial_swarm_not_acceptable"
    assert grade(75)[0] == "minimal_acceptable_swarm"
    assert grade(85)[0] == "compliant_swarm_prototype"
    assert grade(95)[0] == "strong_local_minimal_swarm_compliance"
    assert grade(74.999)[1] == "部分蜂群，不可验收"


def test_bad_inputs():
    with pytest.raises(ValueError):
        minimal_compliance_score({k: 1 for k in ALL if k != "L02"})
    with pytest.raises(ValueError):
        swarmness_score({**{k: 1 for k in FEATURES}, "F03": 2})


@given(st.fixed_dictionaries({k: st.booleans() for k in ALL}))
def test_compliance_properties(bits):
    c = minimal_compliance_score(bits)
    assert 0 <= c.minimal_compliance_score <= c.raw_minimal_compliance_score <= 100
    if not all(bits[k] for k in FEATURES):
        assert c.minimal_compliance_score <= 59
    if not all(bits[k] for k in SCENARIOS):
        assert c.minimal_compliance_score <= 84
    if not all(bits[k] for k in LOCAL):
        assert c.minimal_compliance_score <= 94
    # monotone: turning any 0 into 1 never lowers the score
    for k in ALL:
        if not bits[k]:
            assert minimal_compliance_score({**bits, k: True}).minimal_compliance_score >= c.minimal_compliance_score


def test_swarmness_is_linear_in_features():
    for n in range(7):
        feats = {k: int(i < n) for i, k in enumerate(FEATURES)}
        assert swarmness_score(feats) == pytest.approx(100 * n / 6)
