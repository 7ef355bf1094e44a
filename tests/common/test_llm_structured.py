"""Issue 20: structured answers, the constraint probe and its fallback, log-likelihoods, model mismatch,
against the local OpenAI-compatible test server (no model)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchscore.common.llm import (
    AnswerFormat,
    LLMClient,
    ModelMismatch,
    NoPromptLogprobs,
    same_model,
)
from benchscore.common.testserver import OpenAITestServer, first_sentence

VERDICT = AnswerFormat("v", {"verdict": ["pass", "fail"]})
ASK = [{"role": "user", "content": "Is it right?"}]


def _probe_bodies(srv):
    return [b for b in srv.requests if b.get("messages", [{}])[0].get("content") == "Reply with the single word hello."]


def test_llama_cpp_like_endpoint_rejects_json_schema_and_enforces_json_object_schema():
    records = []
    with OpenAITestServer(models=["m"], constraints=("json_object_schema", "grammar"), unsupported_constraint="reject",
                          responder=lambda m, msgs: "free text") as srv, \
            LLMClient(srv.base_url, on_record=records.append) as client:
        probe = client.constraint_for("m")
        r1 = client.chat("m", ASK, answer_format=VERDICT)
        r2 = client.chat("m", ASK, answer_format=VERDICT)
        bodies = list(srv.requests)
    assert probe.mode == "json_object_schema"
    assert [t["mode"] for t in probe.tried] == ["json_schema", "json_object_schema"]
    assert probe.tried[0]["outcome"].startswith("rejected: HTTP 500") and probe.tried[1]["outcome"] == "enforced"
    assert len(_probe_bodies(srv)) == 2  # probed once for the model, not once per call
    assert bodies[-1]["response_format"] == {"type": "json_object", "schema": VERDICT.schema} and "grammar" not in bodies[-1]
    assert VERDICT.read(r1.text) == {"verdict": "pass"} and r1.constraint == r2.constraint == "json_object_schema"
    # every record says what it was produced under, and the probe calls say they were probes
    assert [(r.constraint, r.purpose) for r in records] == [("json_schema", "constraint-probe"),
                                                            ("json_object_schema", "constraint-probe"),
                                                            ("json_object_schema", None), ("json_object_schema", None)]
    assert client.calls_issued == len(records) == 4


def test_an_endpoint_that_ignores_every_constraint_falls_back_to_free_text():
    with OpenAITestServer(models=["m"], responder=lambda m, msgs: "pass") as srv, LLMClient(srv.base_url) as client:
        probe = client.constraint_for("m")
        r = client.chat("m", ASK, answer_format=VERDICT)
        last = srv.requests[-1]
    assert probe.mode == "none" and [t["outcome"].split(":")[0] for t in probe.tried] == ["ignored"] * 3
    assert "response_format" not in last and "grammar" not in last  # free text: nothing is sent
    assert r.record.constraint == "none" and r.text == "pass"


def test_a_grammar_only_endpoint_is_asked_with_the_grammar():
    with OpenAITestServer(models=["m"], constraints=("grammar",), unsupported_constraint="ignore") as srv, \
            LLMClient(srv.base_url) as client:
        assert client.constraint_for("m").mode == "grammar"
        r = client.chat("m", ASK, answer_format=VERDICT)
        assert srv.requests[-1]["grammar"] == VERDICT.grammar
    assert r.text == '{"verdict": "pass"}' and r.record.constraint == "grammar"


def test_an_openai_like_endpoint_takes_json_schema_first():
    with OpenAITestServer(models=["m"], constraints=("json_schema", "json_object_schema")) as srv, \
            LLMClient(srv.base_url) as client:
        assert client.constraint_for("m").mode == "json_schema"
        client.chat("m", ASK, answer_format=VERDICT)
        rf = srv.requests[-1]["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["schema"] == VERDICT.schema and rf["json_schema"]["strict"]


@pytest.mark.parametrize("text", [
    '```json\n{"verdict": "pass"}\n```', '{"verdict": "Pass"}', '{"verdict": "pass", "why": "x"}', "pass",
    '{"verdict": "pass", "verdict": "fail"}', '{"verdict": "pass"} and more', "", '["pass"]',
])
def test_a_constrained_answer_outside_the_schema_is_never_repaired(text):
    assert VERDICT.read(text) is None


def test_indices_are_integers_exactly():
    mc = AnswerFormat("mc", {"option": [0, 1, 2]})
    assert mc.read('{"option": 2}') == {"option": 2} and mc.read(' {"option":0}\n') == {"option": 0}
    for bad in ('{"option": 2.0}', '{"option": "2"}', '{"option": true}', '{"option": 3}', '{"option": -1}'):
        assert mc.read(bad) is None, bad
    conf = AnswerFormat("c", {"c": [0.0, 0.5, 1.0]})
    assert conf.read('{"c": 1}') == {"c": 1} and conf.read('{"c": 0.5}') and conf.read('{"c": 0.4}') is None


@given(st.dictionaries(st.sampled_from(["solvent", "base", "ligand", "additive"]),
                       st.lists(st.integers(0, 30), min_size=1, max_size=8, unique=True), min_size=1))
def test_the_grammar_and_the_schema_say_the_same_thing(fields):
    """The sentence the grammar gives (first alternative of every group) is read back by the schema reader."""
    fmt = AnswerFormat("f", fields)
    sentence = first_sentence(fmt.grammar)
    assert fmt.read(sentence) == {k: v[0] for k, v in fields.items()}
    assert len(sentence) <= fmt.max_tokens
    assert fmt.schema["required"] == list(fields) and fmt.schema["additionalProperties"] is False


def test_a_schema_violating_answer_is_returned_as_written():
    with OpenAITestServer(models=["m"], constraints=("json_object_schema",)) as srv, LLMClient(srv.base_url) as client:
        client.constraint_for("m")
        srv.violate_schema_next(1, text='{"verdict": "maybe"}')
        r = client.chat("m", ASK, answer_format=VERDICT)
    assert r.text == '{"verdict": "maybe"}' and VERDICT.read(r.text) is None and r.record.status == "ok"


def test_an_answer_from_another_model_is_refused():
    records = []
    with OpenAITestServer(models=["m1", "m2"], answer_as={"m2": "m1"}) as srv, \
            LLMClient(srv.base_url, on_record=records.append) as client:
        client.chat("m1", ASK)
        with pytest.raises(ModelMismatch, match="came from model 'm1', not 'm2'"):
            client.chat("m2", ASK)
    assert records[-1].status == "failed" and records[-1].answered_model == "m1" and "refused" in records[-1].error


def test_an_unknown_model_answered_by_the_default_model_is_refused():
    """llama-cpp-python's server answers an unknown id from its default model (when it says so)."""
    with OpenAITestServer(models=["m1"], unknown_model="default") as srv, LLMClient(srv.base_url) as client:
        with pytest.raises(ModelMismatch):
            client.chat("nope", ASK)


