"""The web server's request slots under attack: slow bodies and idle streams beside normal users.

Issue 40 found one web process of 64 slots (``KB_WEB_CONCURRENCY``) taken by 66 sockets sending
a body a byte at a time, or by one user's 66 idle ``GET /mcp`` event streams: every page 503.
This starts the embedded PostgreSQL and Redis (``var/bench-slots``), ingests a few wiki pages
and starts the web server with the run command's own command line (one process, as the attack
met it), then runs the same normal users twice, ``--seconds`` each:

1. **quiet**: ``--users`` users, each in turn: the sign-in page (anonymous), an API search (a
   token of their own), the Documents page (signed in); a think time of 0.2-0.6 s between;
2. **attacked**: the same, while on loopback, from the moment before the users start,
   - 66 sockets send ``POST /login/`` with ``Content-Length: 100000``, one byte every
     ``--trickle`` seconds, each reconnecting when the server ends it (as an attacker would);
   - 66 ``GET /mcp`` with ``Accept: text/event-stream`` and one ordinary user's token;
   - 66 of that user's chat answer streams, on a message another stream is answering;
   - 66 of that user's downloads of a 20 MB version, reading nothing (a receive buffer of 4 KB;
     issue 50: they held the database pool to their last byte, every signed-in page and
     ``/healthz`` timed out);
   - 66 ``POST /documents/upload/`` of one staff session, each declaring 400 MB and sending a
     byte every ``--trickle`` seconds (issue 50: a staff upload took its slot before its body
     was in, for as long as its declared length allowed at the minimum rate: 1.7 hours);
   each stream reopened a second after it ends.

Printed per phase: the users' requests, p50 / p95 / max latency and their errors (any status
but 200, or no answer within 30 s); for the attack, what its sockets got (the statuses
answered, how many the server closed, how many were open at the end) and ``/healthz``'s slots
in the middle of it (when the tree reports them). It uses whatever the tree offers, so run on an older commit it measures the
portal before the fix.

Run: ``.venv/bin/python benchmarks/slots.py [--users 8] [--seconds 60] [--trickle 10]
[--attacks body,mcp,chat,download,upload]`` (one or more of the attacks);
``--quick``: 4 users, 15 s a phase, a byte every 2 s (the same code path).
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import socket
import subprocess
import threading
import time
from collections import Counter

from _setup import (
    CORPUS,
    _free_port,
    percentile,
    setup,
    spawn,
    spawn_beat,
    teardown,
    wait_http,
)

ATTACKERS = 66
PAGES = ("/login/", "/api/v1/search", "/documents/")


class Phase:
    """The normal users' results of one phase."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors: Counter[str] = Counter()
        self.lock = threading.Lock()

    def record(self, page: str, status: int | str, ms: float) -> None:
        with self.lock:
            self.latencies.append(ms)
            if status != 200:
                self.errors[f"{page} {status}"] += 1


