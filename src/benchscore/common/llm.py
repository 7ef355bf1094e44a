"""The OpenAI-compatible client shared by the mira judge and the swarm's agents.

One :class:`LLMClient` talks to NewAPI, vLLM, Ollama, llama.cpp or any server that speaks
``GET /v1/models`` and ``POST /v1/chat/completions``. Every call, successful or not, yields a
:class:`CallRecord` (the model IO audit record): model, prompt sha256, tokens in and out,
latency, status, HTTP status, error, attempts and cost where the gateway reports it. The API
key is sent in the ``Authorization`` header only and never appears in a record or an error.

Behaviour worth knowing:

- 429 and 5xx answers, timeouts and connection errors are retried with exponential backoff;
  a ``retry-after`` header (seconds or an HTTP date) is honoured when present.
- NewAPI answers an unknown model with HTTP 200 and ``{"error": {"code": "model_not_found"}}``;
  that (and an HTTP 404 naming the model) becomes :class:`ModelNotFound` and is not retried.
- A token ``budget`` (any object with ``reserve(tokens)`` and ``reconcile(reservation, actual)``,
  such as the swarm's TPM ledger) is charged before the call and reconciled with ``usage`` after.
- A 200 answer that is not JSON, has no ``choices``, or (with ``require_usage``) no ``usage`` is a
  failed call with the reason recorded.
"""

from __future__ import annotations

import email.utils
import hashlib
import itertools
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

import httpx
import orjson
from pydantic import BaseModel, ConfigDict

from .backoff import backoff_delay

__all__ = [
    "CallFailed",
    "connect",
    "MinuteBudget",
    "CallRecord",
    "ChatResult",
    "LLMClient",
    "LLMError",
    "ModelNotFound",
    "TokenBudget",
    "normalise_base_url",
    "prompt_sha256",
]

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class TokenBudget(Protocol):
    def reserve(self, tokens: int) -> Any: ...

    def reconcile(self, reservation: Any, actual_tokens: int) -> None: ...


class MinuteBudget:
    """An in-process tokens-per-minute budget (threads of one process; the swarm's ``TPMBudget`` is the
    cross-process one). Windows are wall-clock minutes ``floor(t / 60)``; :meth:`reserve` takes the
    tokens from the current window, or sleeps until a window has room; :meth:`reconcile` replaces the
    reservation by the tokens the call really used. The clock is read under the lock.
    ``windows`` maps each minute to its tokens, for the run's report.
    """

    def __init__(self, tpm: int, *, clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if tpm < 1:
            raise ValueError(f"tpm must be >= 1, got {tpm}")
        self.tpm = tpm
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        self.windows: dict[int, int] = {}

    def reserve(self, tokens: int) -> tuple[int, int]:
        """Reserve ``tokens`` (at most ``tpm``) in the current or a later minute; returns (minute, tokens)."""
        tokens = min(int(tokens), self.tpm)  # a call larger than a minute's budget gets a whole minute
        while True:
            with self._lock:
                now = self._clock()
                minute = int(now // 60)
                if self.windows.get(minute, 0) + tokens <= self.tpm:
                    self.windows[minute] = self.windows.get(minute, 0) + tokens
                    return minute, tokens
                wait = (minute + 1) * 60 - now
            self._sleep(max(wait, 0.001))

    def reconcile(self, reservation: tuple[int, int], actual_tokens: int) -> None:
        minute, reserved = reservation
        with self._lock:
            self.windows[minute] = self.windows.get(minute, 0) - reserved + int(actual_tokens)


class CallRecord(BaseModel):
    """One model call as the audit sees it (no secrets, no prompt text: only its sha256)."""

    model_config = ConfigDict(extra="forbid")

    call_id: str
    endpoint: str
    model: str
    prompt_sha256: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    total_tokens: int | None = None
    reserved_tokens: int | None = None
    latency_s: float
    status: str  # "ok" | "failed"
    http_status: int | None = None
    error: str | None = None
    attempts: int
    cost: float | None = None
    started_at: str


class ChatResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str
    usage: dict[str, Any] | None
    record: CallRecord


class LLMError(Exception):
    """A model call that did not produce a usable answer; ``record`` says why."""

    def __init__(self, message: str, record: CallRecord | None = None) -> None:
        super().__init__(message)
        self.record = record


class ModelNotFound(LLMError):
    """The gateway does not serve the requested model."""


class CallFailed(LLMError):
    """The call failed after retries, or the answer was unusable."""


def normalise_base_url(base_url: str) -> str:
    """``http://host:port`` or ``http://host:port/v1`` -> ``http://host:port/v1`` (no trailing slash)."""
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"base URL must start with http:// or https://, got {base_url!r}")
    path = parts.path.rstrip("/")
    if not path.endswith("/v1"):
        path += "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _public_endpoint(url: str) -> str:
    """The URL without user info, query or fragment: safe to put in a report."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def prompt_sha256(messages: Sequence[dict[str, Any]]) -> str:
    """sha256 of the messages as canonical JSON (sorted keys): the prompt's identity in audits."""
    return hashlib.sha256(orjson.dumps(list(messages), option=orjson.OPT_SORT_KEYS)).hexdigest()


def _retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - datetime.now(tz=UTC)).total_seconds())


