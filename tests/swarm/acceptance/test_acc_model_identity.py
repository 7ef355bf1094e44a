"""Issue 11: aliases of one model are one model. S07 tells discovered models apart by a fingerprint
probe; a server listing one model under three names runs the whole chain and honestly fails
``three_distinct_models_from_discovery`` (and only that, besides the Redis checks without Redis)."""

from __future__ import annotations

import hashlib

import orjson
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from benchscore.common.cli import group
from benchscore.common.testserver import OpenAITestServer
from benchscore.swarm.accept.s07 import replay_responder, run_s07
from benchscore.swarm.cli_accept import accept
from benchscore.swarm.gateway import (
    FINGERPRINT_PROBES,
    ModelGateway,
    ModelProbe,
    group_models,
    proven_distinct,
)

REDIS_CHECKS = {"pheromone_scores_pg_and_redis", "redis_stream_event_volume"}
ALIASES = ("smollm2-135m", "smollm2-135m-coder", "smollm2-135m-reviewer")


def one_model(model, messages):
    """Three names, one set of weights: the answer never depends on the name asked for."""
    return replay_responder("SmolLM2-135M-Instruct", messages)


def h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def probe(model, answers=("x", "x"), tokens=10, error=""):
    return ModelProbe(model=model, answers_sha256=tuple(h(a) for a in answers), prompt_tokens=tokens, error=error)


def test_proven_distinct_rules():
    assert proven_distinct(probe("a"), probe("b", ("y", "y")))[0]  # repeatable, different answers
    assert proven_distinct(probe("a", ("x", "z")), probe("b", tokens=11))[0]  # another tokenizer
    alias = proven_distinct(probe("a"), probe("b"))
    assert not alias[0] and alias[1].startswith("alias of b")
    undecided = proven_distinct(probe("a", ("x", "z")), probe("b", ("y", "w")))
    assert not undecided[0] and "do not repeat" in undecided[1]


def test_group_models_counts_aliases_once():
    ids = group_models([probe("a"), probe("b"), probe("c"), probe("d", ("q", "q")), probe("e", error="HTTP 500")])
    assert [(i.model, i.same_model_as) for i in ids] == [("a", None), ("b", "a"), ("c", "a"), ("d", None),
                                                          ("e", None)]
    assert not ids[-1].answered and "did not answer" in ids[-1].relation


answer_st = st.sampled_from(["p", "q", "r"])
probe_st = st.tuples(st.lists(answer_st, min_size=FINGERPRINT_PROBES, max_size=FINGERPRINT_PROBES),
                     st.sampled_from([10, 11]), st.booleans())


@given(st.lists(probe_st, min_size=1, max_size=7))
def test_grouping_never_counts_one_model_twice(raw):
    probes = [probe(f"m{i}", tuple(ans), tok, "" if ok else "down") for i, (ans, tok, ok) in enumerate(raw)]
    ids = group_models(probes)
    rep = {i.model: i.same_model_as or i.model for i in ids if i.answered}
    by_model = {p.model: p for p in probes}
    for a in rep:  # identical fingerprints (aliases) always land in the same group
        for b in rep:
            if (by_model[a].answers_sha256, by_model[a].prompt_tokens) == (by_model[b].answers_sha256,
                                                                           by_model[b].prompt_tokens):
                assert rep[a] == rep[b]
    reps = sorted(set(rep.values()))
    for i, a in enumerate(reps):  # distinct models are pairwise proven distinct
        for b in reps[i + 1:]:
            assert proven_distinct(by_model[a], by_model[b])[0]


def test_three_aliases_of_one_model_run_the_whole_chain_and_fail_only_distinct_models(tmp_path):
    with OpenAITestServer(models=ALIASES, responder=one_model) as srv:
        gw = ModelGateway(srv.base_url)
        result, ev = run_s07(gw, f"sqlite:///{tmp_path}/s07.db", mode="live", blob_root=tmp_path / "b", prefix="al")
    failed = {c.name: c for c in result.checks if not c.passed}
    assert set(failed) == {"three_distinct_models_from_discovery"} | REDIS_CHECKS
    check = failed["three_distinct_models_from_discovery"]
    assert check.evidence["distinct_models"] == 1 and check.evidence["distinct_models_used"] == [ALIASES[0]]
    assert check.evidence["identities"][ALIASES[1]]["same_model_as"] == ALIASES[0]
    assert "alias of smollm2-135m" in check.reason and "distinct_models=1" in check.reason
    assert ev.chosen_models == (ALIASES[0],)
    assert len(ev.steps) == 7 and all(s.status == "done" for s in ev.steps)  # the chain ran end to end
    assert ev.consensus.round_count >= 2 and len(ev.consensus.rounds[0].votes) == 3  # three reviewers, one model
    probes = [r for r in gw.records if r.prompt_sha256 == gw.records[0].prompt_sha256]
    assert len(probes) == FINGERPRINT_PROBES * len(ALIASES)  # every alias was probed, each call recorded


@group("t")
def _cli() -> None:
    pass


_cli.add_command(accept)


def test_accept_s07_against_aliases_is_live_and_fails_with_its_reason(tmp_path):
    out = tmp_path / "s07.json"
    with OpenAITestServer(models=ALIASES, responder=one_model) as srv:
        r = CliRunner().invoke(_cli, ["accept", "S07", "--base-url", srv.base_url, "--store",
                                      f"sqlite:///{tmp_path}/a.db", "--output", str(out)])
    assert r.exit_code == 1, r.output
    body = orjson.loads(out.read_bytes())
    assert body["mode"] == "live" and body["verdict"] == "FAIL"
    reason = body["failures"]["three_distinct_models_from_discovery"]
    assert any(ln.startswith("  FAIL S07.three_distinct_models_from_discovery: ") and reason in ln
               for ln in r.output.splitlines())
    assert "S07 (live): FAIL" in r.output


def test_an_unparseable_vote_counts_zero_and_keeps_what_the_model_said(tmp_path):
    def chatty(model, messages):
        if "VOTE:" in str(messages[-1]["content"]):
            return "I think the chain is fine overall."
        return one_model(model, messages)

    with OpenAITestServer(models=ALIASES[:1], responder=chatty) as srv:
        result, ev = run_s07(ModelGateway(srv.base_url), f"sqlite:///{tmp_path}/s.db", mode="live",
                             blob_root=tmp_path / "b", prefix="uv")
    votes = [v for r in ev.consensus.rounds for v in r.votes]
    assert votes and all(v.confidence == 0.0 and v.rationale == "unparseable vote: I think the chain is fine overall."
                         for v in votes)
    assert not ev.consensus.converged and "multi_round_quality_consensus_accepts_chain" in result.failures