def run_users(base: str, users: list[tuple[str, str]], seconds: float) -> Phase:
    """Each user: (API token, session cookie); pages in turn until ``seconds`` have passed."""
    import random

    import httpx2

    phase = Phase()
    stop_at = time.monotonic() + seconds

    def user(number: int, token: str, cookie: str) -> None:
        rng = random.Random(number)
        with httpx2.Client(base_url=base, timeout=30) as http:
            i = number
            while time.monotonic() < stop_at:
                page = PAGES[i % len(PAGES)]
                i += 1
                started = time.perf_counter()
                try:
                    if page == "/login/":
                        status = http.get(page).status_code
                    elif page == "/api/v1/search":
                        auth = {"Authorization": f"Bearer {token}"}
                        status = http.get(
                            page, params={"q": "баг-репорт"}, headers=auth
                        ).status_code
                    else:
                        status = http.get(page, headers={"Cookie": cookie}).status_code
                except httpx2.HTTPError as exc:
                    status = type(exc).__name__
                phase.record(page, status, (time.perf_counter() - started) * 1000)
                time.sleep(rng.uniform(0.2, 0.6))

    threads = [
        threading.Thread(target=user, args=(n, token, cookie), daemon=True)
        for n, (token, cookie) in enumerate(users)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return phase


class Attack:
    """The attack's sockets, each in a thread of its own, and what became of them."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.stop = threading.Event()
        self.outcomes: Counter[str] = Counter()
        self.open: Counter[str] = Counter()  # sockets of each kind open right now
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []

    def start(self, kind: str, head: bytes, trickle: float | None, reads: bool = True) -> None:
        for _ in range(ATTACKERS):
            thread = threading.Thread(
                target=self._loop, args=(kind, head, trickle, reads), daemon=True
            )
            thread.start()
            self.threads.append(thread)

    def _note(self, kind: str, outcome: str) -> None:
        with self.lock:
            self.outcomes[f"{kind}: {outcome}"] += 1

    def _loop(self, kind: str, head: bytes, trickle: float | None, reads: bool) -> None:
        while not self.stop.is_set():
            try:
                self._one(kind, head, trickle, reads)
            except OSError as exc:
                self._note(kind, type(exc).__name__)
            self.stop.wait(1.0)

    def _one(self, kind: str, head: bytes, trickle: float | None, reads: bool) -> None:
        """One socket, until the server ends it or the attack stops."""
        with socket.socket() as sock:
            if not reads:  # before connecting: the window the server sees stays small
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.settimeout(30)
            sock.connect(("127.0.0.1", self.port))
            sock.sendall(head)
            with self.lock:
                self.open[kind] += 1
            try:
                if reads:
                    self._hold(kind, sock, trickle)
                else:
                    self._stare(kind, sock)
            finally:
                with self.lock:
                    self.open[kind] -= 1

    def _hold(self, kind: str, sock: socket.socket, trickle: float | None) -> None:
        """Notes the status the server answers (if it does) and whether it closes the socket;
        meanwhile sends a byte of the body every ``trickle`` seconds, or nothing (a stream)."""
        first = b""
        while not self.stop.is_set():
            readable, _, _ = select.select([sock], [], [], trickle or 1.0)
            if readable:
                chunk = sock.recv(65536)
                if not chunk:
                    self._note(kind, "closed by the server")
                    return
                if b"\r\n" not in first:
                    first += chunk
                    if b"\r\n" in first:
                        self._note(kind, f"answered {_status(first)}")
            elif trickle:
                sock.sendall(b"x")  # one more byte of the body

    def _stare(self, kind: str, sock: socket.socket) -> None:
        """Reads nothing (peeks at the status line) until the server drops the socket."""
        noted = False
        while not self.stop.wait(1.0):
            try:
                seen = sock.recv(64, socket.MSG_PEEK | socket.MSG_DONTWAIT)
            except BlockingIOError:
                continue
            except OSError:
                self._note(kind, "dropped by the server")
                return
            if not seen:
                self._note(kind, "closed by the server")
                return
            if not noted and b"\r\n" in seen:
                self._note(kind, f"answered {_status(seen)}")
                noted = True
                if not seen.startswith(b"HTTP/1.1 200"):
                    return  # refused: nothing to hold


def _status(received: bytes) -> str:
    line = received.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    return parts[1] if len(parts) > 1 and line.startswith("HTTP/") else "no status"


def prepare(port: int, count: int) -> tuple[list[tuple[str, str]], dict[str, bytes]]:
    """Users and their credentials; each attack's first bytes."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from chat.models import Conversation, Message
    from knowledge.ingest.registration import register_file
    from knowledge.models import Source
    from portal.api_auth import create_token

    call_command("ingest", str(CORPUS / "wiki_qa_bible_ru" / "faq-dlya-novichkov"), verbosity=0)
    users_model = get_user_model()

    def credentials(name: str) -> tuple[str, str]:
        user = users_model.objects.create_user(name, password="bench-password-5t6y")
        browser = Client()
        browser.force_login(user)
        return create_token(user, "bench")[1], f"sessionid={browser.cookies['sessionid'].value}"

    users = [credentials(f"user-{n}") for n in range(count)]
    token, cookie = credentials("mallory")
    mallory = users_model.objects.get(username="mallory")
    _, staff_cookie = credentials("stella")
    users_model.objects.filter(username="stella").update(is_staff=True)
    big = register_file(
        Source.objects.create(name="Exports", is_public=True),
        "export.txt",
        ("Строка выгрузки журнала событий.\n" * (20 * 2**20 // 60)).encode(),
        enqueue=False,
    ).version
    # A message another stream is answering: each stream of it waits for that answer.
    message = Message.objects.create(
        conversation=Conversation.objects.create(user=mallory),
        question="Что такое баг-репорт?",
        status="running",
    )
    host = f"Host: 127.0.0.1:{port}\r\n"
    slow_body = (
        f"POST /login/ HTTP/1.1\r\n{host}Content-Type: application/x-www-form-urlencoded\r\n"
        "Content-Length: 100000\r\n\r\nu"
    ).encode()
    mcp = (
        f"GET /mcp HTTP/1.1\r\n{host}Accept: text/event-stream\r\n"
        f"Authorization: Bearer {token}\r\n\r\n"
    ).encode()
    chat = (
        f"GET /chat/messages/{message.pk}/stream/ HTTP/1.1\r\n{host}"
        f"Accept: text/event-stream\r\nCookie: {cookie}\r\n\r\n"
    ).encode()
    download = f"GET /versions/{big.pk}/download/ HTTP/1.1\r\n{host}Cookie: {cookie}\r\n\r\n"
    upload = (
        f"POST /documents/upload/ HTTP/1.1\r\n{host}Cookie: {staff_cookie}\r\n"
        "Content-Type: multipart/form-data; boundary=kb\r\n"
        f"Content-Length: {400 * 2**20}\r\n\r\n--kb\r\n"
    )
    heads = {"body": slow_body, "mcp": mcp, "chat": chat}
    return users, {**heads, "download": download.encode(), "upload": upload.encode()}


def report(name: str, phase: Phase, seconds: float) -> None:
    lat = phase.latencies
    errors = sum(phase.errors.values())
    print(
        f"{name}: {len(lat)} requests in {seconds:.0f} s; p50 {percentile(lat, 50):.0f} ms, "
        f"p95 {percentile(lat, 95):.0f} ms, max {max(lat, default=0):.0f} ms; "
        f"errors {errors} ({100 * errors / max(1, len(lat)):.0f} %)"
        + (f" {dict(phase.errors)}" if errors else "")
    )


def warm(base: str, user: tuple[str, str]) -> None:
    """Each page once, unhurried: the first search loads the embedding model and the question's
    reading (seconds on a busy machine), which is not what is measured."""
    import httpx2

    token, cookie = user
    auth = {"Authorization": f"Bearer {token}"}
    with httpx2.Client(base_url=base, timeout=300) as http:
        http.get("/login/")
        http.get("/api/v1/search", params={"q": "баг-репорт"}, headers=auth)
        http.get("/documents/", headers={"Cookie": cookie})


def _healthz(base: str) -> dict:
    import httpx2

    try:
        return httpx2.get(base + "/healthz", timeout=30).json()
    except (httpx2.HTTPError, ValueError) as exc:
        return {"error": type(exc).__name__}


def main(args: argparse.Namespace) -> None:
    setup("slots")
    from portal.management.commands import run

    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    users, heads = prepare(port, args.users)
    env = {**os.environ, "KB_WEB_WORKERS": "1"}
    command = run.web_command("127.0.0.1", port)
    print("web server:", " ".join(command[1:]))
    web = spawn(command[2:], env)  # spawn() runs "python -m ..."
    worker = spawn(["celery", "-A", "portal.celery", "worker", "--concurrency", "1"], env)
    beat = spawn_beat(env)  # /healthz is 200 only with the beat's tick, as a portal runs
    try:
        wait_http(base + "/healthz", timeout=300)  # a busy machine: the worker starts slowly
        warm(base, users[0])
        report("quiet", run_users(base, users, args.seconds), args.seconds)
        attack = Attack(port)
        kinds: dict[str, tuple[str, float | None, bool]] = {
            "body": ("slow body", args.trickle, True),
            "mcp": ("GET /mcp stream", None, True),
            "chat": ("chat stream", None, True),
            "download": ("download read by nobody", None, False),
            "upload": ("slow staff upload", args.trickle, True),
        }
        for name in args.attacks.split(","):
            label, trickle, reads = kinds[name]
            attack.start(label, heads[name], trickle, reads)
        time.sleep(3)  # the attack's sockets in place
        middle: dict = {}
        timer = threading.Timer(args.seconds / 2, lambda: middle.update(_healthz(base)))
        timer.start()
        attacked = run_users(base, users, args.seconds)
        timer.join()
        with attack.lock:
            still_open = dict(attack.open)
        attack.stop.set()
        for thread in attack.threads:
            thread.join(35)
        report("attacked", attacked, args.seconds)
        for outcome, count in sorted(attack.outcomes.items()):
            print(f"  {outcome}: {count}")
        print(f"  attack sockets open at the end: {still_open}")
        print(f"  /healthz in the middle: {middle}")
    finally:
        for process in (web, worker, beat):
            os.killpg(process.pid, signal.SIGTERM)
        for process in (web, worker, beat):
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:  # a worker's warm shutdown on a busy machine
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        teardown()


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--trickle", type=float, default=10, help="seconds between body bytes")
    parser.add_argument(
        "--attacks",
        default="body,mcp,chat,download,upload",
        help="which of body, mcp, chat, download, upload (comma-separated)",
    )
    parser.add_argument("--quick", action="store_true", help="4 users, 15 s a phase, 2 s bytes")
    options = parser.parse_args()
    if options.quick:
        options.users, options.seconds, options.trickle = 4, 15, 2
    return options


if __name__ == "__main__":
    main(_arguments())
