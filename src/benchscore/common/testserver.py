"""A local OpenAI-compatible server for tests and replay runs (127.0.0.1 only, never the network).

It serves ``GET /v1/models``, ``POST /v1/chat/completions`` and ``POST /v1/completions`` like NewAPI:
an unknown model is answered with HTTP 200 and ``{"error": {"code": "model_not_found"}}`` (or, with
``unknown_model="default"``, from the first model, as llama-cpp-python's server does; ``answer_as``
makes a listed model answer under another id). Tests script trouble with
:meth:`OpenAITestServer.fail_next` (429 or 5xx with ``retry-after``), :meth:`malformed_next`,
:meth:`missing_usage_next`, :meth:`delay_next` and :meth:`violate_schema_next`.

Structured answers: ``constraints`` lists the modes it enforces (``json_schema``,
``json_object_schema``, ``grammar``; see :data:`benchscore.common.llm.CONSTRAINT_MODES`); a request
under another mode is rejected with HTTP 500 (``unsupported_constraint="reject"``, as
llama-cpp-python answers ``json_schema``) or answered as free text (``"ignore"``, as a server that
drops unknown fields). An enforced answer is ``constrained_responder(model, messages, schema)``
(default: the first allowed value of every field); under a grammar, the sentence the grammar gives
with the first alternative of every group (:func:`first_sentence`).

``/v1/completions`` tokenises the prompt into whitespace-led words and gives each token the
log-probability ``token_logprob(model, text_before, token)`` (default -1.0; the first token none);
``completion_logprobs="none"`` answers without ``logprobs``, ``"reject"`` with HTTP 400;
``misaligned_echo`` shifts the echoed prompt log-probabilities by one token (what llama-cpp-python 0.3
does for a model without a BOS token). With ``grammar`` among ``constraints``, a completion under a
grammar generates :func:`first_sentence` of it (one token per whitespace-led word).

    with OpenAITestServer(models=["m1", "m2"], responder=lambda model, msgs: "pass") as srv:
        client = LLMClient(srv.base_url)

A judge with a known confusion matrix: :class:`ConfusionJudge` answers each packet (found by a text its
message holds) with its known verdict, except for exactly ``round((1 - sensitivity) x known passes)`` known
passes it fails and ``round((1 - specificity) x known fails)`` known fails it passes (chosen by a seeded
permutation), so a test knows the 2 x 2 table the judge will produce; ``responder=judge`` answers in free
text, ``constrained_responder=judge.constrained`` as ``{"verdict": ...}``.
"""

from __future__ import annotations

import re
import threading
from collections import deque
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson

Responder = Callable[[str, list[dict[str, Any]]], str]
ConstrainedResponder = Callable[[str, list[dict[str, Any]], dict[str, Any]], str]
TokenLogprob = Callable[[str, str, str], float]

_TOKEN = re.compile(r"\s*\S+|\s+$")


class ConfusionJudge:
    """A judge whose errors are known in advance (see the module docstring).

    ``known`` maps a text that appears in exactly one packet's message (its evidence, say) to that packet's
    known verdict. The judge's answer to each packet is fixed when it is built: ``answers`` (text -> the
    verdict it gives) and ``table`` ((known, given) -> count) say what it will answer. A message holding no
    known text, or several, is answered ``unknown`` (a judge_failed for the caller).
    """

    def __init__(self, known: dict[str, str], *, sensitivity: float = 1.0, specificity: float = 1.0,
                 seed: int = 0) -> None:
        import random

        if not (0.0 <= sensitivity <= 1.0 and 0.0 <= specificity <= 1.0):
            raise ValueError("sensitivity and specificity lie in [0, 1]")
        rng = random.Random(seed)
        self.known = dict(known)
        self.answers: dict[str, str] = {}
        for verdict, keep in (("pass", sensitivity), ("fail", specificity)):
            texts = sorted(t for t, v in self.known.items() if v == verdict)
            rng.shuffle(texts)
            flipped = round((1.0 - keep) * len(texts))
            other = "fail" if verdict == "pass" else "pass"
            for i, text in enumerate(texts):
                self.answers[text] = other if i < flipped else verdict
        self.table = {(k, g): sum(1 for t, v in self.known.items() if v == k and self.answers[t] == g)
                      for k in ("pass", "fail") for g in ("pass", "fail")}

    def verdict_for(self, messages: list[dict[str, Any]]) -> str:
        text = str(messages[-1].get("content", "")) if messages else ""
        hits = [t for t in self.known if t in text]
        return self.answers[hits[0]] if len(hits) == 1 else "unknown"

    def __call__(self, model: str, messages: list[dict[str, Any]]) -> str:
        return self.verdict_for(messages)

    def constrained(self, model: str, messages: list[dict[str, Any]], schema: dict[str, Any]) -> str:
        return orjson.dumps({"verdict": self.verdict_for(messages)}).decode()


