"""Seed sections 6 and 7: fuse_candidate_outputs, ConsensusSwarm and QuestioningConsensusSwarm."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchscore.swarm.consensus import (
    S07_QUALITY_CONSENSUS,
    S09_QUESTIONING_CONSENSUS,
    Challenge,
    ConsensusParams,
    ConsensusSwarm,
    QuestioningConsensusSwarm,
    Revision,
    Vote,
    consensus_converged,
    evaporate,
    leader_stats,
    vote_increment,
)
from benchscore.swarm.fusion import Candidate, fuse_candidate_outputs
from benchscore.swarm.scoring import at_least


def test_fusion_filters_sorts_merges_and_scores():
    cands = [
        Candidate(id="coverage", text="a\nb\nshared", score=0.8),
        Candidate(id="noise", text="noise line", score=0.3),
        Candidate(id="quality", text="shared\nq1", score=0.9),
        Candidate(id="empty", text="   \n", score=0.99),
    ]
    f = fuse_candidate_outputs(cands, min_score=0.5)
    assert f.sources == ("quality", "coverage")
    assert f.text.splitlines() == ["shared", "q1", "a", "b"]
    assert "noise" not in f.text
    assert f.score == pytest.approx((0.81 + 0.64) / 1.7)
    assert set(f.filtered_out) == {"noise", "empty"}


def test_fusion_min_score_is_inclusive_and_duplicates_ignore_spacing():
    f = fuse_candidate_outputs([Candidate(id="a", text="x  y", score=0.5), Candidate(id="b", text="x y\nz", score=0.5)])
    assert f.sources == ("a", "b") and f.text.splitlines() == ["x  y", "z"] and f.score == pytest.approx(0.5)


def test_fusion_empty_set_and_bad_input():
    assert fuse_candidate_outputs([Candidate(id="a", text="x", score=0.1)]).score == 0.0
    assert fuse_candidate_outputs([]).text == ""
    with pytest.raises(ValueError):
        fuse_candidate_outputs([Candidate(id="a", text="x", score=1), Candidate(id="a", text="y", score=1)])
    with pytest.raises(ValueError):
        fuse_candidate_outputs([], min_score=float("nan"))
    with pytest.raises(ValueError):
        Candidate(id="a", text="x", score=-0.1)


cand_st = st.lists(st.tuples(st.text(alphabet="abc\n ", max_size=12), st.floats(0, 1)), max_size=8)


@given(cand_st, st.floats(0, 1))
def test_fusion_properties(raw, min_score):
    cands = [Candidate(id=f"c{i}", text=t, score=s) for i, (t, s) in enumerate(raw)]
    f = fuse_candidate_outputs(cands, min_score=min_score)
    kept = [c for c in cands if at_least(c.score, min_score) and c.text.strip()]
    assert set(f.sources) == {c.id for c in kept}
    by_id = {c.id: c.score for c in cands}
    assert [by_id[s] for s in f.sources] == sorted((by_id[s] for s in f.sources), reverse=True)
    scores = [c.score for c in kept]
    if scores and sum(scores) > 0:
        # F is a self-weighted mean: between the mean and the max of the kept scores
        mean = sum(scores) / len(scores)
        assert min(scores) - 1e-9 <= mean <= f.score + 1e-9 and f.score <= max(scores) + 1e-9
    lines = [ln for ln in f.text.splitlines()]
    assert len({" ".join(ln.split()) for ln in lines}) == len(lines)  # no duplicate line
    for c in kept:  # every kept line is present
        for ln in c.text.splitlines():
            if ln.strip():
                assert " ".join(ln.split()) in {" ".join(x.split()) for x in lines}
    # invariant under input order (up to ties)
    g = fuse_candidate_outputs(list(reversed(cands)), min_score=min_score)
    assert math.isclose(f.score, g.score, abs_tol=1e-12)


# -- consensus formulas ------------------------------------------------------------------------

def test_presets_are_the_seed_values():
    assert (S07_QUALITY_CONSENSUS.threshold, S07_QUALITY_CONSENSUS.min_margin, S07_QUALITY_CONSENSUS.evaporation) == (
        0.7, 0.25, 0.82)
    assert (S09_QUESTIONING_CONSENSUS.threshold, S09_QUESTIONING_CONSENSUS.min_margin,
            S09_QUESTIONING_CONSENSUS.evaporation) == (0.7, 0.2, 0.85)


def test_formula_pieces():
    assert evaporate({"a": 1.0, "b": 0.5}, 0.82) == {"a": 0.82, "b": 0.41}
    assert vote_increment(-0.4, 2.0) == 0.0 and vote_increment(0.5, 1.2) == pytest.approx(0.6)
    assert leader_stats({"a": 3.0, "b": 1.0}) == ("a", 0.75, 2.0)
    assert leader_stats({"a": 0.0, "b": 0.0}) == (None, 0.0, 0.0)  # issue 20: nobody scored, nobody leads
    assert leader_stats({"only": 1.0}) == ("only", 1.0, 1.0)
    assert leader_stats({"a": 1.0, "b": 1.0})[0] == "a"  # ties: listed first
    assert consensus_converged(0.7, 0.25, threshold=0.7, min_margin=0.25)
    assert not consensus_converged(0.69, 1.0, threshold=0.7, min_margin=0.25)
    assert not consensus_converged(1.0, 0.24, threshold=0.7, min_margin=0.25)


@given(st.dictionaries(st.sampled_from("abcdef"), st.floats(0, 100), min_size=1))
def test_leader_stats_properties(scores):
    leader, share, margin = leader_stats(scores)
    if not any(v > 0 for v in scores.values()):  # issue 20: all-zero scores have no leader
        assert (leader, share, margin) == (None, 0.0, 0.0)
        return
    assert scores[leader] == max(scores.values())
    assert 0.0 <= share <= 1.0 + 1e-12 and margin >= 0
    if sum(scores.values()) > 0:
        assert share >= 1.0 / len(scores) - 1e-12
    # scaling every score by c > 0 keeps leader and share, scales margin
    scaled = {k: 2 * v for k, v in scores.items()}
    l2, s2, m2 = leader_stats(scaled)
    assert l2 == leader and math.isclose(s2, share, abs_tol=1e-9) and math.isclose(m2, 2 * margin, abs_tol=1e-9)


@dataclass
class Fixed:
    name: str
    role: str
    plan: list[tuple[str, float]]  # (candidate, confidence) per round

    def vote(self, ctx):
        cand, conf = self.plan[min(ctx.round, len(self.plan)) - 1]
        return Vote(agent=self.name, role=self.role, candidate=cand, confidence=conf)


def test_consensus_run_hand_computed():
    weights = {"lead": 1.2, "peer": 1.0}
    reviewers = [Fixed("a", "lead", [("x", 0.9), ("x", 0.9)]), Fixed("b", "peer", [("y", 0.8), ("x", 0.7)])]
    rounds = []
    swarm = ConsensusSwarm(["x", "y"], ConsensusParams(0.7, 0.25, 0.82), weights, on_round=rounds.append)
    res = swarm.run(reviewers)
    r1, r2 = res.rounds
    assert r1.scores == pytest.approx({"x": 1.08, "y": 0.8})
    assert r1.leader_share == pytest.approx(1.08 / 1.88) and not r1.converged
    assert r2.scores_after_evaporation == pytest.approx({"x": 1.08 * 0.82, "y": 0.8 * 0.82})
    assert r2.scores == pytest.approx({"x": 1.08 * 0.82 + 1.08 + 0.7, "y": 0.656})
    assert r2.converged and res.accepted_candidate == "x" and res.round_count == 2
    assert rounds == list(res.rounds)  # every round handed to the recorder


def test_consensus_never_converging_stops_at_max_rounds():
    reviewers = [Fixed("a", "peer", [("x", 1.0)]), Fixed("b", "peer", [("y", 1.0)])]
    res = ConsensusSwarm(["x", "y"], S07_QUALITY_CONSENSUS, {"peer": 1.0}, max_rounds=4).run(reviewers)
    assert res.round_count == 4 and not res.converged and res.accepted_candidate is None


def test_min_rounds_delays_convergence():
    reviewers = [Fixed("a", "peer", [("x", 1.0)])]
    res = ConsensusSwarm(["x", "y"], S07_QUALITY_CONSENSUS, {"peer": 1.0}, min_rounds=2).run(reviewers)
    assert res.round_count == 2 and not res.rounds[0].converged and res.converged


def test_consensus_rejects_unknown_candidate_and_role():
    with pytest.raises(ValueError):
        ConsensusSwarm(["x"], S07_QUALITY_CONSENSUS, {"peer": 1.0}).run([Fixed("a", "peer", [("z", 1.0)])])
    with pytest.raises(ValueError):
        ConsensusSwarm(["x"], S07_QUALITY_CONSENSUS, {"peer": 1.0}).run([Fixed("a", "boss", [("x", 1.0)])])


class Questioner:
    def __init__(self, name, role, needs):
        self.name, self.role, self.needs = name, role, needs

    def challenge(self, ctx):
        missing = [n for n in self.needs if n not in ctx.subject]
        return Challenge(agent=self.name, question=f"where is {missing[0] if missing else 'the summary'}?")

    def vote(self, ctx):
        ok = all(n in ctx.subject for n in self.needs)
        return Vote(agent=self.name, role=self.role, candidate="approve" if ok else "revise", confidence=0.9)


class Adder:
    def revise(self, ctx, challenges):
        text = ctx.subject
        for ch in challenges:
            if ch.question.startswith("where is ") and "summary" not in ch.question:
                text += "\n" + ch.question.removeprefix("where is ").rstrip("?")
                break  # one fix per round
        return [Revision(agent="reviser", answers=f"{len(challenges)} challenges", revised_text=text)]


def test_questioning_consensus_records_challenges_and_revisions_each_round():
    qs = [Questioner("q1", "peer", ["e1", "e2"]), Questioner("q2", "peer", ["e1"]), Questioner("q3", "peer", [])]
    swarm = QuestioningConsensusSwarm(["approve", "revise"], S09_QUESTIONING_CONSENSUS, {"peer": 1.0})
    res = swarm.run(qs, "draft", reviser=Adder())
    assert res.converged and res.accepted_candidate == "approve"
    assert not res.rounds[0].converged and res.rounds[-1].converged and res.round_count >= 2
    assert all(r.challenges and r.revisions for r in res.rounds)
    assert "e1" in res.final_subject and "e2" in res.final_subject
    with pytest.raises(ValueError):
        swarm.run(qs, "draft")


@given(st.lists(st.lists(st.tuples(st.sampled_from(["x", "y", "z"]), st.floats(-1, 1), st.sampled_from(["a", "b"])),
                         min_size=1, max_size=4), min_size=1, max_size=5), st.floats(0, 1))
def test_consensus_rounds_follow_the_formulas(plan, evaporation):
    """Every recorded round: scores = evaporation * previous + sum of increments, all >= 0."""
    weights = {"a": 1.0, "b": 1.5}

    class Scripted:
        def __init__(self, i):
            self.name, self.role, self.i = f"r{i}", ["a", "b"][i % 2], i

        def vote(self, ctx):
            row = plan[min(ctx.round, len(plan)) - 1]
            cand, conf, _ = row[self.i % len(row)]
            return Vote(agent=self.name, role=self.role, candidate=cand, confidence=conf)

    res = ConsensusSwarm(["x", "y", "z"], ConsensusParams(0.7, 0.2, evaporation), weights,
                         max_rounds=len(plan)).run([Scripted(i) for i in range(3)])
    prev = {"x": 0.0, "y": 0.0, "z": 0.0}
    for r in res.rounds:
        for j in prev:
            expected = evaporation * prev[j] + sum(
                inc for v, inc in zip(r.votes, r.vote_increments, strict=True) if v.candidate == j)
            assert math.isclose(r.scores[j], expected, abs_tol=1e-9) and r.scores[j] >= 0
        assert r.converged == (r.leader_share >= 0.7 and r.margin >= 0.2)
        prev = r.scores
    assert res.converged == res.rounds[-1].converged


def test_fusion_with_zero_scores_keeps_their_text_and_f_is_zero():
    f = fuse_candidate_outputs([Candidate(id="a", text="x", score=0.0), Candidate(id="b", text="y", score=0.0)],
                               min_score=0.0)
    assert (f.score, f.sources, f.text) == (0.0, ("a", "b"), "x\ny")
