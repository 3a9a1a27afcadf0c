"""A small, real OpenAI-compatible chat-completions server for tests, benchmarks and demos.

Standard library only. It answers from the numbered sources it is sent (word overlap, no model),
classifies answers and reformulates questions when the system message asks for it, and can be
scripted per test: a fixed reply, a slow stream, an HTTP error or a hang.

    with LlmTestServer() as llm:
        llm.script("К сожалению, в документах нет ответа.", delay=0.15)
        client = openai.OpenAI(base_url=llm.base_url, api_key="test")

Run ``python tests/llm_server.py --port 8011 --delay 0.05`` to serve demos and benchmarks.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import re
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REFUSAL = "В предоставленных документах нет ответа на этот вопрос."
KINDS = ("answer", "classify", "reformulate", "rewrite", "judge", "suggest")

_WORD = re.compile(r"[^\W\d_]{3,}")
_TOKEN = re.compile(r"\s*\S+\s*")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?…])\s+|\n+")
# A fence first, so that a "[N]" line inside quoted source text is never taken for a marker.
_SOURCE_PART = re.compile(
    r"<<<(?P<fenced>.*?)>>>|^[ \t]*\[(?P<num>\d+)\][ \t]*(?P<title>(?:(?!<<<)[^\n])*)|</sources>",
    re.S | re.M,
)
_REFUSAL_HINTS = ("нет ответа", "не могу ответить", "к сожалению", "нет информации", "не найден",
                  "не содержится", "no answer", "cannot answer", "can't answer", "not found",
                  "no information", "do not contain")  # fmt: skip
_PARTIAL_HINTS = ("частично", "partial", "не указано", "not stated")
_QUESTION_WORDS = {"что", "такое", "как", "какой", "какая", "какие", "каков", "где", "когда",
                   "почему", "зачем", "кто", "сколько", "ли", "можно", "нужно", "what", "how",
                   "why", "when", "where", "who", "which", "is", "are", "does", "do", "can"}  # fmt: skip


@dataclass(frozen=True)
class Reply:
    """One scripted response; ``None`` fields fall back to the default behaviour."""

    text: str | None = None  # the reply; None answers from the sources (or classifies, ...)
    delay: float | None = None  # seconds before each streamed token; None → default_delay
    status: int | None = None  # answer with this HTTP error status instead
    hang: float | None = None  # seconds to wait before answering at all


@dataclass
class RecordedRequest:
    """A request as the server received it; the Authorization value is redacted."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float = field(default_factory=time.time)
    first_token_at: float | None = None  # when the first content token was written (benchmarks)
    prompt_tokens: int = 0  # the prompt's tokens by the server's tokenizer (with a context)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", []) if isinstance(self.body, dict) else []


# --- default behaviour: pure functions of the messages ------------------------------------------


def words(text: str) -> set[str]:
    """Lowercase words of three or more letters (any alphabet), ё read as е."""
    return set(_WORD.findall(text.lower().replace("ё", "е")))


def tokens(text: str) -> list[str]:
    """Split a reply into stream tokens: words with their surrounding whitespace."""
    return _TOKEN.findall(text)


_PROMPT_TOKEN = re.compile(r"\w{1,4}|[^\w\s]")


def prompt_tokens(text: str) -> int:
    """The server's tokenizer, for its context: four letters or one sign a token (``/tokenize``
    answers with it; a prompt longer than the context is refused as llama.cpp refuses it)."""
    return len(_PROMPT_TOKEN.findall(text))


def parse_sources(text: str) -> tuple[dict[int, tuple[str, str]], str]:
    """Return ``{number: (title, source text)}`` and the text with the sources removed.

    A source runs from its ``[N]`` line to the next one, ``</sources>`` or the end; when it holds
    a ``<<< >>>`` fence, its text is the fenced part and the rest of the marker line its title.
    """
    sources: dict[int, tuple[str, str]] = {}
    spans: list[tuple[int, int]] = []
    # Fences are matched only to be skipped: a "[N]" line inside a fence is source text.
    bounds = [m for m in _SOURCE_PART.finditer(text) if m["fenced"] is None]
    for match, following in itertools.pairwise([*bounds, None]):
        if match["num"] is None:  # </sources>
            continue
        end = following.start() if following else len(text)
        body = text[match.end() : end]
        fenced = re.search(r"<<<(.*?)>>>", body, re.S)
        sources[int(match["num"])] = (
            match["title"].strip(),
            (fenced[1] if fenced else body).strip(),
        )
        spans.append((match.start(), end))
    for start, end in reversed(spans):
        text = text[:start] + text[end:]
    return sources, re.sub(r"</?sources>", "", text).strip()


