"""A local OpenAI-compatible server for tests and replay runs (127.0.0.1 only, never the network).

It serves ``GET /v1/models`` and ``POST /v1/chat/completions`` like NewAPI: an unknown model is
answered with HTTP 200 and ``{"error": {"code": "model_not_found"}}``. Tests script trouble
with :meth:`OpenAITestServer.fail_next` (429 or 5xx with ``retry-after``), :meth:`malformed_next`,
:meth:`missing_usage_next` and :meth:`delay_next`.

    with OpenAITestServer(models=["m1", "m2"], responder=lambda model, msgs: "pass") as srv:
        client = LLMClient(srv.base_url)
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson

Responder = Callable[[str, list[dict[str, Any]]], str]


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
    ) -> None:
        self.models = list(models)
        self.responder: Responder = responder or (lambda model, messages: "ok")
        self.api_key = api_key
        self.cost_per_token = cost_per_token
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._script: deque[tuple[str, Any]] = deque()
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
            if self.path.rstrip("/") != "/v1/chat/completions":
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
                self._send(
                    200,
                    orjson.dumps(
                        {
                            "error": {
                                "code": "model_not_found",
                                "type": "new_api_error",
                                "message": f"model {model} not found",
                            }
                        }
                    ),
                )
                return
            messages = body.get("messages", [])
            text = server.responder(model, messages)
            prompt_tokens = sum(count_tokens(str(m.get("content", ""))) for m in messages)
            completion_tokens = count_tokens(text)
            answer: dict[str, Any] = {
                "id": f"chatcmpl-{len(server.requests)}",
                "object": "chat.completion",
                "model": model,
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                ],
            }
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

    return Handler