@pytest.mark.parametrize(("asked", "answered", "same"), [
    ("m", "m", True), ("m", None, True), ("gpt-4o", "gpt-4o-2024-08-06", True), ("m", "m2", False),
    ("qwen", "gemma", False), ("gpt-4o-mini", "gpt-4o", False),
])
def test_same_model(asked, answered, same):
    assert same_model(asked, answered) is same


def _favour(word):
    return lambda model, before, token: -0.05 if token.strip() == word else -1.0 - len(before) / 1000


def test_loglikelihood_by_echo_scores_only_the_continuation():
    with OpenAITestServer(models=["m"], token_logprob=_favour("B")) as srv, LLMClient(srv.base_url) as client:
        assert client.logprobs_method("m") == "echo"
        scores = client.loglikelihoods("m", "Pick one:", [" A", " B", " C D"])
    assert [s.tokens for s in scores] == [1, 1, 2] and [s.method for s in scores] == ["echo"] * 3
    assert max(range(3), key=lambda i: scores[i].loglikelihood) == 1
    assert scores[1].loglikelihood == pytest.approx(-0.05)
    assert all(s.record.status == "ok" and s.record.purpose is None for s in scores)


def test_misaligned_echo_falls_back_to_a_forced_continuation():
    """llama-cpp-python 0.3 shifts echoed log-probabilities by one token for a model without BOS: detected."""
    with OpenAITestServer(models=["m"], token_logprob=_favour("B"), misaligned_echo=True, constraints=("grammar",),
                          unsupported_constraint="reject") as srv, LLMClient(srv.base_url) as client:
        assert client.logprobs_method("m") == "forced"
        scores = client.loglikelihoods("m", "Pick one:", [" A", " B"])
        assert srv.requests[-1]["grammar"] == 'root ::= " B"' and not srv.requests[-1]["echo"]
    assert [s.method for s in scores] == ["forced", "forced"] and scores[1].loglikelihood == pytest.approx(-0.05)


@pytest.mark.parametrize("kw", [{"completion_logprobs": "none"}, {"completion_logprobs": "reject"},
                                {"misaligned_echo": True, "token_logprob": _favour("B")}])
def test_an_endpoint_without_usable_prompt_logprobs_is_refused(kw):
    with OpenAITestServer(models=["m"], **kw) as srv, LLMClient(srv.base_url) as client:
        with pytest.raises(NoPromptLogprobs):
            client.logprobs_method("m")
