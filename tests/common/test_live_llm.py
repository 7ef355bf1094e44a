"""The shared client against the real local model server (scripts/live-gateway.sh); runs with BENCHSCORE_LIVE=1."""

from __future__ import annotations

import pytest

from benchscore.common.llm import AnswerFormat, LLMClient, MinuteBudget

pytestmark = pytest.mark.live


def test_discovery_chat_usage_and_audit_record(live_gateway):
    url, model = live_gateway
    records = []
    budget = MinuteBudget(100_000)
    with LLMClient(url, on_record=records.append, budget=budget, timeout=120) as client:
        assert model in client.list_models()
        result = client.chat(model, [{"role": "user", "content": "Say hello in one word."}], max_tokens=8)
    assert isinstance(result.text, str)
    usage = result.usage or {}
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
    assert len(records) == 1 and records[0].status == "ok" and records[0].tokens_in == usage["prompt_tokens"]
    assert sum(budget.windows.values()) == usage["total_tokens"]  # the reservation was replaced by the real usage


def test_the_gateway_serves_three_models_each_answering_under_a_schema(live_gateway):
    """README: the script serves three distinct models (issue 20); each is probed once and answers under
    llama-cpp-python's json_object + schema (its json_schema is an HTTP 500), an answer the schema allows."""
    url, _ = live_gateway
    fmt = AnswerFormat("v", {"verdict": ["pass", "fail"]})
    with LLMClient(url, max_retries=0, timeout=300) as client:
        models = client.list_models()
        assert models == ["smollm2-135m-instruct", "gemma-3-270m", "qwen2.5-coder-0.5b-instruct"]
        for model in models:
            probe = client.constraint_for(model)
            assert probe.mode == "json_object_schema", probe
            assert probe.tried[0]["mode"] == "json_schema" and probe.tried[0]["outcome"].startswith("rejected: HTTP 500")
            r = client.chat(model, [{"role": "user", "content": 'Is 2 + 2 = 4? Reply {"verdict": "pass"} or '
                                     '{"verdict": "fail"}.'}], answer_format=fmt, max_tokens=fmt.max_tokens)
            assert fmt.read(r.text) is not None, r.text
            assert r.record.constraint == "json_object_schema" and r.record.answered_model == model