def content_text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def answer_from_sources(messages: list[dict[str, Any]]) -> str:
    """Copy one or two sentences of the source sharing most words with the last question."""
    texts = [content_text(m) for m in messages if m.get("role") in ("system", "user")]
    sources = next((found for t in reversed(texts) if (found := parse_sources(t)[0])), {})
    users = [content_text(m) for m in messages if m.get("role") == "user"]
    last = users[-1] if users else ""
    question = parse_sources(last)[1] or last
    asked = words(question)
    if not sources or not asked:
        return REFUSAL
    # Ties go to the lowest number, as a model would cite the first relevant source.
    shared = {n: len(asked & words(" ".join(sources[n]))) for n in sorted(sources)}
    number = max(shared, key=shared.__getitem__)
    if not shared[number]:
        return REFUSAL
    text = sources[number][1]
    # A page's reference lines ("Источник: [title](url)") and labels ("Доп. материал:") are
    # not what a model answers with.
    sentences = [
        " ".join(s.split())
        for s in _SENTENCE_BREAK.split(text)
        if s.strip() and "](" not in s and not s.rstrip().endswith(":")
    ] or [""]
    best = max(range(len(sentences)), key=lambda i: (len(asked & words(sentences[i])), -i))
    return f"{' '.join(sentences[best : best + 2])} [{number}]"


def classify(text: str) -> str:
    lowered = text.lower()
    if any(hint in lowered for hint in _REFUSAL_HINTS):
        return "refusal"
    if any(hint in lowered for hint in _PARTIAL_HINTS):
        return "partial"
    return "answer"


def reformulate(question: str) -> str:
    """Up to three rephrasings of a question, one per line."""
    plain = " ".join(re.findall(r"[^\W_]+(?:-[^\W_]+)*", question))
    kept = [w for w in plain.split() if w.lower() not in _QUESTION_WORDS]
    candidates = [" ".join(kept), " ".join(reversed(kept)), plain.lower()]
    unique = [c for c in dict.fromkeys(candidates) if c and c != question.strip()]
    return "\n".join(unique[:3])


def request_kind(messages: list[dict[str, Any]]) -> str:
    system = " ".join(content_text(m) for m in messages if m.get("role") == "system").lower()
    if "grader" in system:
        return "judge"
    if "classify" in system:
        return "classify"
    if "standalone question" in system:
        return "rewrite"
    if "suggest additional" in system:  # the guided test analysis's test cases
        return "suggest"
    return "reformulate" if "reformulat" in system else "answer"


def default_reply(kind: str, messages: list[dict[str, Any]]) -> str:
    users = [content_text(m) for m in messages if m.get("role") == "user"]
    last = users[-1] if users else ""
    if kind == "classify":
        return classify(last)
    if kind == "rewrite":
        return rewrite(last)
    if kind == "judge":
        return judge(last)
    if kind == "suggest":
        return suggest(last)
    return reformulate(last) if kind == "reformulate" else answer_from_sources(messages)


def _block(text: str, name: str) -> str:
    match = re.search(rf"{name}:\s*<<<(.*?)>>>", text, re.S)
    return match[1] if match else ""


