"""Issue 20: S07 votes under the endpoint's schema constraint, unparseable votes recorded as such, the vote
quorum (a round of mostly unparseable votes does not converge) and no leader for all-zero scores."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchscore.common.testserver import OpenAITestServer
from benchscore.swarm.accept.s07 import (
    CONSENSUS_CANDIDATES,
    read_vote,
    replay_responder,
    run_s07,
    vote_format,
)
from benchscore.swarm.consensus import (
    ConsensusParams,
    ConsensusSwarm,
    Vote,
    vote_quorum,
)
from benchscore.swarm.gateway import ModelGateway

MODELS = ("model-a", "model-b", "model-c")
PARAMS = ConsensusParams(0.7, 0.25, 0.82)
WEIGHTS = {"r": 1.0}


@dataclass
class Scripted:
    name: str
    role: str
    votes: list[Vote]

    def vote(self, ctx):
        return self.votes[min(ctx.round, len(self.votes)) - 1]


def ok(agent, cand, conf=1.0):
    return Vote(agent=agent, role="r", candidate=cand, confidence=conf)


def junk(agent):
    return Vote(agent=agent, role="r", candidate=None, confidence=0.0, status="unparseable",
                rationale="unparseable vote: I think it is fine")


@given(st.integers(0, 20), st.integers(0, 20))
def test_vote_quorum_is_a_strict_majority(valid, extra):
    total = valid + extra
    assert vote_quorum(valid, total) is (valid > extra)


def test_one_parseable_vote_among_three_does_not_converge():
    """The issue-20 run: three unparseable votes and one parseable 'reject_chain' vote 'converged'. No more."""
    reviewers = [Scripted("a", "r", [ok("a", "reject_chain")]), Scripted("b", "r", [junk("b")]),
                 Scripted("c", "r", [junk("c")])]
    res = ConsensusSwarm(CONSENSUS_CANDIDATES, PARAMS, WEIGHTS, max_rounds=3).run(reviewers)
    assert not res.converged and res.accepted_candidate is None
    for r in res.rounds:
        assert r.leader == "reject_chain" and r.leader_share == 1.0  # the seed's numbers alone would converge
        assert (r.valid_votes, r.quorum, r.converged) == (1, False, False)
        assert r.vote_increments[1:] == (0.0, 0.0)


def test_two_parseable_votes_of_three_may_converge():
    reviewers = [Scripted("a", "r", [ok("a", "accept_external_chain")]),
                 Scripted("b", "r", [ok("b", "accept_external_chain")]), Scripted("c", "r", [junk("c")])]
    res = ConsensusSwarm(CONSENSUS_CANDIDATES, PARAMS, WEIGHTS).run(reviewers)
    assert res.converged and res.accepted_candidate == "accept_external_chain" and res.rounds[0].quorum


def test_a_round_with_all_zero_scores_has_no_leader():
    reviewers = [Scripted(n, "r", [junk(n)]) for n in "ab"] + [Scripted("c", "r", [ok("c", "revise_chain", 0.0)])]
    res = ConsensusSwarm(CONSENSUS_CANDIDATES, PARAMS, WEIGHTS, max_rounds=2).run(reviewers)
    assert all(r.leader is None and r.leader_share == 0.0 and r.margin == 0.0 for r in res.rounds)
    assert not res.converged and res.accepted_candidate is None


def test_an_unparseable_vote_may_not_name_a_candidate():
    bad = Vote(agent="x", role="r", candidate="reject_chain", confidence=0.0, status="unparseable")
    with pytest.raises(ValueError, match="names no candidate"):
        ConsensusSwarm(CONSENSUS_CANDIDATES, PARAMS, WEIGHTS).run([Scripted("x", "r", [bad])])


@pytest.mark.parametrize(("answer", "constraint", "expected"), [
    ('{"vote": "accept_external_chain", "confidence": 0.8}', "json_object_schema", ("accept_external_chain", 0.8)),
    ('{"vote": "accept_external_chain", "confidence": 0.85}', "json_object_schema", None),
    ('```json\n{"vote": "revise_chain", "confidence": 1.0}\n```', "grammar", None),  # never repaired
    ("VOTE: accept_external_chain CONFIDENCE: 0.86", "json_object_schema", None),
    ("VOTE: accept_external_chain CONFIDENCE: 0.86\nfine", "none", ("accept_external_chain", 0.86)),
    ("I think the chain is fine overall.", "none", None),
])
def test_read_vote(answer, constraint, expected):
    assert read_vote(answer, CONSENSUS_CANDIDATES, constraint) == expected


def _structured(model, messages, schema):
    if "probe" in schema["properties"]:
        return '{"probe": "benchscore-constraint-probe"}'
    return '{"vote": "accept_external_chain", "confidence": 0.9}'


def test_s07_votes_under_the_constraint_and_records_it(tmp_path):
    with OpenAITestServer(models=MODELS, responder=replay_responder, constraints=("json_object_schema",),
                          unsupported_constraint="reject", constrained_responder=_structured) as srv:
        gw = ModelGateway(srv.base_url)
        result, ev = run_s07(gw, f"sqlite:///{tmp_path}/s.db", mode="replay", blob_root=tmp_path / "b", prefix="sv")
        vote_bodies = [b for b in srv.requests if "response_format" in b
                       and b["response_format"].get("schema", {}).get("properties", {}).get("vote")]
    votes = [v for r in ev.consensus.rounds for v in r.votes]
    assert votes and all(v.status == "ok" and v.constraint == "json_object_schema" and v.confidence == 0.9
                         for v in votes)
    assert ev.consensus.converged and ev.consensus.accepted_candidate == "accept_external_chain"
    assert vote_bodies and all(b["response_format"]["schema"] == vote_format(CONSENSUS_CANDIDATES).schema
                               for b in vote_bodies)
    # S08's "every call recorded" holds with the constraint probes counted: one record per call the client made
    assert gw.calls_issued == len(gw.records) and any(r.purpose == "constraint-probe" for r in gw.records)


def test_s07_unparseable_votes_are_recorded_and_rebuilt_from_the_ledger(tmp_path):
    def chatty(model, messages):
        if "VOTE:" in str(messages[-1]["content"]):
            return "VOTE: accept_external_chain CONFIDENCE: 0.9" if model == MODELS[0] else "looks fine to me"
        return replay_responder(model, messages)

    with OpenAITestServer(models=MODELS, responder=chatty) as srv:
        result, ev = run_s07(ModelGateway(srv.base_url), f"sqlite:///{tmp_path}/s.db", mode="replay",
                             blob_root=tmp_path / "b", prefix="su")
    rounds = ev.consensus.rounds
    assert rounds and all((r.valid_votes, r.quorum, r.converged) == (1, False, False) for r in rounds)
    statuses = [[v.status for v in r.votes] for r in rounds]
    assert all(s == ["ok", "unparseable", "unparseable"] for s in statuses)
    assert all(v.candidate is None and v.rationale == "unparseable vote: looks fine to me"
               for r in rounds for v in r.votes[1:])
    assert not ev.consensus.converged and "multi_round_quality_consensus_accepts_chain" in result.failures
    assert result.passed is False
