"""The shared client against the real local model server (scripts/live-gateway.sh); runs with BENCHSCORE_LIVE=1."""

from __future__ import annotations

import pytest

from benchscore.common.llm import LLMClient, MinuteBudget

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


def test_the_gateway_serves_one_model_as_the_readme_says(live_gateway):
    """README: the script serves ONE model under one id (S07's three distinct models must then fail)."""
    url, model = live_gateway
    with LLMClient(url, max_retries=0) as client:
        assert client.list_models() == [model]
