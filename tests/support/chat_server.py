"""A local HTTP server speaking the Chat Completions and Embeddings protocols, scripted
per request.

Tests start it on 127.0.0.1 (a free port), tell it what to do with each request
(delay, status, ``Retry-After``, empty or reasoning-only content, malformed JSON, a
hang, a reset connection, edited embedding data) and read back what arrived and when. It
runs on threads, so it keeps answering while the test's own event loop is blocked by a
synchronous call.

``POST /v1/embeddings`` answers with :func:`word_vector` of each input: a hashed bag of
words, so texts sharing words get similar vectors while the server sets no value a test
could simply read back.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import struct
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

import attrs

EmbeddingData = list[dict[str, Any]]
"""The ``data`` items of an embeddings answer: ``{"object", "index", "embedding"}``."""

WORD_DIMENSIONS = 64


def word_vector(text: str) -> list[float]:
    """Counts of ``text``'s lower-cased words, each hashed to one of 64 dimensions.

    Not normalised: the client must do that. A text without words is all zeros.
    """
    values = [0.0] * WORD_DIMENSIONS
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        values[int.from_bytes(digest[:4], "big") % WORD_DIMENSIONS] += 1.0
    return values


@attrs.frozen(kw_only=True)
class Reply:
    """What the server does with one request.

    ``edit_data`` rewrites an embeddings answer's ``data`` items before they are sent
    (drop one, shorten a vector, reorder them...).
    """

    content: str | None = "The user fixed it.\nSOURCES: 1"
    status: int = 200
    delay: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()
    raw: bytes | None = None
    hang: bool = False
    reset: bool = False
    reasoning: str | None = None
    prompt_tokens: int = 120
    completion_tokens: int = 12
    finish_reason: str = "stop"
    edit_data: Callable[[EmbeddingData], EmbeddingData] | None = None


@attrs.frozen(kw_only=True)
class Received:
    """One request as it arrived: its order, time (monotonic) and JSON body."""

    index: int
    at: float
    body: dict[str, Any]

    @property
    def prompt(self) -> str:
        """All message contents of the request, joined."""
        return "\n".join(str(m.get("content", "")) for m in self.body.get("messages", []))

    @property
    def inputs(self) -> list[str]:
        """The texts of an embeddings request."""
        given = self.body.get("input", [])
        return [given] if isinstance(given, str) else [str(text) for text in given]


Script = Callable[[Received], Reply]


def replies(*scripted: Reply, then: Reply | None = None) -> Script:
    """Answer the n-th request with the n-th reply, later ones with ``then``."""
    rest = then or Reply()
    return lambda received: scripted[received.index] if received.index < len(
        scripted) else rest


def _completion(reply: Reply, body: dict[str, Any]) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    return json.dumps({
        "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model", "test-model"),
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        "usage": {"prompt_tokens": reply.prompt_tokens,
                  "completion_tokens": reply.completion_tokens,
                  "total_tokens": reply.prompt_tokens + reply.completion_tokens},
    }).encode()


def _embeddings(reply: Reply, received: Received) -> bytes:
    data: EmbeddingData = [{"object": "embedding", "index": i, "embedding": word_vector(text)}
                           for i, text in enumerate(received.inputs)]
    if reply.edit_data is not None:
        data = reply.edit_data(data)
    words = sum(len(text.split()) for text in received.inputs)
    return json.dumps({
        "object": "list", "data": data, "model": received.body.get("model", "test-embedder"),
        "usage": {"prompt_tokens": words, "total_tokens": words},
    }).encode()


class ChatServer:
    """The scripted server; use it as a context manager (it starts and stops itself)."""

    def __init__(self, script: Script | None = None) -> None:
        """Answer every request as ``script`` says (default: a short recap)."""
        self.script: Script = script or (lambda _r: Reply())
        self.received: list[Received] = []
        self.peak_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._started = time.monotonic()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        name="chat-server", daemon=True)

    @property
    def url(self) -> str:
        """The base URL to give an OpenAI client (ends in ``/v1``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def started(self) -> float:
        """When the server was made (``time.monotonic()``), the zero of :meth:`times`."""
        return self._started

    def times(self) -> list[float]:
        """Arrival times of all requests, in seconds since the server started."""
        with self._lock:
            return [r.at - self._started for r in self.received]

    def start(self) -> Self:
        """Start serving on a thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release hanging requests and stop serving."""
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        """Start the server."""
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        """Stop the server."""
        self.stop()

    def _arrive(self, body: dict[str, Any]) -> Received:
        with self._lock:
            received = Received(index=len(self.received), at=time.monotonic(), body=body)
            self.received.append(received)
            self._in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
            return received

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                """Keep test output quiet."""

            def do_POST(self) -> None:
                """Answer a chat completion or an embeddings request as scripted."""
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                embedding = self.path.endswith("/embeddings")
                if not (embedding or self.path.endswith("/chat/completions")):
                    self._send(404, b'{"error": {"message": "not found"}}', ())
                    return
                received = server._arrive(body)
                left = False
                try:
                    reply = server.script(received)
                    if reply.hang:
                        server._stopping.wait(60)
                        return
                    if reply.reset:
                        # Linger 0: closing sends a TCP reset instead of an orderly end.
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                                   struct.pack("ii", 1, 0))
                        self.connection.close()
                        self.close_connection = True
                        return
                    if reply.delay and server._stopping.wait(reply.delay):
                        return
                    if reply.status != 200:
                        payload = reply.raw or json.dumps({"error": {
                            "message": f"scripted status {reply.status}",
                            "type": "test_error"}}).encode()
                    elif reply.raw is not None:
                        payload = reply.raw
                    elif embedding:
                        payload = _embeddings(reply, received)
                    else:
                        payload = _completion(reply, body)
                    # Out of flight before the answer leaves: the client may send its next
                    # request as soon as it has read this one, before this thread goes on.
                    server._leave()
                    left = True
                    self._send(reply.status, payload, reply.headers)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout under test)
                finally:
                    if not left:
                        server._leave()

            def _send(self, status: int, payload: bytes,
                      headers: tuple[tuple[str, str], ...]) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

        return Handler
