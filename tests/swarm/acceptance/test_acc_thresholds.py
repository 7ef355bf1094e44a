"""Issue 9: every threshold of the swarm's scoring is compared with ``at_least`` (tolerance 1e-9),
tested just below, exactly at and just above each edge, in both consensus presets."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from benchscore.swarm.consensus import (
    S07_QUALITY_CONSENSUS,
    S09_QUESTIONING_CONSENSUS,
    ConsensusSwarm,
    Vote,
    consensus_converged,
    leader_stats,
)
from benchscore.swarm.fusion import Candidate, fuse_candidate_outputs
from benchscore.swarm.quality import QUALITY_THRESHOLD, QualityCheck, assess_output_quality
from benchscore.swarm.scoring import THRESHOLD_TOLERANCE, at_least

EVERY_THRESHOLD = (0.72, 0.5, 0.7, 0.25, 0.2, 0.75)  # Q, fusion min_score, threshold, S07/S09 min_margin, S07 score


@pytest.mark.parametrize("t", EVERY_THRESHOLD)
def test_at_least_at_every_edge(t):
    assert not at_least(t - 1e-8, t)  # just below: a real shortfall
    assert at_least(t - 1e-10, t)  # float rounding below the written value counts as equal
    assert at_least(math.nextafter(t, 0.0), t)
    assert at_least(t, t)  # exactly at
    assert at_least(t + 1e-8, t)  # just above
    assert THRESHOLD_TOLERANCE == 1e-9


@given(st.floats(-10, 10), st.floats(-10, 10))
@example(-2.0767515114270046e-188, 1e-09)
def test_at_least_is_plain_comparison_outside_the_tolerance(value, threshold):
    # the gap as float arithmetic gives it is off by up to ~1e-15 here (|values| <= 10), so a band
    # of 1e-12 around the tolerance's edge is left out: -2e-188 against 1e-9 is a gap of exactly
    # 1e-9 + 2e-188, which rounds to 1e-9 (hypothesis found it)
    gap = threshold - value
    if gap <= THRESHOLD_TOLERANCE - 1e-12:
        assert at_least(value, threshold)  # above, at, or below by rounding only
    elif gap >= THRESHOLD_TOLERANCE + 1e-12:
        assert not at_least(value, threshold)  # a real shortfall


@dataclass
class Fixed:
    name: str
    candidate: str
    confidence: float
    role: str = "r"

    def vote(self, ctx) -> Vote:
        return Vote(agent=self.name, role=self.role, candidate=self.candidate, confidence=self.confidence)


def one_round(params, a: float, b: float):
    """One round of two reviewers (weight 1): ``a`` for A, ``b`` for B; returns the round."""
    swarm = ConsensusSwarm(("A", "B"), params, {"r": 1.0}, max_rounds=1)
    return swarm.run([Fixed("x", "A", a), Fixed("y", "B", b)]).rounds[0]


def test_issue_9_s09_votes_0_3_and_0_1_converge():
    r = one_round(S09_QUESTIONING_CONSENSUS, 0.3, 0.1)
    assert r.margin == 0.19999999999999998 and r.leader_share == 0.7499999999999999  # what floats compute
    assert r.converged  # the seed's margin is 0.2 = min_margin


# (preset, votes for A and B at the margin edge): the margin is exactly min_margin on the written values
MARGIN_EDGES = [(S09_QUESTIONING_CONSENSUS, 0.3, 0.1), (S07_QUALITY_CONSENSUS, 0.35, 0.1)]


@pytest.mark.parametrize(("params", "a", "b"), MARGIN_EDGES, ids=["S09", "S07"])
def test_margin_edge_below_at_above(params, a, b):
    assert one_round(params, a, b).converged  # at (computed 0.1999.../0.2499...)
    assert not one_round(params, a, b + 1e-6).converged  # just below min_margin
    assert one_round(params, a, b - 1e-6).converged  # just above
    r = one_round(params, a, b)
    assert math.isclose(r.margin, params.min_margin) and r.leader_share >= params.threshold


# 5.81 / (5.81 + 2.49) is 0.7 on the written values and 0.6999999999999998 in floats
@pytest.mark.parametrize("params", [S09_QUESTIONING_CONSENSUS, S07_QUALITY_CONSENSUS], ids=["S09", "S07"])
def test_share_edge_below_at_above(params):
    at = one_round(params, 5.81, 2.49)
    assert at.leader_share == 0.6999999999999998 and at.converged
    below = one_round(params, 5.81, 2.4901)
    assert below.leader_share < 0.7 - 1e-6 and not below.converged
    above = one_round(params, 5.81, 2.48)
    assert above.leader_share > 0.7 and above.converged


@pytest.mark.parametrize("params", [S09_QUESTIONING_CONSENSUS, S07_QUALITY_CONSENSUS], ids=["S09", "S07"])
def test_consensus_converged_edges(params):
    t, m = params.threshold, params.min_margin
    for share, margin, expected in [(t, m, True), (t - 1e-8, m, False), (t, m - 1e-8, False),
                                    (t + 1e-8, m + 1e-8, True), (t - 1e-10, m - 1e-10, True)]:
        assert consensus_converged(share, margin, threshold=t, min_margin=m) is expected, (share, margin)


@given(st.dictionaries(st.sampled_from("abc"), st.floats(0, 10), min_size=2),
       st.sampled_from([S07_QUALITY_CONSENSUS, S09_QUESTIONING_CONSENSUS]))
def test_convergence_is_monotone_in_share_and_margin(scores, params):
    _, share, margin = leader_stats(scores)
    if consensus_converged(share, margin, threshold=params.threshold, min_margin=params.min_margin):
        assert consensus_converged(share + 0.01, margin + 0.01, threshold=params.threshold,
                                   min_margin=params.min_margin)


def _checks(passed: int, total: int) -> list[QualityCheck]:
    return [QualityCheck(name=f"c{i}", passed=i < passed) for i in range(total)]


@pytest.mark.parametrize(("passed", "total", "expected"), [
    (18, 25, True),  # Q = 0.72 exactly
    (71, 99, False),  # just below (0.7171...)
    (72, 100, True),
    (73, 100, True),  # just above
    (17, 25, False),
])
def test_quality_gate_edges(passed, total, expected):
    a = assess_output_quality(_checks(passed, total))
    assert a.threshold == QUALITY_THRESHOLD and a.quality_pass is expected, a.Q


def test_fusion_min_score_edges():
    below = Candidate(id="below", text="b", score=0.5 - 1e-8)
    at = Candidate(id="at", text="a", score=0.5)
    above = Candidate(id="above", text="c", score=0.5 + 1e-8)
    assert fuse_candidate_outputs([below, at, above], min_score=0.5).sources == ("above", "at")
    # a min_score computed as 0.1 + 0.2 (0.30000000000000004) keeps a written 0.3
    assert fuse_candidate_outputs([Candidate(id="x", text="x", score=0.3)], min_score=0.1 + 0.2).sources == ("x",)
