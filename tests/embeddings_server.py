"""A small, real OpenAI-compatible embeddings server for tests and benchmarks.

It serves the bundled USE model (``knowledge.embedding.UseEmbedder``) at ``POST
/v1/embeddings`` in the OpenAI shape, and can be told to fail: answer the next requests with an
HTTP status (503, 429 with Retry-After...), go down after N more requests (connection refused,
as a stopped server), answer slowly (``delay`` seconds before each answer), or serve vectors of
another dimension (a model swapped under the same name). Standard library only, besides the model.

    with EmbeddingsTestServer() as server:
        embedder = OpenAIEmbedder(server.base_url, "use", batch_size=8)
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        owner = self.server.owner
        if owner.down:
            # Stopped: the listening socket is closing; this connection is dropped unanswered.
            self.close_connection = True
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        texts = body.get("input") or []
        texts = [texts] if isinstance(texts, str) else list(texts)
        owner.record(body, self.headers.get("Authorization", ""))
        if owner.delay:
            time.sleep(owner.delay)
        if self.path.rstrip("/") != "/v1/embeddings":
            return self._send(404, {"error": {"message": "not found"}})
        failure = owner.next_failure()
        if failure is not None:
            status, retry_after = failure
            headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
            return self._send(status, {"error": {"message": "scripted failure"}}, headers)
        vectors = owner.embed(texts)
        data = [
            {"object": "embedding", "index": i, "embedding": [float(x) for x in vector]}
            for i, vector in enumerate(vectors)
        ]
        self._send(200, {"object": "list", "model": body.get("model", ""), "data": data})
        owner.served_one()

    def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(raw)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: EmbeddingsTestServer


class EmbeddingsTestServer:
    def __init__(self, port: int = 0) -> None:
        from knowledge.embedding import UseEmbedder

        self._model = UseEmbedder()
        self._lock = threading.Lock()
        self._failures: deque[tuple[int, int | None]] = deque()
        self._down_after: int | None = None
        self.down = False
        self.delay = 0.0  # seconds before each answer (a slow server)
        self.dimensions: int | None = None  # None: the model's own (512)
        self.requests: list[dict] = []
        self.authorizations: list[str] = []
        self._port = port
        self._http: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- scripting ----------------------------------------------------------------------------

    def fail(self, status: int, *, times: int = 1, retry_after: int | None = None) -> None:
        """Answer the next ``times`` requests with ``status``."""
        with self._lock:
            self._failures.extend([(status, retry_after)] * times)

    def go_down_after(self, requests: int) -> None:
        """Serve ``requests`` more requests, then stop listening (connection refused)."""
        with self._lock:
            self._down_after = requests

    def reset(self) -> None:
        with self._lock:
            self._failures.clear()
            self._down_after = None
            self.dimensions = None
            self.delay = 0.0
            self.requests.clear()
            self.authorizations.clear()

    # --- serving ------------------------------------------------------------------------------

    def record(self, body: dict, authorization: str) -> None:
        with self._lock:
            self.requests.append(body)
            self.authorizations.append(authorization)

    def next_failure(self) -> tuple[int, int | None] | None:
        with self._lock:
            return self._failures.popleft() if self._failures else None

    def embed(self, texts: list[str]) -> np.ndarray:
        vectors = self._model.embed_documents(texts).dense
        if self.dimensions is not None:
            vectors = vectors[:, : self.dimensions]
        return vectors

    def served_one(self) -> None:
        with self._lock:
            if self._down_after is None:
                return
            self._down_after -= 1
            stop = self._down_after <= 0
        if stop:
            self.down = True
            threading.Thread(target=self.stop, daemon=True).start()

    @property
    def base_url(self) -> str:
        """Kept while the server is down, so a client sees connection refused."""
        return f"http://127.0.0.1:{self._port}/v1"

    @property
    def running(self) -> bool:
        return self._http is not None

    def start(self) -> EmbeddingsTestServer:
        self.down = False
        self._down_after = None
        self._http = _Server(("127.0.0.1", self._port), _Handler)
        self._http.owner = self
        self._port = self._http.server_address[1]  # a restart listens on the same port
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.down = True  # kept-alive connections are dropped too, as by a stopped process
        if self._http is not None:
            http, self._http = self._http, None
            http.shutdown()
            http.server_close()

    def __enter__(self) -> EmbeddingsTestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