def judge(text: str) -> str:
    """A grade as the evaluation judge replies it: the share of the reference's words the answer
    has (>= 0.5 correct, >= 0.2 partial, else wrong); faithful when most of the answer's words
    are in the sources."""
    reference, answer = words(_block(text, "REFERENCE")), words(_block(text, "ANSWER"))
    sources = words(" ".join(re.findall(r"<<<(.*?)>>>", text.split("SOURCES:", 1)[-1], re.S)))
    share = len(reference & answer) / len(reference) if reference else 0.0
    grade = "correct" if share >= 0.5 else "partial" if share >= 0.2 else "wrong"
    supported = len(answer & sources) / len(answer) if answer else 1.0
    return json.dumps(
        {
            "grade": grade,
            "faithful": supported >= 0.6,
            "reason": f"{share:.0%} of the reference's words, {supported:.0%} of the answer's in the sources",
        }
    )


def suggest(text: str) -> str:
    """Test cases as the guided test analysis asks for them: one line per gap ("Проверить:
    ..."), else one per requirement; a fixed line when the message lists neither."""
    gaps = text.split("Gaps:", 1)[-1].split("Checks the knowledge", 1)[0] if "Gaps:" in text else ""
    labels = re.findall(r"<<<(.*?)>>>", gaps, re.S) or re.findall(
        r"^- <<<(.*?)>>>", text, re.S | re.M
    )
    lines = [f"Проверить: {' '.join(label.split())}" for label in labels[:5]]
    return "\n".join(lines) or "Проверить сценарий из описания целиком"


def rewrite(transcript: str) -> str:
    """A follow-up made standalone: the first question asked, then the follow-up itself."""
    asked = [line[5:].strip() for line in transcript.splitlines() if line.startswith("User:")]
    if len(asked) < 2:
        return asked[-1] if asked else transcript
    return f"{asked[0].rstrip('?')}: {asked[-1]}"


# --- HTTP -------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive; streams use chunked transfer encoding
    server: _HttpServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle(self) -> None:
        # The client may give up mid-answer (a timeout test, a closed browser tab) or drop a
        # keep-alive connection: there is nobody left to answer, so no traceback either.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            super().handle()

    def do_GET(self) -> None:
        self.server.llm.record(self, None)
        if self.path.rstrip("/") == "/v1/models":
            model = {"id": self.server.llm.model, "object": "model", "created": 0, "owned_by": "kb"}
            if self.server.llm.context:
                model["meta"] = {"n_ctx": self.server.llm.context}  # as llama.cpp says it
            self._json(200, {"object": "list", "data": [model]})
        else:
            self._error(404, f"No route {self.path}")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        self.record = self.server.llm.record(self, body)
        if self.path.rstrip("/") == "/tokenize" and self.server.llm.context:
            count = prompt_tokens(str((body or {}).get("content", "")))
            return self._json(200, {"tokens": list(range(count))})
        if self.path.rstrip("/") != "/v1/chat/completions":
            return self._error(404, f"No route {self.path}")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return self._error(400, "Expected a JSON body with messages")
        self._complete(body)

    def _complete(self, body: dict[str, Any]) -> None:
        llm = self.server.llm
        kind = request_kind(body["messages"])
        reply = llm.next_reply(kind)
        # Waiting on the stop event, not sleeping, so that stop() never waits out a hang.
        if reply.hang and llm.stopping.wait(reply.hang):
            self.close_connection = True
            return
        if reply.status:
            return self._error(reply.status, f"Scripted failure {reply.status}")
        if llm.context:
            counted = sum(prompt_tokens(content_text(m)) + 4 for m in body["messages"])
            self.record.prompt_tokens = counted
            if counted > llm.context:
                return self._too_long(counted, llm.context)
        text = reply.text if reply.text is not None else default_reply(kind, body["messages"])
        prompt = sum(len(content_text(m).split()) for m in body["messages"])
        pieces = tokens(text)
        usage = {"prompt_tokens": prompt, "completion_tokens": len(pieces)}
        usage["total_tokens"] = prompt + len(pieces)
        head = {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "created": int(time.time())}
        head["model"] = body.get("model") or llm.model
        if not body.get("stream"):
            message = {"role": "assistant", "content": text}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            completion = {**head, "object": "chat.completion", "choices": [choice]}
            return self._json(200, {**completion, "usage": usage})
        delay = llm.default_delay if reply.delay is None else reply.delay
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = {**head, "object": "chat.completion.chunk"}

        def event(delta: dict[str, str], finish: str | None = None) -> None:
            self._chunk(
                {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            )

        event({"role": "assistant", "content": ""})
        for piece in pieces:
            if delay and llm.stopping.wait(delay):
                self.close_connection = True
                return
            if self.record is not None and self.record.first_token_at is None:
                self.record.first_token_at = time.time()
            event({"content": piece})
        event({}, "stop")
        if (body.get("stream_options") or {}).get("include_usage"):
            self._chunk({**chunk, "choices": [], "usage": usage})
        self._chunk("[DONE]")
        self.wfile.write(b"0\r\n\r\n")

    def _chunk(self, data: Any) -> None:
        payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        encoded = f"data: {payload}\n\n".encode()
        # One HTTP chunk per event, flushed at once, so the client sees each token as it is made.
        self.wfile.write(f"{len(encoded):x}\r\n".encode() + encoded + b"\r\n")
        self.wfile.flush()

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        encoded = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(encoded)))
        self.end_headers()
        self.wfile.write(encoded)

    def _too_long(self, counted: int, context: int) -> None:
        """llama.cpp's refusal of a prompt longer than its context, word for word."""
        message = (
            f"request ({counted} tokens) exceeds the available context size ({context} tokens), "
            "try increasing it"
        )
        error = {"code": 400, "message": message, "type": "exceed_context_size_error"}
        self._json(400, {"error": {**error, "n_prompt_tokens": counted, "n_ctx": context}})

    def _error(self, status: int, message: str) -> None:
        error = {"message": message, "type": "server_error" if status >= 500 else "invalid_request"}
        self._json(status, {"error": {**error, "code": status}})


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    llm: LlmTestServer


