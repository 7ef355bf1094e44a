from __future__ import annotations

import threading

import pytest

from benchscore.common.llm import (
    CallFailed,
    LLMClient,
    ModelNotFound,
    _retry_after_seconds,
    normalise_base_url,
)
from benchscore.common.testserver import OpenAITestServer

KEY = "sk-canary-5f0c2b7e"


class Budget:
    def __init__(self) -> None:
        self.reserved = 0
        self.consumed = 0
        self.lock = threading.Lock()

    def reserve(self, tokens):
        with self.lock:
            self.reserved += tokens
        return tokens

    def reconcile(self, reservation, actual):
        with self.lock:
            self.reserved -= reservation
            self.consumed += actual


@pytest.fixture
def server():
    with OpenAITestServer(models=["alpha", "beta"], responder=lambda m, msgs: f"{m} says pass",
                          api_key=KEY, cost_per_token=0.001) as srv:
        yield srv


def make(srv, **kw):
    records = []
    kw.setdefault("backoff_base", 0.001)
    client = LLMClient(srv.base_url, api_key=KEY, on_record=records.append, **kw)
    return client, records


def test_discovery_and_chat(server):
    client, records = make(server)
    assert client.list_models() == ["alpha", "beta"]
    result = client.chat("beta", [{"role": "user", "content": "one two three"}], max_tokens=5)
    assert result.text == "beta says pass"
    assert result.usage["total_tokens"] == 6
    rec = records[0]
    assert (rec.status, rec.tokens_in, rec.tokens_out, rec.attempts, rec.http_status) == ("ok", 3, 3, 1, 200)
    assert rec.cost == pytest.approx(0.006)
    assert server.requests[0]["max_tokens"] == 5
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"


def test_retries_429_then_succeeds(server):
    client, records = make(server)
    server.fail_next(2, status=429, retry_after=0)
    server.fail_next(1, status=503, retry_after=None)
    assert client.chat("alpha", [{"role": "user", "content": "x"}]).text == "alpha says pass"
    assert records[0].attempts == 4


def test_retry_after_is_honoured():
    slept = []
    with OpenAITestServer(models=["m"]) as srv:
        client = LLMClient(srv.base_url, sleep=slept.append, backoff_base=0.001)
        srv.fail_next(1, status=429, retry_after=7)
        client.chat("m", [{"role": "user", "content": "x"}])
    assert slept == [7.0]


def test_gives_up_after_max_retries(server):
    client, records = make(server, max_retries=2)
    server.fail_next(5, status=500)
    with pytest.raises(CallFailed, match="HTTP 500"):
        client.chat("alpha", [{"role": "user", "content": "x"}])
    assert records[0].status == "failed" and records[0].attempts == 3


def test_model_not_found_is_http_200_error(server):
    client, records = make(server)
    with pytest.raises(ModelNotFound):
        client.chat("gpt-nonexistent", [{"role": "user", "content": "x"}])
    assert records[0].status == "failed" and "model_not_found" in records[0].error
    assert records[0].attempts == 1


def test_malformed_and_missing_usage_are_failed_calls(server):
    budget = Budget()
    client, records = make(server, budget=budget)
    server.malformed_next()
    with pytest.raises(CallFailed, match="malformed JSON"):
        client.chat("alpha", [{"role": "user", "content": "x"}], max_tokens=10)
    server.missing_usage_next()
    with pytest.raises(CallFailed, match="no usage"):
        client.chat("alpha", [{"role": "user", "content": "x"}], max_tokens=10)
    assert [r.status for r in records] == ["failed", "failed"]
    assert budget.reserved == 0  # every reservation reconciled
    # unusable answers keep their reservation as consumed (conservative)
    assert budget.consumed == records[0].reserved_tokens + records[1].reserved_tokens


def test_missing_usage_allowed_when_not_required(server):
    client, _ = make(server, require_usage=False)
    server.missing_usage_next()
    assert client.chat("alpha", [{"role": "user", "content": "x"}]).usage is None


def test_timeout_is_recorded(server):
    client, records = make(server, timeout=0.2, max_retries=0)
    server.delay_next(1, seconds=1.0)
    with pytest.raises(CallFailed, match="timeout"):
        client.chat("alpha", [{"role": "user", "content": "x"}])
    assert records[0].error.startswith("timeout")


