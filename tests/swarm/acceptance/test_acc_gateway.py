"""The model gateway (discovery, budget, audit) and S08's model IO report, on the local test server only."""

from __future__ import annotations

import threading

import pytest

from benchscore.common.llm import CallFailed, ModelNotFound
from benchscore.common.testserver import OpenAITestServer
from benchscore.swarm import TPMBudget
from benchscore.swarm.gateway import (
    GatewayUnavailable,
    ModelGateway,
    chat_models,
    model_io_report,
    render_model_io_markdown,
)

KEY = "sk-gateway-canary-93c1d7"


class CountingBudget:
    """Records reservations and reconciliations (the gateway must call both for every chat)."""

    def __init__(self):
        self.reserved, self.reconciled, self.lock = [], [], threading.Lock()

    def reserve(self, tokens):
        with self.lock:
            self.reserved.append(tokens)
        return len(self.reserved) - 1

    def reconcile(self, reservation, actual):
        with self.lock:
            self.reconciled.append((reservation, actual))


def test_chat_models_keep_discovery_order_and_skip_non_chat():
    found = ["text-embedding-3-small", "qwen-7b", "whisper-1", "qwen-7b", "llama-3", "glm-4", "dall-e-3"]
    assert chat_models(found) == ["qwen-7b", "llama-3", "glm-4"]


def test_discovery_selection_skips_listed_but_unserved_models():
    # the gateway lists 'ghost' but answers it with NewAPI's HTTP-200 model_not_found
    with OpenAITestServer(models=["ghost", "a", "b", "c"], responder=lambda m, msgs: f"ready {m}") as srv:
        gw = ModelGateway(srv.base_url, backoff_base=0.001)
        listed = gw.discover()  # 'ghost' is listed by discovery ...
        srv.models.remove("ghost")  # ... but not served
        chosen = gw.identify_models(3)
    assert listed[0] == "ghost"
    assert chosen.distinct_models == ("a", "b", "c")
    rec = gw.records
    assert rec[0].model == "ghost" and rec[0].status == "failed" and "model_not_found" in rec[0].error
    ghost = chosen.identities[0]
    assert not ghost.answered and "model_not_found" in ghost.relation


def test_no_answering_model_is_one_clear_error():
    with OpenAITestServer(models=["a", "b"]) as srv:
        gw = ModelGateway(srv.base_url, backoff_base=0.001)
        gw.discover()
        srv.models.clear()  # listed, never served
        with pytest.raises(GatewayUnavailable, match="no discovered chat model answered"):
            gw.identify_models(3)


def test_unreachable_gateway_is_gateway_unavailable():
    gw = ModelGateway("http://127.0.0.1:9", max_retries=0, timeout=0.5)
    with pytest.raises(GatewayUnavailable):
        gw.discover()


def test_runtime_tpm_budget_is_charged_and_reconciled_with_usage(tmp_path):
    with TPMBudget(f"sqlite:///{tmp_path}/budget.db", "gw", 3000, simulated=True) as budget, \
            OpenAITestServer(models=["m1"], responder=lambda m, msgs: "four words of answer") as srv:
        gw = ModelGateway(srv.base_url, budget=budget)
        gw.chat("m1", [{"role": "user", "content": "one two"}], max_tokens=10)
        gw.chat("m1", [{"role": "user", "content": "three"}], max_tokens=10)
        # reconciled to usage.total_tokens: (2 + 4) + (1 + 4), never the estimate
        assert budget.windows() == {0: 11}
        assert sum(r.total_tokens for r in gw.records) == 11
        kw = dict(endpoint=gw.endpoint, mode="replay", calls_issued=2)
        checks = {c.name: c.passed for c in model_io_report(gw.records, budget_windows=budget.windows(),
                                                             target_tpm=3000, **kw).checks}
        assert checks["budget_charged"]
        assert not model_io_report(gw.records, budget_windows={0: 10}, target_tpm=3000, **kw).S08_PASS
        assert not model_io_report(gw.records, budget_windows={0: 11}, target_tpm=10, **kw).S08_PASS