class LlmTestServer:
    """An OpenAI-compatible server on 127.0.0.1, started in a daemon thread."""

    def __init__(
        self,
        port: int = 0,
        *,
        default_delay: float = 0.0,
        model: str = "kb-test",
        context: int = 0,
    ) -> None:
        self.port = port
        self.default_delay = default_delay
        self.model = model
        # A context in tokens (0: none): then /v1/models says it, /tokenize counts, and a
        # longer prompt is refused with llama.cpp's HTTP 400.
        self.context = context
        # Handler threads append while a test reads: list append, clear, indexing and iteration
        # are atomic under the GIL, so a plain list is a thread-safe log here.
        self.requests: list[RecordedRequest] = []
        self.stopping = threading.Event()
        self._queues: dict[str, deque[Reply]] = {kind: deque() for kind in KINDS}
        self._lock = threading.Lock()
        self._httpd: _HttpServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LlmTestServer:
        self.stopping.clear()
        self._httpd = _HttpServer(("127.0.0.1", self.port), _Handler)
        self._httpd.llm = self
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join()
            self._httpd = self._thread = None

    def __enter__(self) -> LlmTestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(
        self,
        text: str | None = None,
        *,
        delay: float | None = None,
        status: int | None = None,
        hang: float | None = None,
        kind: str = "answer",
        times: int = 1,
    ) -> None:
        """Queue the next ``times`` replies to requests of ``kind``; consumed in order."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        with self._lock:
            self._queues[kind].extend([Reply(text, delay, status, hang)] * times)

    def next_reply(self, kind: str) -> Reply:
        with self._lock:
            queue = self._queues[kind]
            return queue.popleft() if queue else Reply()

    def reset(self) -> None:
        """Forget recorded requests and pending scripted replies."""
        self.requests.clear()
        with self._lock:
            for queue in self._queues.values():
                queue.clear()

    def record(self, handler: BaseHTTPRequestHandler, body: Any) -> RecordedRequest:
        headers = {k.lower(): v for k, v in handler.headers.items()}
        if "authorization" in headers:
            headers["authorization"] = "[redacted]"
        recorded = RecordedRequest(handler.command, handler.path, headers, body)
        self.requests.append(recorded)
        return recorded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds per streamed token")
    args = parser.parse_args()
    server = LlmTestServer(args.port, default_delay=args.delay).start()
    print(server.base_url, flush=True)  # noqa: T201 - the script's whole output
    try:
        server.stopping.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