def test_budget_reconciled_with_usage(server):
    budget = Budget()
    client, _ = make(server, budget=budget)
    client.chat("alpha", [{"role": "user", "content": "a b"}], reserve_tokens=50)
    assert budget.reserved == 0 and budget.consumed == 5


def test_key_never_in_records_or_errors(server):
    client, records = make(server, max_retries=0)
    client.chat("alpha", [{"role": "user", "content": "x"}])
    server.fail_next(1, status=500)
    with pytest.raises(CallFailed) as info:
        client.chat("alpha", [{"role": "user", "content": "x"}])
    assert KEY not in str(info.value)
    for rec in records:
        assert KEY not in rec.model_dump_json()
    bad = LLMClient(server.base_url, api_key="wrong-key", max_retries=0)
    with pytest.raises(CallFailed, match="401"):
        bad.chat("alpha", [{"role": "user", "content": "x"}])


def test_unreachable_server():
    client = LLMClient("http://127.0.0.1:9", max_retries=1, backoff_base=0.001, timeout=1)
    with pytest.raises(CallFailed, match="connection error"):
        client.chat("m", [{"role": "user", "content": "x"}])
    with pytest.raises(CallFailed):
        client.list_models()


def test_helpers():
    assert normalise_base_url("http://h:1/") == "http://h:1/v1"
    assert normalise_base_url("https://h/v1/") == "https://h/v1"
    with pytest.raises(ValueError):
        normalise_base_url("h:1")
    assert _retry_after_seconds("2.5") == 2.5
    assert _retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
    assert _retry_after_seconds("garbage") is None


def test_endpoint_has_no_credentials():
    client = LLMClient("https://user:secret@example.invalid/v1?key=abc")
    assert client.endpoint == "https://example.invalid/v1"
    assert client.base_url == "https://user:secret@example.invalid/v1?key=abc"


def test_minute_budget_waits_for_the_next_window_and_reconciles():
    from benchscore.common.llm import MinuteBudget

    now = [59.0]
    slept = []

    def sleep(s):
        slept.append(s)
        now[0] += s

    budget = MinuteBudget(100, clock=lambda: now[0], sleep=sleep)
    first = budget.reserve(80)
    assert first == (0, 80)
    second = budget.reserve(30)  # 110 > 100: waits 1 s for minute 1
    assert second == (1, 30) and slept == [1.0]
    budget.reconcile(first, 55)
    assert budget.windows == {0: 55, 1: 30}
    assert budget.reserve(500) == (2, 100)  # capped at one minute's budget, in the next free minute


def test_minute_budget_reads_the_clock_under_its_lock():
    """A reservation lands in the minute the clock says while the lock is held (issue 9, item 4's twin)."""
    from benchscore.common.llm import MinuteBudget

    ticks = iter([59.999, 60.5, 60.6, 60.7])
    budget = MinuteBudget(3000, clock=lambda: next(ticks), sleep=lambda s: None)
    assert budget.reserve(3000) == (0, 3000)
    assert budget.reserve(10) == (1, 10)


def test_connect_checks_the_model_is_listed_and_reads_the_key_from_the_environment(monkeypatch):
    from benchscore.common.errors import BadInput, ServiceUnavailable
    from benchscore.common.llm import connect
    from benchscore.common.testserver import OpenAITestServer

    monkeypatch.setenv("T_KEY", "sk-secret")
    with OpenAITestServer(models=["m1"], api_key="sk-secret") as srv:
        with connect(srv.base_url, "m1", api_key_env="T_KEY", role="judge") as client:
            assert client.chat("m1", [{"role": "user", "content": "hi"}]).record.status == "ok"
        with pytest.raises(BadInput, match="'m2' is not listed by"):
            connect(srv.base_url, "m2", api_key_env="T_KEY", role="judge")
    with pytest.raises(BadInput, match="base URL"):
        connect("ftp://x", "m1", api_key_env="T_KEY", role="judge")
    with pytest.raises(ServiceUnavailable, match="judge endpoint"):
        connect("http://127.0.0.1:9/v1", "m1", api_key_env="T_KEY", role="judge", max_retries=0, timeout=1)
