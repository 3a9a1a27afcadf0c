"""Streaming overhead of the chat window, measured end to end over HTTP.

The real portal (uvicorn, ASGI) answers 50 questions through the chat page's endpoints, with
its real `openai` client talking to the test LLM server. Printed:
- portal overhead per token: from the moment the LLM server writes the first token to the
  moment the first byte of that token's server-sent event reaches the client (same clock);
- time to first token with the LLM excluded: from the client opening the stream to the LLM
  server receiving the answer request (question rewrite skipped, retrieval, prompt building).
Run: ``.venv/bin/python benchmarks/stream.py [N] [--quick]`` (``--quick``: 5 questions).
"""

from __future__ import annotations

import argparse
import http.client
import io
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

from _setup import CORPUS, ROOT, arguments, percentile, setup, teardown

QUESTIONS = [
    "Что такое верификация?",
    "Что такое валидация?",
    "Чем верификация отличается от валидации?",
    "Какие существуют принципы тестирования?",
    "Что такое дефект?",
    "Что такое ошибка в программе?",
    "Как определяется серьезность дефекта?",
    "Что такое приоритет дефекта?",
    "Что такое исчерпывающее тестирование?",
    "Что такое парадокс пестицида?",
]
PAGES = [
    "obshee/verifikaciya-i-validaciya-verification-and-validation.md",
    "obshee/principy-testirovaniya.md",
    "obshee/defekty-i-oshibki.md",
    "obshee/sereznost-i-prioritet-defekta-severity-and-priority.md",
]


class Client:
    """A logged-in browser stand-in: cookies and the CSRF token, plain http.client."""

    def __init__(self, port: int, username: str, password: str) -> None:
        self.port = port
        self.cookies: dict[str, str] = {}
        page = self.request("GET", "/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        self.request(
            "POST",
            "/login/",
            f"csrfmiddlewaretoken={token}&username={username}&password={password}",
            {
                "Content-Type": "application/x-www-form-urlencoded",
                "Referer": f"http://127.0.0.1:{port}/login/",
            },
        )

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        if "csrftoken" in self.cookies:
            headers["X-CSRFToken"] = self.cookies["csrftoken"]
            headers["Referer"] = f"http://127.0.0.1:{self.port}/"
        return {**headers, **(extra or {})}

    def request(
        self, method: str, path: str, body: str | None = None, headers: dict | None = None
    ) -> str:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        conn.request(
            method, path, body=body.encode() if body else None, headers=self._headers(headers)
        )
        response = conn.getresponse()
        for name, value in response.getheaders():
            if name.lower() == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key] = rest.split(";", 1)[0]
        text = response.read().decode()
        location = response.getheader("Location")
        conn.close()
        if response.status in (301, 302) and location:
            return self.request("GET", location)
        return text

    def first_token(self, message_id: int) -> tuple[float, float]:
        """Open the stream; returns (opened at, first token event received at)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        opened = time.time()
        conn.request("GET", f"/chat/messages/{message_id}/stream/", headers=self._headers())
        response = conn.getresponse()
        first = None
        while True:
            line = response.fp.readline()
            if not line:
                break
            if first is None and line.startswith(b"event: token"):
                first = time.time()
            if line.startswith(b"event: done"):
                break
        conn.close()
        return opened, first or time.time()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="?", type=int, default=50, help="questions asked")
    args = arguments(parser)
    runs = 5 if args.quick else args.runs
    setup("stream")
    sys.path.insert(0, str(ROOT))
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from chat.models import Conversation
    from tests.conftest import PortalServer
    from tests.llm_server import LlmTestServer

    with tempfile.TemporaryDirectory() as tmp:
        for page in PAGES:
            target = Path(tmp) / page
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(CORPUS / "wiki_qa_bible_ru" / page, target)
        call_command("ingest", tmp, source="QA Bible", json=True, stdout=io.StringIO())
    user = get_user_model().objects.create_user("bench", password="bench-pass-123")
    conversation_ids = [Conversation.objects.create(user=user).pk for _ in range(runs)]
    from django.db import connection

    with LlmTestServer(default_delay=0.01) as llm:
        server = PortalServer(
            KB_LLM_BASE_URL=llm.base_url, KB_DB_NAME=connection.settings_dict["NAME"]
        )
        try:
            client = Client(server.port, "bench", "bench-pass-123")
            overheads, ttft = [], []
            for i in range(runs):
                llm.requests.clear()
                html = client.request(
                    "POST",
                    f"/chat/{conversation_ids[i]}/ask/",
                    urlencode({"question": QUESTIONS[i % len(QUESTIONS)]}),
                    {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
                )
                message_id = int(re.search(r'id="turn-(\d+)"', html).group(1))
                opened, received = client.first_token(message_id)
                answer = next(r for r in llm.requests if r.body and r.body.get("stream"))
                if answer.first_token_at:
                    overheads.append((received - answer.first_token_at) * 1000)
                ttft.append((answer.at - opened) * 1000)
        finally:
            server.stop()
    print(f"{runs} questions through the real chat endpoints (uvicorn + ASGI, real openai client)")
    print(
        f"  portal overhead, LLM first token -> first byte at the client: p50 {percentile(overheads, 50):.1f} ms, "
        f"p95 {percentile(overheads, 95):.1f} ms (goal < 50 ms)"
    )
    print(
        f"  time to first token without the LLM (retrieval + prompt): p50 {percentile(ttft, 50):.0f} ms, "
        f"p95 {percentile(ttft, 95):.0f} ms"
    )
    teardown()


if __name__ == "__main__":
    main()