def test_budget_and_audit_on_every_call_including_failures():
    budget = CountingBudget()
    with OpenAITestServer(models=["m1", "m2"], responder=lambda m, msgs: f"{m} answer words here",
                          api_key=KEY, cost_per_token=0.0001) as srv:
        gw = ModelGateway(srv.base_url, api_key=KEY, budget=budget, backoff_base=0.001, max_retries=2, timeout=0.3)
        assert gw.discover() == ["m1", "m2"]
        gw.chat("m1", [{"role": "user", "content": "review this"}], max_tokens=20)
        srv.fail_next(1, status=429, retry_after=0)
        gw.chat("m2", [{"role": "user", "content": "again"}], max_tokens=20)  # retried, then ok
        srv.malformed_next(1)
        with pytest.raises(CallFailed):
            gw.chat("m1", [{"role": "user", "content": "x"}])
        srv.missing_usage_next(1)
        with pytest.raises(CallFailed):
            gw.chat("m2", [{"role": "user", "content": "y"}])
        with pytest.raises(ModelNotFound):
            gw.chat("nope", [{"role": "user", "content": "z"}])
        srv.delay_next(3, seconds=0.5)
        with pytest.raises(CallFailed):
            gw.chat("m1", [{"role": "user", "content": "slow"}])
        srv.fail_next(3, status=503, retry_after=0)
        with pytest.raises(CallFailed):
            gw.chat("m2", [{"role": "user", "content": "down"}])
    recs = gw.records
    assert len(recs) == gw.calls_issued == 7
    assert len(budget.reserved) == len(budget.reconciled) == 7
    assert recs[0].tokens_in == 2 and recs[0].tokens_out == 4 and recs[1].attempts == 2
    assert budget.reconciled[0][1] == 6  # reconciled with usage.total_tokens
    errors = [r.error for r in recs if r.status == "failed"]
    assert any("malformed JSON" in e for e in errors)
    assert any("usage" in e for e in errors)
    assert any("model_not_found" in e for e in errors)
    assert any("timeout" in e for e in errors)
    assert any("HTTP 503" in e for e in errors)
    report = model_io_report(recs, endpoint=gw.endpoint, mode="replay", calls_issued=gw.calls_issued, secrets=[KEY])
    assert report.S08_PASS, report.checks
    assert (report.calls_ok, report.calls_failed) == (2, 5)
    assert {m.model for m in report.models} == {"m1", "m2", "nope"}
    assert report.cost == pytest.approx(0.0001 * (6 + 5))
    md = render_model_io_markdown(report)
    assert "S08_PASS: **PASS**" in md and "Failed calls" in md
    assert KEY not in md and KEY not in report.model_dump_json()


def test_s08_checks_fail_when_evidence_is_missing():
    with OpenAITestServer(models=["m"]) as srv:
        gw = ModelGateway(srv.base_url)
        gw.chat("m", [{"role": "user", "content": "x"}])
        gw.chat("m", [{"role": "user", "content": "y"}])
    recs = gw.records
    assert model_io_report(recs, endpoint="e", mode="replay", calls_issued=2).S08_PASS
    lost = model_io_report(recs[:1], endpoint="e", mode="replay", calls_issued=2)
    assert not lost.S08_PASS and [c.name for c in lost.checks if not c.passed] == ["every_call_recorded"]
    assert not model_io_report([], endpoint="e", mode="replay", calls_issued=0).S08_PASS
    no_usage = [recs[0].model_copy(update={"tokens_in": None}), recs[1]]
    assert [c.name for c in model_io_report(no_usage, endpoint="e", mode="replay", calls_issued=2).checks
            if not c.passed] == ["ok_calls_have_usage"]
    no_reason = [recs[0].model_copy(update={"status": "failed", "error": None}), recs[1]]
    assert not model_io_report(no_reason, endpoint="e", mode="replay", calls_issued=2).S08_PASS
    leak = [recs[0].model_copy(update={"error": "key sk-leak"}), recs[1]]
    assert not model_io_report(leak, endpoint="e", mode="replay", calls_issued=2, secrets=["sk-leak"]).S08_PASS


def test_api_key_from_environment(monkeypatch):
    monkeypatch.setenv("MY_GATEWAY_KEY", KEY)
    with OpenAITestServer(models=["m"], api_key=KEY) as srv:
        gw = ModelGateway.from_env(srv.base_url, "MY_GATEWAY_KEY")
        assert gw.discover() == ["m"]
        assert srv.headers == []  # discovery only: no completion was sent
    monkeypatch.delenv("MY_GATEWAY_KEY")
    with OpenAITestServer(models=["m"], api_key=KEY) as srv:
        with pytest.raises(GatewayUnavailable, match="401"):
            ModelGateway.from_env(srv.base_url, "MY_GATEWAY_KEY").discover()
