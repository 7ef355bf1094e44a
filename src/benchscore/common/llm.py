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
- The ``model`` an answer names must be the model asked for (:func:`same_model`); some servers
  (llama-cpp-python's with a ``models`` list) answer an unknown model id from their default model
  with HTTP 200: a mismatch is :class:`ModelMismatch`, a failed call, never an answer.
- Structured answers (:class:`AnswerFormat`): :meth:`LLMClient.constraint_for` probes once per model
  what the endpoint enforces, in the order of :data:`CONSTRAINT_MODES` (OpenAI ``response_format``
  ``json_schema``; llama-cpp-python's ``json_object`` + ``schema``; a llama.cpp GBNF ``grammar``):
  a mode counts only when the probe's answer obeys a schema that no free answer would (a server that
  ignores the field is not enforcing it). ``chat(..., answer_format=...)`` sends the answer's schema
  under that mode, or nothing (``none``: free text) when no mode is enforced. Every
  :class:`CallRecord` names the ``constraint`` its answer was produced under. An answer is never
  repaired: :meth:`AnswerFormat.read` accepts exactly a JSON text the schema allows, or nothing.
- Log-likelihoods (:meth:`LLMClient.loglikelihoods`): ``POST /v1/completions`` with ``echo`` and
  ``logprobs``, the sum of the log-probabilities of each continuation's tokens after the context,
  once :meth:`LLMClient.logprobs_method` has checked that the endpoint's prompt log-probabilities are
  aligned with their tokens (else the continuation is generated under a grammar that forces it, and
  its tokens' log-probabilities are summed); an endpoint that can do neither is refused
  (:class:`NoPromptLogprobs`).
"""

from __future__ import annotations

import email.utils
import hashlib
import itertools
import math
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
    "AnswerFormat",
    "CONSTRAINT_MODES",
    "CallFailed",
    "ConstraintProbe",
    "ContinuationScore",
    "ModelMismatch",
    "NoPromptLogprobs",
    "same_model",
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
    #: what the answer was produced under: json_schema | json_object_schema | grammar | none (free text)
    constraint: str = "none"
    #: the model id the answer named (None when it named none)
    answered_model: str | None = None
    #: why the call was made when not for an answer: constraint-probe, logprobs-probe
    purpose: str | None = None


class ChatResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str
    usage: dict[str, Any] | None
    record: CallRecord
    #: the constraint the answer was produced under (``none``: free text)
    constraint: str = "none"


class LLMError(Exception):
    """A model call that did not produce a usable answer; ``record`` says why."""

    def __init__(self, message: str, record: CallRecord | None = None) -> None:
        super().__init__(message)
        self.record = record


class ModelNotFound(LLMError):
    """The gateway does not serve the requested model."""


class CallFailed(LLMError):
    """The call failed after retries, or the answer was unusable."""


class ModelMismatch(LLMError):
    """The answer came from another model than the one asked for (see :func:`same_model`)."""


class NoPromptLogprobs(LLMError):
    """The endpoint cannot return the log-probabilities of the prompt's tokens."""


def same_model(asked: str, answered: str | None) -> bool:
    """Whether an answer naming ``answered`` comes from the model ``asked`` for.

    The same id, or the asked id followed by ``-`` and more (a dated snapshot: ``gpt-4o`` answered as
    ``gpt-4o-2024-08-06``), or no id at all (nothing to check). Anything else is a mismatch: e.g.
    llama-cpp-python's server answering ``gemma-3-270m`` to a request for ``qwen-coder``.
    """
    if answered is None:
        return True
    return answered == asked or answered.startswith(asked + "-")


# -- structured answers ----------------------------------------------------------------------------

#: the constraints a probe tries, in order: (mode, how the schema is sent)
CONSTRAINT_MODES = ("json_schema", "json_object_schema", "grammar")


def _gbnf_literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class AnswerFormat:
    """The one shape an answer may have: a JSON object with fixed keys, each value one of a fixed list.

    ``fields`` maps each key to its allowed values (strings, integers or finite numbers). The JSON
    schema (:attr:`schema`) and the GBNF grammar (:attr:`grammar`) say the same thing; the grammar
    writes the canonical form ``{"key": value, ...}`` (keys in order, one space after each colon and
    comma). :meth:`read` is the only reader: a JSON object with exactly the keys, each value in its
    list, else None. Nothing is repaired: no code fence, no prose, no coercion of ``"2"`` into ``2``.
    """

    def __init__(self, name: str, fields: dict[str, Sequence[Any]]) -> None:
        if not fields:
            raise ValueError("an answer format needs at least one field")
        for key, values in fields.items():
            if not values:
                raise ValueError(f"field {key!r} allows no value")
            for v in values:
                if isinstance(v, bool) or not isinstance(v, str | int | float):
                    raise ValueError(f"field {key!r}: values must be strings or numbers, got {v!r}")
        self.name = name
        self.fields = {k: list(v) for k, v in fields.items()}

    @property
    def schema(self) -> dict[str, Any]:
        props = {}
        for key, values in self.fields.items():
            kind = "string" if all(isinstance(v, str) for v in values) else (
                "integer" if all(isinstance(v, int) for v in values) else "number")
            props[key] = {"type": kind, "enum": list(values)}
        return {"type": "object", "properties": props, "required": list(self.fields), "additionalProperties": False}

    @staticmethod
    def _literal(value: Any) -> str:
        return orjson.dumps(value).decode()

    @property
    def grammar(self) -> str:
        parts = []
        for i, (key, values) in enumerate(self.fields.items()):
            sep = "" if i == 0 else ", "
            alts = " | ".join(_gbnf_literal(self._literal(v)) for v in values)
            parts.append(f'{_gbnf_literal(sep + self._literal(key) + ": ")} ({alts})')
        return f'root ::= "{{" {" ".join(parts)} "}}"'

    @property
    def max_tokens(self) -> int:
        """A completion cap that always fits the longest allowed answer (a token is at least one character),
        with room for the whitespace a JSON-schema grammar may allow between tokens."""
        longest = 2 + sum(len(self._literal(k)) + 4 + max(len(self._literal(v)) for v in vals)
                          for k, vals in self.fields.items())
        return longest + 2 * len(self.fields) + 8

    def request(self, mode: str) -> dict[str, Any]:
        """The request fields that ask for this format under ``mode`` (empty for ``none``)."""
        if mode == "json_schema":
            return {"response_format": {"type": "json_schema",
                                        "json_schema": {"name": self.name, "schema": self.schema, "strict": True}}}
        if mode == "json_object_schema":
            return {"response_format": {"type": "json_object", "schema": self.schema}}
        if mode == "grammar":
            return {"grammar": self.grammar}
        if mode == "none":
            return {}
        raise ValueError(f"unknown constraint mode {mode!r}")

    def read(self, text: str) -> dict[str, Any] | None:
        """The answer as a dict when ``text`` is exactly one JSON object of this format, else None."""
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(value, dict) or set(value) != set(self.fields):
            return None
        import json

        try:  # orjson keeps the last of two equal keys: a duplicate key is not this format either
            json.loads(text, object_pairs_hook=_no_duplicates)
        except ValueError:
            return None
        for key, allowed in self.fields.items():
            if not any(_allowed(value[key], a) for a in allowed):
                return None
        return value


def _allowed(value: Any, allowed: Any) -> bool:
    """``value`` is ``allowed``: the same string; the same integer (``2.0`` is not ``2``, ``true`` is no
    number); for a number, any JSON number equal to it."""
    if isinstance(value, bool):
        return False
    if isinstance(allowed, str):
        return isinstance(value, str) and value == allowed
    if isinstance(allowed, int):
        return isinstance(value, int) and value == allowed
    return isinstance(value, int | float) and value == allowed


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key")
    return dict(pairs)


#: the probe's format: a value no model writes unasked (it is asked to say "hello")
PROBE_FORMAT = AnswerFormat("benchscore_probe", {"probe": ["benchscore-constraint-probe"]})
PROBE_MESSAGES: tuple[dict[str, str], ...] = ({"role": "user", "content": "Reply with the single word hello."},)


class ConstraintProbe(BaseModel):
    """What :meth:`LLMClient.constraint_for` found for one model: the mode used (``none``: free text)
    and every mode tried, with what happened (``enforced``, ``rejected: HTTP 500 ...``, ``ignored: ...``)."""

    model_config = ConfigDict(extra="forbid")

    model: str
    mode: str
    tried: list[dict[str, str]]
    #: the probe calls' latencies added up (seconds)
    latency_s: float = 0.0


def probe_refusal(record: CallRecord) -> bool:
    """Whether ``record`` is a constraint probe the endpoint refused (an HTTP answer, e.g. a 500 for an
    unsupported ``json_schema``): a finding about the endpoint, which :meth:`LLMClient.constraint_for`
    reads to choose the next mode, not a failed call."""
    return record.purpose == "constraint-probe" and record.status != "ok" and record.http_status is not None


class ContinuationScore(BaseModel):
    """The log-likelihood of one continuation after a context (:meth:`LLMClient.loglikelihoods`)."""

    model_config = ConfigDict(extra="forbid")

    continuation: str
    loglikelihood: float | None
    tokens: int
    straddles_context: bool = False
    #: echo (prompt log-probabilities) or forced (the continuation generated under a grammar)
    method: str = "echo"
    record: CallRecord


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
        self._probe_lock = threading.Lock()
        self._constraints: dict[str, ConstraintProbe] = {}
        self._logprobs_method: dict[str, str] = {}
        #: every model call this client started (answers and probes): the audit holds one record for each
        self.calls_issued = 0
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
            self.calls_issued += 1
            return f"call-{next(self._ids):06d}"

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.backoff_max)
        return backoff_delay(attempt, self.backoff_base, self.backoff_max)

    def _send(self, method: str, path: str, body: dict[str, Any] | None,
              retry_status: frozenset[int] = RETRYABLE_STATUS) -> tuple[httpx.Response | None, str | None, int]:
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
            retryable = error is not None or (response is not None and response.status_code in retry_status)
            if not retryable or attempt > self.max_retries:
                return response, error, attempt
            retry_after = _retry_after_seconds(response.headers.get("retry-after")) if response is not None else None
            self._sleep(self._backoff(attempt, retry_after))

    def _post(self, path: str, model: str, body: dict[str, Any], *, psha: str, reserved: int, constraint: str,
              purpose: str | None, extract: Callable[[dict[str, Any]], Any],
              retry_status: frozenset[int] = RETRYABLE_STATUS) -> tuple[Any, dict[str, Any] | None, CallRecord]:
        """One audited POST: (what ``extract`` takes from the answer, usage, record), or an :class:`LLMError`."""
        call_id = self._next_id()
        started = datetime.now(tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        reservation = self.budget.reserve(reserved) if self.budget is not None else None
        t0 = time.perf_counter()
        response, transport_error, attempts = self._send("POST", path, body, retry_status)
        latency = time.perf_counter() - t0
        answered: list[str | None] = [None]

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
                started_at=started, constraint=constraint, answered_model=answered[0], purpose=purpose,
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
        if not isinstance(payload, dict):
            rec = finish("failed", error="a 200 answer that is not a JSON object", consumed=reserved)
            raise CallFailed(f"{model}: {rec.error}", rec)
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else None
        valid_usage = usage is not None and isinstance(usage.get("total_tokens"), int)
        consumed = int(usage["total_tokens"]) if valid_usage and usage is not None else reserved
        answered[0] = payload["model"] if isinstance(payload.get("model"), str) else None
        if not same_model(model, answered[0]):
            rec = finish("failed", error=f"the answer came from model {answered[0]!r}, not {model!r}: refused",
                         usage=usage, consumed=consumed)
            raise ModelMismatch(f"{model}: {rec.error}", rec)
        try:
            value = extract(payload)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            rec = finish("failed", error=f"answer has no {exc.args[0] if exc.args else 'usable content'}",
                         consumed=reserved)
            raise CallFailed(f"{model}: {rec.error}", rec) from None
        if not valid_usage and self.require_usage:
            rec = finish("failed", error="answer has no usage.total_tokens", consumed=reserved)
            raise CallFailed(f"{model}: {rec.error}", rec)
        rec = finish("ok", usage=usage, consumed=consumed)
        return value, usage, rec

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
        answer_format: AnswerFormat | None = None,
        constraint: str | None = None,
        purpose: str | None = None,
    ) -> ChatResult:
        """One chat completion; returns the text and usage, or raises :class:`LLMError` with the record.

        With ``answer_format``, the answer is asked for under ``constraint`` (default: the mode
        :meth:`constraint_for` found for ``model``; ``none`` sends no constraint) and the record names it.
        The text is returned as the model wrote it: reading it is :meth:`AnswerFormat.read`'s job."""
        mode = "none" if answer_format is None else None
        if constraint is not None:
            mode = constraint  # also the label of a probe call, whose constraint fields come in ``extra``
        elif mode is None:
            mode = self.constraint_for(model).mode
        body: dict[str, Any] = {"model": model, "messages": list(messages), "temperature": temperature}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if extra:
            body.update(extra)
        if answer_format is not None:
            body.update(answer_format.request(mode))
        reserved = reserve_tokens if reserve_tokens is not None else estimate_tokens(messages, max_tokens)

        def text_of(payload: dict[str, Any]) -> str:
            try:
                text = payload["choices"][0]["message"]["content"]
            except (KeyError, IndexError, TypeError):
                raise KeyError("choices[0].message.content string") from None
            if not isinstance(text, str):
                raise TypeError("choices[0].message.content string")
            return text

        retry = _PROBE_RETRY if purpose == "constraint-probe" else RETRYABLE_STATUS
        text, usage, rec = self._post("/chat/completions", model, body, psha=prompt_sha256(messages),
                                      reserved=reserved, constraint=mode, purpose=purpose, extract=text_of,
                                      retry_status=retry)
        return ChatResult(text=text, usage=usage, record=rec, constraint=mode)

    @property
    def constraint_probes(self) -> list[ConstraintProbe]:
        """What :meth:`constraint_for` found for every model probed so far, in the order probed."""
        with self._probe_lock:
            return list(self._constraints.values())

    def constraint_for(self, model: str) -> ConstraintProbe:
        """How ``model`` at this endpoint enforces an answer's schema, probed once (then cached).

        Each mode of :data:`CONSTRAINT_MODES` is tried in order with :data:`PROBE_FORMAT` (a JSON value the
        probe's prompt does not ask for): the first whose answer is exactly that value is the mode; a mode the
        endpoint rejects (an HTTP error other than 408/425/429/502-504, which are retried) or ignores (the
        answer is free text) is skipped; none: ``none`` (free text). Every probe call is audited
        (``purpose`` ``constraint-probe``). A model the endpoint does not serve, or answers as another model,
        raises; an endpoint that does not answer at all raises :class:`CallFailed`."""
        with self._probe_lock:
            known = self._constraints.get(model)
            if known is not None:
                return known
            tried: list[dict[str, str]] = []
            chosen = "none"
            spent = 0.0
            for mode in CONSTRAINT_MODES:
                try:
                    r = self.chat(model, PROBE_MESSAGES, max_tokens=PROBE_FORMAT.max_tokens,
                                  extra=PROBE_FORMAT.request(mode), purpose="constraint-probe", constraint=mode)
                except (ModelNotFound, ModelMismatch):
                    raise
                except CallFailed as exc:
                    if exc.record is None or exc.record.http_status is None:
                        raise CallFailed(f"{model}: the constraint probe could not reach {self.endpoint}: {exc}",
                                         exc.record) from None
                    tried.append({"mode": mode, "outcome": f"rejected: {exc.record.error}"[:200]})
                    spent += exc.record.latency_s
                    continue
                spent += r.record.latency_s
                if PROBE_FORMAT.read(r.text) is not None:
                    tried.append({"mode": mode, "outcome": "enforced"})
                    chosen = mode
                    break
                tried.append({"mode": mode, "outcome": "ignored: answered " + repr(r.text[:80])})
            probe = ConstraintProbe(model=model, mode=chosen, tried=tried, latency_s=round(spent, 6))
            self._constraints[model] = probe
            return probe

    def completion(self, model: str, prompt: str, *, max_tokens: int = 1, echo: bool = False,
                   logprobs: int | None = None, temperature: float = 0.0, grammar: str | None = None,
                   purpose: str | None = None) -> tuple[dict[str, Any], CallRecord]:
        """One ``POST /v1/completions``; returns ``choices[0]`` and the record (raises :class:`LLMError`)."""
        body: dict[str, Any] = {"model": model, "prompt": prompt, "max_tokens": max_tokens,
                                "temperature": temperature, "echo": echo}
        if logprobs is not None:
            body["logprobs"] = logprobs
        if grammar is not None:
            body["grammar"] = grammar

        def choice(payload: dict[str, Any]) -> dict[str, Any]:
            try:
                first = payload["choices"][0]
            except (KeyError, IndexError, TypeError):
                raise KeyError("choices[0]") from None
            if not isinstance(first, dict):
                raise TypeError("choices[0] object")
            return first

        reserved = len(prompt) // 4 + 8 + max_tokens
        value, _, rec = self._post("/completions", model, body, psha=prompt_sha256([{"prompt": prompt}]),
                                   reserved=reserved, constraint="grammar" if grammar else "none", purpose=purpose,
                                   extract=choice)
        return value, rec

    def logprobs_method(self, model: str) -> str:
        """How this endpoint gives ``log P(continuation | context)`` for ``model``, checked once:

        ``echo``: ``/completions`` with ``echo`` returns every prompt token's log-probability, and the one it
        gives the second token of a probe equals the log-probability the same endpoint reports when it
        generates that token (so the prompt's log-probabilities are aligned with their tokens);
        ``forced``: echo is missing or misaligned (llama-cpp-python 0.3 shifts them by one token for a model
        without a BOS token), but the endpoint generates under a GBNF ``grammar`` (a probe forces a word the
        model would not write, `` zebra``, and gets it back with a log-probability per token): the continuation
        is generated under a grammar that allows only it, and its tokens' log-probabilities (llama.cpp's: the
        model's own, before the grammar masks the others) are summed. Neither:
        :class:`NoPromptLogprobs`. The probe calls are audited (``purpose`` ``logprobs-probe``)."""
        known = self._logprobs_method.get(model)
        if known is not None:
            return known
        context = "One, two, three, four, five,"
        try:
            gen, _ = self.completion(model, context, max_tokens=1, logprobs=1, purpose="logprobs-probe")
        except (ModelNotFound, ModelMismatch):
            raise
        except CallFailed as exc:
            raise NoPromptLogprobs(f"{self.endpoint} cannot return log-probabilities for {model} (POST /completions "
                                   f"with logprobs: {exc.record.error if exc.record else exc})", exc.record) from None
        g = _prompt_logprobs(gen)
        if g is None or not g[0] or g[1][0] is None:
            raise NoPromptLogprobs(f"{self.endpoint} returns no log-probabilities for {model} "
                                   "(POST /completions with logprobs answered without logprobs.token_logprobs)")
        token, expected = g[0][0], float(g[1][0])
        method = None
        try:
            echoed, _ = self.completion(model, context + token, max_tokens=1, echo=True, logprobs=1,
                                        purpose="logprobs-probe")
            e = _prompt_logprobs(echoed)
        except CallFailed:
            e = None
        if e is not None:
            at = [i for i, off in enumerate(e[2]) if off == len(context) and e[0][i] == token]
            if at and e[1][at[0]] is not None and abs(float(e[1][at[0]]) - expected) <= 1e-3 + 1e-3 * abs(expected):
                method = "echo"
        if method is None:  # a continuation the model would not write unforced: it comes back only under the grammar
            target = " zebra" if token.strip() != "zebra" else " seven"
            try:
                forced, _ = self.completion(model, context, max_tokens=len(target) + 2, logprobs=1,
                                            grammar="root ::= " + _gbnf_literal(target), purpose="logprobs-probe")
                f = _prompt_logprobs(forced)
            except CallFailed:
                f = None
            if f is not None and "".join(f[0]) == target and all(lp is not None for lp in f[1]):
                method = "forced"
        if method is None:
            raise NoPromptLogprobs(f"{self.endpoint} cannot score a continuation for {model}: its prompt "
                                   "log-probabilities (echo) are missing or misaligned with their tokens, and it does not "
                                   "generate under a grammar with log-probabilities")
        self._logprobs_method[model] = method
        return method

    def check_prompt_logprobs(self, model: str) -> str:
        """:meth:`logprobs_method` (kept as the name a caller checks with)."""
        return self.logprobs_method(model)

    def loglikelihoods(self, model: str, context: str, continuations: Sequence[str]) -> list[ContinuationScore]:
        """``log P(continuation | context)`` for each continuation, as lm-evaluation-harness scores a base model.

        One ``/completions`` call per continuation. ``echo`` (see :meth:`logprobs_method`): prompt
        ``context + continuation``, the sum of ``token_logprobs`` of the tokens that start at or after
        ``len(context)`` (character offsets, ``text_offset``); a token that starts before the boundary and
        ends after it counts too and the score says so (``straddles_context``). ``forced``: prompt ``context``,
        a grammar that allows only the continuation, the sum of the generated tokens' log-probabilities.
        A call that fails raises :class:`LLMError`; an answer without usable logprobs is a :class:`CallFailed`."""
        method = self.logprobs_method(model)
        out = []
        boundary = len(context)
        for cont in continuations:
            if method == "forced":
                choice, rec = self.completion(model, context, max_tokens=len(cont) + 4, logprobs=1,
                                              grammar="root ::= " + _gbnf_literal(cont))
                parsed = _prompt_logprobs(choice)
                if parsed is None or "".join(parsed[0]) != cont or any(lp is None for lp in parsed[1]):
                    raise CallFailed(f"{model}: the forced continuation came back as "
                                     f"{''.join(parsed[0]) if parsed else 'no tokens'!r}, not {cont!r}", rec)
                total = math.fsum(float(lp) for lp in parsed[1] if lp is not None)
                out.append(ContinuationScore(continuation=cont, loglikelihood=total, tokens=len(parsed[0]),
                                             method=method, record=rec))
                continue
            choice, rec = self.completion(model, context + cont, echo=True, logprobs=1)
            parsed = _prompt_logprobs(choice)
            if parsed is None:
                raise CallFailed(f"{model}: the answer has no logprobs.tokens/token_logprobs/text_offset", rec)
            tokens, logprobs, offsets = parsed
            total, count, straddles = 0.0, 0, False
            for i, (tok, lp, off) in enumerate(zip(tokens, logprobs, offsets, strict=True)):
                end = offsets[i + 1] if i + 1 < len(offsets) else off + len(tok)
                if off >= boundary + len(cont):
                    break  # the token generated after the prompt (max_tokens 1)
                if off >= boundary or end > boundary:
                    if lp is None:
                        raise CallFailed(f"{model}: no log-probability for the continuation token {tok!r}", rec)
                    straddles = straddles or off < boundary
                    total += float(lp)
                    count += 1
            out.append(ContinuationScore(continuation=cont, loglikelihood=total if count else None, tokens=count,
                                         straddles_context=straddles, method=method, record=rec))
        return out


#: the constraint probe retries only what says "try again" (a 500 is how llama-cpp-python rejects a field)
_PROBE_RETRY = frozenset({408, 425, 429, 502, 503, 504})


def _prompt_logprobs(choice: dict[str, Any]) -> tuple[list[str], list[float | None], list[int]] | None:
    """(tokens, token_logprobs, text_offset) of a completions choice, or None when they are not there."""
    lp = choice.get("logprobs")
    if not isinstance(lp, dict):
        return None
    tokens, logprobs, offsets = lp.get("tokens"), lp.get("token_logprobs"), lp.get("text_offset")
    if not (isinstance(tokens, list) and isinstance(logprobs, list) and isinstance(offsets, list)):
        return None
    if not tokens or not (len(tokens) == len(logprobs) == len(offsets)):
        return None
    if not all(isinstance(o, int) for o in offsets) or not all(isinstance(t, str) for t in tokens):
        return None
    if not all(x is None or (isinstance(x, int | float) and math.isfinite(x)) for x in logprobs):
        return None
    return tokens, logprobs, offsets


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