def first_allowed(model: str, messages: list[dict[str, Any]], schema: dict[str, Any]) -> str:
    """The default enforced answer: every field's first allowed value, in canonical JSON."""
    return orjson.dumps({k: v["enum"][0] for k, v in schema["properties"].items()}).decode()


_GBNF = re.compile(r'"(?:[^"\\]|\\.)*"|[()|]')


def first_sentence(grammar: str) -> str | None:
    """The sentence a grammar of benchscore's form (``root ::= "lit" ("a" | "b") "lit" ...``) gives when
    every group takes its first alternative; None for any other grammar."""
    if not grammar.startswith("root ::= "):
        return None
    out, depth, taken = [], 0, False
    for tok in _GBNF.findall(grammar[len("root ::= "):]):
        if tok == "(":
            depth, taken = depth + 1, False
        elif tok == ")":
            depth -= 1
        elif tok == "|":
            continue
        elif depth == 0 or not taken:
            out.append(orjson.loads(tok))
            taken = depth > 0
    return "".join(out) if depth == 0 else None


def _schema_of(body: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """(constraint mode, schema) of a request; ("none", None) without one (a grammar carries no schema)."""
    rf = body.get("response_format")
    if isinstance(rf, dict) and rf.get("type") == "json_schema":
        return "json_schema", (rf.get("json_schema") or {}).get("schema")
    if isinstance(rf, dict) and rf.get("type") == "json_object":
        return "json_object_schema", rf.get("schema")
    if isinstance(body.get("grammar"), str):
        return "grammar", None
    return "none", None


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up early (a timeout test) is not an error worth a traceback on stderr."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):  # BrokenPipeError, ConnectionResetError, ...
            return
        super().handle_error(request, client_address)


def count_tokens(text: str) -> int:
    """The test server's token count: whitespace-separated words (deterministic, documented)."""
    return len(text.split())


class OpenAITestServer:
    def __init__(
        self,
        models: Sequence[str] = ("test-model",),
        responder: Responder | None = None,
        *,
        api_key: str | None = None,
        cost_per_token: float | None = None,
        constraints: Sequence[str] = (),
        unsupported_constraint: str = "ignore",
        constrained_responder: ConstrainedResponder | None = None,
        token_logprob: TokenLogprob | None = None,
        completion_logprobs: str = "yes",
        unknown_model: str = "error",
        answer_as: dict[str, str] | None = None,
        misaligned_echo: bool = False,
    ) -> None:
        if unsupported_constraint not in ("ignore", "reject"):
            raise ValueError("unsupported_constraint is 'ignore' or 'reject'")
        if completion_logprobs not in ("yes", "none", "reject"):
            raise ValueError("completion_logprobs is 'yes', 'none' or 'reject'")
        if unknown_model not in ("error", "default"):
            raise ValueError("unknown_model is 'error' or 'default'")
        self.models = list(models)
        self.responder: Responder = responder or (lambda model, messages: "ok")
        self.api_key = api_key
        self.cost_per_token = cost_per_token
        self.constraints = set(constraints)
        self.unsupported_constraint = unsupported_constraint
        self.constrained_responder: ConstrainedResponder = constrained_responder or first_allowed
        self.token_logprob: TokenLogprob = token_logprob or (lambda model, before, token: -1.0)
        self.completion_logprobs = completion_logprobs
        self.unknown_model = unknown_model
        self.answer_as = dict(answer_as or {})
        self.misaligned_echo = misaligned_echo
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._script: deque[tuple[str, Any]] = deque()
        self._violations: deque[str | None] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------------
    def fail_next(self, n: int = 1, *, status: int = 429, retry_after: float | str | None = 0.01) -> None:
        """The next ``n`` completions answer ``status`` (with a ``retry-after`` header when given)."""
        with self._lock:
            self._script.extend(("fail", (status, retry_after)) for _ in range(n))

    def malformed_next(self, n: int = 1) -> None:
        """The next ``n`` completions answer HTTP 200 with a body that is not JSON."""
        with self._lock:
            self._script.extend(("malformed", None) for _ in range(n))

    def missing_usage_next(self, n: int = 1) -> None:
        """The next ``n`` completions answer without a ``usage`` object."""
        with self._lock:
            self._script.extend(("no_usage", None) for _ in range(n))

    def delay_next(self, n: int = 1, *, seconds: float = 1.0) -> None:
        """The next ``n`` completions wait ``seconds`` before answering (to provoke client timeouts)."""
        with self._lock:
            self._script.extend(("delay", seconds) for _ in range(n))

    def violate_schema_next(self, n: int = 1, *, text: str = '{"verdict": "maybe"}', skip: int = 0) -> None:
        """After ``skip`` more, the next ``n`` enforced (constrained) answers are ``text``, whatever the schema says
        (other requests, free-text ones included, do not use them up)."""
        with self._lock:
            self._violations.extend([None] * skip + [text] * n)

    def _pop(self) -> tuple[str, Any] | None:
        with self._lock:
            return self._script.popleft() if self._script else None

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("server is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> OpenAITestServer:
        handler = _make_handler(self)
        self._server = _QuietServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="openai-test-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> OpenAITestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _make_handler(server: OpenAITestServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence the default log
            return

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def _authorised(self) -> bool:
            if server.api_key is None:
                return True
            if self.headers.get("Authorization") == f"Bearer {server.api_key}":
                return True
            self._send(401, orjson.dumps({"error": {"code": "invalid_api_key", "message": "bad key"}}))
            return False

        def do_GET(self) -> None:  # noqa: N802
            if not self._authorised():
                return
            if self.path.rstrip("/") != "/v1/models":
                self._send(404, orjson.dumps({"error": {"message": f"no route {self.path}"}}))
                return
            data = [{"id": m, "object": "model", "owned_by": "benchscore-test"} for m in server.models]
            self._send(200, orjson.dumps({"object": "list", "data": data}))

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            if not self._authorised():
                return
            route = self.path.rstrip("/")
            if route not in ("/v1/chat/completions", "/v1/completions"):
                self._send(404, orjson.dumps({"error": {"message": f"no route {self.path}"}}))
                return
            try:
                body = orjson.loads(raw)
            except orjson.JSONDecodeError:
                self._send(400, orjson.dumps({"error": {"message": "request body is not JSON"}}))
                return
            with server._lock:
                server.requests.append(body)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
            action = server._pop()
            if action is not None and action[0] == "delay":
                threading.Event().wait(action[1])
                action = None
            if action is not None and action[0] == "fail":
                status, retry_after = action[1]
                headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
                self._send(status, orjson.dumps({"error": {"message": f"scripted {status}"}}), headers)
                return
            if action is not None and action[0] == "malformed":
                self._send(200, b"{not json")
                return
            model = body.get("model")
            if model not in server.models:
                if server.unknown_model == "default" and server.models:
                    model = server.models[0]
                else:
                    self._send(200, orjson.dumps({"error": {"code": "model_not_found", "type": "new_api_error",
                                                            "message": f"model {model} not found"}}))
                    return
            answered_as = server.answer_as.get(model, model)
            if route == "/v1/completions":
                self._completion(body, model, answered_as, action)
                return
            messages = body.get("messages", [])
            mode, schema = _schema_of(body)
            if mode != "none" and mode not in server.constraints:
                if server.unsupported_constraint == "reject":
                    self._send(500, orjson.dumps({"error": {"message": f"unsupported constraint {mode}: "
                                                             "Input should be 'text' or 'json_object'"}}))
                    return
                mode = "none"
            with server._lock:
                violation = server._violations.popleft() if mode != "none" and server._violations else None
            if mode == "none":
                text = server.responder(model, messages)
            elif violation is not None:
                text = violation
            elif mode == "grammar":
                sentence = first_sentence(body["grammar"])
                if sentence is None:
                    self._send(400, orjson.dumps({"error": {"message": "a grammar this test server cannot read"}}))
                    return
                text = sentence
            else:
                text = server.constrained_responder(model, messages, schema or {"properties": {}})
            prompt_tokens = sum(count_tokens(str(m.get("content", ""))) for m in messages)
            answer: dict[str, Any] = {
                "id": f"chatcmpl-{len(server.requests)}",
                "object": "chat.completion",
                "model": answered_as,
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                ],
            }
            self._finish(answer, prompt_tokens, count_tokens(text), action)

        def _finish(self, answer: dict[str, Any], prompt_tokens: int, completion_tokens: int,
                    action: tuple[str, Any] | None) -> None:
            if action is None or action[0] != "no_usage":
                usage: dict[str, Any] = {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                }
                if server.cost_per_token is not None:
                    usage["cost"] = round(server.cost_per_token * usage["total_tokens"], 10)
                answer["usage"] = usage
            self._send(200, orjson.dumps(answer))

        def _completion(self, body: dict[str, Any], model: str, answered_as: str,
                        action: tuple[str, Any] | None) -> None:
            prompt = body.get("prompt")
            if not isinstance(prompt, str):
                self._send(400, orjson.dumps({"error": {"message": "prompt must be a string"}}))
                return
            wants = body.get("logprobs") is not None and bool(body.get("echo"))
            if wants and server.completion_logprobs == "reject":
                self._send(400, orjson.dumps({"error": {"message": "echo with logprobs is not supported"}}))
                return
            generated = " ok"
            if isinstance(body.get("grammar"), str):
                if "grammar" not in server.constraints and server.unsupported_constraint == "reject":
                    self._send(500, orjson.dumps({"error": {"message": "grammar is not supported"}}))
                    return
                if "grammar" in server.constraints:
                    generated = first_sentence(body["grammar"]) or generated
            echo = bool(body.get("echo"))
            text = (prompt + generated) if echo else generated
            choice: dict[str, Any] = {"index": 0, "text": text, "finish_reason": "length", "logprobs": None}
            if body.get("logprobs") is not None and server.completion_logprobs == "yes":
                prompt_tokens = [t for t in _TOKEN.findall(prompt) if t] if echo else []
                tokens = prompt_tokens + [t for t in _TOKEN.findall(generated) if t]
                full = prompt + generated
                pos = 0 if echo else len(prompt)
                offsets, logprobs = [], []
                for tok in tokens:
                    offsets.append(pos)
                    logprobs.append(float(server.token_logprob(model, full[:pos], tok)))
                    pos += len(tok)
                if echo and server.misaligned_echo:  # token i reported with token i+1's value
                    logprobs = logprobs[1:] + [-0.5]
                if echo:
                    logprobs[0] = None
                choice["logprobs"] = {"tokens": tokens, "token_logprobs": logprobs, "text_offset": offsets,
                                      "top_logprobs": None}
            answer = {"id": f"cmpl-{len(server.requests)}", "object": "text_completion", "model": answered_as,
                      "choices": [choice]}
            self._finish(answer, count_tokens(prompt), 1, action)

    return Handler