def estimate_tokens(messages: Sequence[dict[str, Any]], max_tokens: int | None) -> int:
    """A conservative pre-call estimate: ~1 token per 4 characters of prompt, plus the completion cap."""
    chars = sum(len(str(m.get("content", ""))) for m in messages)
    return chars // 4 + 8 * len(messages) + (max_tokens if max_tokens is not None else 512)


class LLMClient:
    """A small, honest OpenAI-compatible client (see the module docstring)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 4,
        budget: TokenBudget | None = None,
        on_record: Callable[[CallRecord], None] | None = None,
        require_usage: bool = True,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = normalise_base_url(base_url)
        self.endpoint = _public_endpoint(self.base_url)
        self._api_key = api_key
        self.max_retries = max_retries
        self.budget = budget
        self.on_record = on_record
        self.require_usage = require_usage
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self._sleep = sleep
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = httpx.Client(timeout=timeout, headers=headers, transport=transport)

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers ---------------------------------------------------------------------------
    def _scrub(self, text: str) -> str:
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text[:500]

    def _next_id(self) -> str:
        with self._lock:
            return f"call-{next(self._ids):06d}"

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.backoff_max)
        return backoff_delay(attempt, self.backoff_base, self.backoff_max)

    def _send(self, method: str, path: str, body: dict[str, Any] | None) -> tuple[httpx.Response | None, str | None, int]:
        """Send with retries; returns (last response or None, transport error or None, attempts)."""
        url = f"{self.base_url}{path}"
        attempt = 0
        while True:
            attempt += 1
            response: httpx.Response | None = None
            error: str | None = None
            try:
                if body is None:
                    response = self._http.request(method, url)
                else:
                    response = self._http.request(method, url, content=orjson.dumps(body),
                                                  headers={"Content-Type": "application/json"})
            except httpx.TimeoutException as exc:
                error = f"timeout: {type(exc).__name__}"
            except httpx.TransportError as exc:
                error = f"connection error: {type(exc).__name__}: {self._scrub(str(exc))}"
            retryable = error is not None or (response is not None and response.status_code in RETRYABLE_STATUS)
            if not retryable or attempt > self.max_retries:
                return response, error, attempt
            retry_after = _retry_after_seconds(response.headers.get("retry-after")) if response is not None else None
            self._sleep(self._backoff(attempt, retry_after))

    # -- API -------------------------------------------------------------------------------
    def list_models(self) -> list[str]:
        """Model ids the gateway serves (``GET /v1/models``), in the order it lists them."""
        response, error, _ = self._send("GET", "/models", None)
        if response is None:
            raise CallFailed(f"model discovery at {self.endpoint} failed: {error}")
        if response.status_code != 200:
            raise CallFailed(f"model discovery at {self.endpoint} answered HTTP {response.status_code}: "
                             f"{self._scrub(response.text)}")
        try:
            payload = orjson.loads(response.content)
            return [str(item["id"]) for item in payload["data"]]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            raise CallFailed(f"model discovery at {self.endpoint}: answer is not a model list") from None

    def chat(
        self,
        model: str,
        messages: Sequence[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        reserve_tokens: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> ChatResult:
        """One chat completion; returns the text and usage, or raises :class:`LLMError` with the record."""
        call_id = self._next_id()
        started = datetime.now(tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        psha = prompt_sha256(messages)
        reserved = reserve_tokens if reserve_tokens is not None else estimate_tokens(messages, max_tokens)
        reservation = self.budget.reserve(reserved) if self.budget is not None else None
        body: dict[str, Any] = {"model": model, "messages": list(messages), "temperature": temperature}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if extra:
            body.update(extra)
        t0 = time.perf_counter()
        response, transport_error, attempts = self._send("POST", "/chat/completions", body)
        latency = time.perf_counter() - t0

        def finish(status: str, *, error: str | None = None, usage: dict[str, Any] | None = None,
                   consumed: int = 0) -> CallRecord:
            usage = usage or {}
            record = CallRecord(
                call_id=call_id, endpoint=self.endpoint, model=model, prompt_sha256=psha,
                tokens_in=usage.get("prompt_tokens"), tokens_out=usage.get("completion_tokens"),
                total_tokens=usage.get("total_tokens"), reserved_tokens=reserved,
                latency_s=round(latency, 6), status=status,
                http_status=response.status_code if response is not None else None,
                error=self._scrub(error) if error else None, attempts=attempts,
                cost=usage.get("cost") if isinstance(usage.get("cost"), int | float) else None,
                started_at=started,
            )
            if self.budget is not None:
                self.budget.reconcile(reservation, consumed)
            if self.on_record is not None:
                self.on_record(record)
            return record

        if response is None:
            rec = finish("failed", error=transport_error)
            raise CallFailed(f"{model}: {rec.error}", rec)
        if response.status_code != 200:
            detail = self._scrub(response.text)
            rec = finish("failed", error=f"HTTP {response.status_code}: {detail}")
            if response.status_code == 404 and "model" in detail.lower():
                raise ModelNotFound(f"{model}: model not found at {self.endpoint}", rec)
            raise CallFailed(f"{model}: {rec.error}", rec)
        try:
            payload = orjson.loads(response.content)
        except orjson.JSONDecodeError:
            rec = finish("failed", error="malformed JSON in a 200 answer", consumed=reserved)
            raise CallFailed(f"{model}: {rec.error}", rec) from None
        if isinstance(payload, dict) and payload.get("error"):
            err = payload["error"]
            code = err.get("code") if isinstance(err, dict) else None
            message = err.get("message", "") if isinstance(err, dict) else str(err)
            rec = finish("failed", error=f"gateway error {code or ''}: {message}".strip())
            if code == "model_not_found":
                raise ModelNotFound(f"{model}: model not found at {self.endpoint}", rec)
            raise CallFailed(f"{model}: {rec.error}", rec)
        try:
            text = payload["choices"][0]["message"]["content"]
            if not isinstance(text, str):
                raise TypeError
        except (KeyError, IndexError, TypeError):
            rec = finish("failed", error="answer has no choices[0].message.content string", consumed=reserved)
            raise CallFailed(f"{model}: {rec.error}", rec) from None
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else None
        valid_usage = usage is not None and isinstance(usage.get("total_tokens"), int)
        if not valid_usage and self.require_usage:
            rec = finish("failed", error="answer has no usage.total_tokens", consumed=reserved)
            raise CallFailed(f"{model}: {rec.error}", rec)
        consumed = int(usage["total_tokens"]) if valid_usage else reserved
        rec = finish("ok", usage=usage, consumed=consumed)
        return ChatResult(text=text, usage=usage, record=rec)


def connect(base_url: str, model: str, *, api_key_env: str, role: str, **options: Any) -> LLMClient:
    """An :class:`LLMClient` for a command, after checking that ``GET /v1/models`` lists ``model``.

    The API key is read from the environment variable ``api_key_env`` (never from an argument). A base
    URL that is not http(s) or a model the endpoint does not list is :class:`BadInput`; an endpoint
    that does not answer is :class:`ServiceUnavailable` (``role`` names it in the message: "judge",
    "model").
    """
    import os

    from .errors import BadInput, ServiceUnavailable

    try:
        client = LLMClient(base_url, os.environ.get(api_key_env) or None, **options)
    except ValueError as exc:
        raise BadInput(str(exc), field="--base-url") from None
    try:
        served = client.list_models()
    except LLMError as exc:
        client.close()
        raise ServiceUnavailable(f"{role} endpoint: {exc}") from None
    if model not in served:
        client.close()
        raise BadInput(f"model {model!r} is not listed by {client.endpoint}/models; it lists: "
                       f"{', '.join(served) or 'nothing'}", field="--model")
    return client
