"""A local OpenAI-compatible chat completions server for tests and benchmarks.

It is a real HTTP server (stdlib ThreadingHTTPServer on 127.0.0.1), so the real
`openai` client reaches it through `base_url`: mocking libraries such as respx cannot
intercept openai 3.x, which sends requests through httpx2.
"""
from __future__ import annotations

import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

ReplyPolicy = Callable[[dict[str, Any]], str]
FaultKind = Literal["rate_limit", "server_error", "hang", "no_verdict"]

_SCORE_MARKER = re.compile(r"<score:(\d+)>")
ALWAYS_A_MARKER = "<always-A>"


def marker_policy(body: dict[str, Any]) -> str:
    """Judge by markers in the answers: higher `<score:N>` wins; `<always-A>` fakes position bias.

    The first score marker in the user message belongs to assistant A, the second to B,
    so the question and reference must not contain markers.
    """
    user_text = "\n".join(m.get("content", "") for m in body.get("messages", []) if m.get("role") == "user")
    if ALWAYS_A_MARKER in user_text:
        verdict = "A"
    else:
        scores = [int(s) for s in _SCORE_MARKER.findall(user_text)]
        if len(scores) < 2 or scores[0] == scores[1]:
            verdict = "C"
        else:
            verdict = "A" if scores[0] > scores[1] else "B"
    # An earlier decoy token checks that clients take the last verdict, not the first.
    return f"Both answers were compared with the reference; a tie would be [[C]].\nFinal verdict: [[{verdict}]]"


@dataclass(frozen=True)
class Fault:
    """One scripted misbehaviour, consumed by the next request that arrives."""

    kind: FaultKind
    status: int = 500
    retry_after: str | None = None
    retry_after_ms: int | None = None
    hang_s: float = 0.0

    @classmethod
    def rate_limit(cls, retry_after: str = "1") -> Fault:
        """Return a 429 with a Retry-After header (seconds)."""
        return cls("rate_limit", status=429, retry_after=retry_after)

    @classmethod
    def server_error(cls, status: int = 500, retry_after_ms: int | None = None) -> Fault:
        """Return a 5xx, optionally with a retry-after-ms header to keep tests fast."""
        return cls("server_error", status=status, retry_after_ms=retry_after_ms)

    @classmethod
    def hang(cls, seconds: float) -> Fault:
        """Return a request that stalls longer than the client's timeout."""
        return cls("hang", hang_s=seconds)

    @classmethod
    def no_verdict(cls) -> Fault:
        """Return a well-formed reply without any verdict token."""
        return cls("no_verdict")


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the stub saw it, with its arrival time (time.monotonic)."""

    received_at: float
    path: str
    body: dict[str, Any]
    authorization: str | None
    status: int


class StubOpenAIServer:
    """Serve POST /v1/chat/completions with scripted verdicts, latency and faults."""

    def __init__(
        self,
        *,
        policy: ReplyPolicy = marker_policy,
        latency_s: float = 0.0,
        usage: tuple[int, int] | None = None,
        faults: Iterable[Fault] = (),
    ) -> None:
        self.policy = policy
        self.latency_s = latency_s
        self.usage = usage  # fixed (prompt, completion) tokens; None: about 4 characters per token
        self.refuse_response_format = False  # answer 400 to a request with response_format, as some servers do
        self.redirect_to: str | None = None  # answer 307 to this base URL (a test that nothing follows it)
        self._faults: deque[Fault] = deque(faults)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._requests: list[RecordedRequest] = []
        self._active = 0
        self.max_active = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> StubOpenAIServer:
        """Start serving on a free port of 127.0.0.1."""
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        # A short poll interval makes stop() quick; the default would add 0.5 s per test.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-stub", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and cut short any request still hanging."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> StubOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """Return the URL to pass to the client as base_url."""
        assert self._server is not None, "start the stub first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    # -- scripting and inspection -------------------------------------------------------
    def add_faults(self, *faults: Fault) -> None:
        """Queue faults for the next requests, in arrival order."""
        with self._lock:
            self._faults.extend(faults)

    def clear_faults(self) -> None:
        """Drop faults not consumed yet."""
        with self._lock:
            self._faults.clear()

    @property
    def calls(self) -> int:
        """Return how many chat completion requests arrived (faulted ones included)."""
        with self._lock:
            return len(self._requests)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Return a snapshot of the request log."""
        with self._lock:
            return list(self._requests)

    # -- request handling (called from handler threads) ---------------------------------
    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _enter(self) -> None:
        with self._lock:
            self._active += 1
            self.max_active = max(self.max_active, self._active)

    def _leave(self) -> None:
        with self._lock:
            self._active -= 1

    def _completion(self, body: dict[str, Any], reply: str) -> dict[str, Any]:
        if self.usage is not None:
            prompt_tokens, completion_tokens = self.usage
        else:
            prompt_chars = sum(len(m.get("content", "")) for m in body.get("messages", []))
            prompt_tokens, completion_tokens = math.ceil(prompt_chars / 4), math.ceil(len(reply) / 4)
        with self._lock:
            serial = len(self._requests)
        return {
            "id": f"chatcmpl-stub-{serial}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "stub"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def _make_handler(stub: StubOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
        timeout = 10  # idle keep-alive connections end on their own
        # Headers and body go out in separate writes; with Nagle on, each reply
        # would wait ~40 ms for a delayed ACK.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            """Keep test output quiet."""

        def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (its timeout fired); nothing left to answer.
                self.close_connection = True

        def do_POST(self) -> None:  # noqa: N802 - stdlib naming
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            body = json.loads(raw or b"{}")
            if stub.redirect_to:
                stub._record(RecordedRequest(time.monotonic(), self.path, body, self.headers.get("Authorization"), 307))
                self.send_response(307)
                self.send_header("Location", stub.redirect_to.rstrip("/") + "/chat/completions")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if stub.refuse_response_format and "response_format" in body:
                stub._record(RecordedRequest(time.monotonic(), self.path, body, self.headers.get("Authorization"), 400))
                self._send_json(400, {"error": {"message": "response_format is not supported", "type": "invalid_request"}})
                return
            fault = stub._next_fault()
            status = fault.status if fault and fault.kind in ("rate_limit", "server_error") else 200
            stub._record(
                RecordedRequest(time.monotonic(), self.path, body, self.headers.get("Authorization"), status)
            )
            stub._enter()
            try:
                if stub.latency_s:
                    stub._stopping.wait(stub.latency_s)
                self._answer(body, fault)
            finally:
                stub._leave()

        def _answer(self, body: dict[str, Any], fault: Fault | None) -> None:
            if fault is not None and fault.kind in ("rate_limit", "server_error"):
                headers: dict[str, str] = {}
                if fault.retry_after is not None:
                    headers["Retry-After"] = fault.retry_after
                if fault.retry_after_ms is not None:
                    headers["retry-after-ms"] = str(fault.retry_after_ms)
                kind = "rate_limit_exceeded" if fault.kind == "rate_limit" else "server_error"
                self._send_json(fault.status, {"error": {"message": f"stub {kind}", "type": kind}}, headers)
                return
            if fault is not None and fault.kind == "hang":
                stub._stopping.wait(fault.hang_s)
            reply = "I cannot decide between these answers." if fault and fault.kind == "no_verdict" else stub.policy(body)
            self._send_json(200, stub._completion(body, reply))

    return Handler
