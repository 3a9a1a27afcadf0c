"""The harness of ``faults.py``: the portal as ``./kb run`` starts it, its users, a staff member.

Not a benchmark of its own: ``faults.py`` injects the faults and prints the figures.

- ``Portal``: ``manage.py run`` in the benchmark's data folder (its web server, Celery worker
  and beat, exactly as a user starts them), and the processes it started, found by their
  command lines (the web server's processes, the worker, its pool, the beat).
- ``Users``: ``load.py``'s users (an API token each, ask or search with a think time), who also
  rate every third answer through the page, as a person would. Every request is logged with
  when it started, how long it took and what the user saw: an answer, a degraded answer (with a
  notice), a clear error (JSON or a 503/429 with Retry-After), an unclear one (a bare 500, a
  traceback) or no answer at all (the connection refused or cut).
- ``Staff``: signs in as the admin and uploads files and reindexes sources through the pages.
"""

from __future__ import annotations

import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import psutil
from _setup import ROOT

TRACEBACK = re.compile(r"Traceback \(most recent call last\)|File \"[^\"]+\", line \d+")
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
ADMIN_PASSWORD = "faults-admin-pass-42"
USER_PASSWORD = "faults-user-pass-42"


def db(query: Callable, *, attempts: int = 120):
    """Run a Django query, waiting out a database that is down (a fault the benchmark made)."""
    from django.db import InterfaceError, OperationalError, close_old_connections, connection

    for attempt in range(attempts):
        try:
            close_old_connections()
            return query()
        except (OperationalError, InterfaceError):
            connection.close()
            if attempt == attempts - 1:
                raise
            time.sleep(0.5)


# --- the portal ------------------------------------------------------------------------------


class Portal:
    """``manage.py run`` in its own session; output to ``log_path``."""

    def __init__(self, env: dict[str, str], port: int, log_path: Path) -> None:
        self.env = env
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = log_path
        self.process: subprocess.Popen | None = None
        self.starts = 0

    def start(self, timeout: float = 600, attempts: int = 3) -> float:
        """Start and wait for "is running at"; returns the seconds it took. On a machine under
        load the run command may give up waiting for its web server (90 s): tried again."""
        for attempt in range(attempts):
            try:
                return self._start(timeout)
            except RuntimeError as exc:
                self.stop()
                if attempt == attempts - 1:
                    raise SystemExit(str(exc)) from None
                print(f"(the portal did not start, trying again: {str(exc)[-200:]})", flush=True)
        return 0.0

    def _start(self, timeout: float) -> float:
        started = time.monotonic()
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child keeps it
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "run", "--port", str(self.port)],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        self.starts += 1
        while time.monotonic() - started < timeout:
            if "is running at" in self.output(offset):
                return time.monotonic() - started
            if self.process.poll() is not None:
                raise RuntimeError(f"manage.py run exited: {self.output(offset)[-3000:]}")
            time.sleep(0.3)
        raise RuntimeError(f"manage.py run did not start in {timeout:.0f} s")

    def output(self, offset: int = 0) -> str:
        with open(self.log_path, "rb") as handle:
            handle.seek(offset)
            return handle.read().decode("utf-8", "replace")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """SIGTERM, as Ctrl-C: the run command stops what it started."""
        if not self.alive():
            self._reap_leftovers()
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(90)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._reap_leftovers()

    def _reap_leftovers(self) -> None:
        # A run command that died (a fault) leaves its children: the web server and the worker
        # die with it (PR_SET_PDEATHSIG), the beat or a pool may take a moment.
        for process in self._ours():
            try:
                process.terminate()
                process.wait(20)
            except psutil.Error:
                pass

    def _ours(self) -> list[psutil.Process]:
        marker = f"--port {self.port}"
        found = []
        for process in psutil.process_iter(["cmdline", "environ"]):
            try:
                line = " ".join(process.info["cmdline"] or [])
                env = process.info["environ"] or {}
            except psutil.Error:
                continue
            if process.pid == getattr(self.process, "pid", None):
                continue
            same_data = env.get("KB_DATA_DIR") == self.env["KB_DATA_DIR"]
            if same_data and ("celery" in line or "uvicorn" in line or marker in line):
                found.append(process)
        return found

    # --- the processes it started ------------------------------------------------------------

    def children(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.process.pid).children()
        except psutil.Error:
            return []

    def _child(self, *words: str, without: str = "") -> psutil.Process | None:
        for process in self.children():
            try:
                line = " ".join(process.cmdline())
            except psutil.Error:
                continue
            if all(w in line for w in words) and not (without and without in line):
                return process
        return None

    def web(self) -> psutil.Process | None:
        return self._child("uvicorn")

    def web_processes(self) -> list[psutil.Process]:
        """The processes that answer requests: uvicorn's workers, or uvicorn itself alone."""
        main = self.web()
        if main is None:
            return []
        workers = [p for p in _children(main) if "resource_tracker" not in _cmdline(p)]
        return workers or [main]

    def worker(self) -> psutil.Process | None:
        return self._child("celery", " worker")

    def worker_children(self) -> list[psutil.Process]:
        main = self.worker()
        return _children(main) if main else []

    def beat(self) -> psutil.Process | None:
        return self._child("celery", " beat", without=" worker")


def _children(process: psutil.Process) -> list[psutil.Process]:
    try:
        return process.children()
    except psutil.Error:
        return []


def _cmdline(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def kill(processes: list[psutil.Process]) -> list[int]:
    killed = []
    for process in processes:
        try:
            process.send_signal(signal.SIGKILL)
            killed.append(process.pid)
        except psutil.Error:
            pass
    return killed


# --- users -----------------------------------------------------------------------------------


@dataclass
class Request:
    user: int
    kind: str  # ask, search, rate
    started: float  # time.monotonic()
    seconds: float
    status: int | str  # HTTP status, or the transport error's name
    seen: str  # answer, degraded, clear-error, unclear, no-answer
    message_id: int | None = None
    detail: str = ""  # the notice, the error's words


@dataclass
class Users:
    """``load.py``'s users, each with an API token and a signed-in session (for ratings)."""

    base: str
    tokens: list[str]
    names: list[str]
    questions: list[str]
    think: float = 2.0
    search_share: float = 0.3
    rate_every: int = 3
    log: list[Request] = field(default_factory=list)
    ratings: list[tuple[int, int]] = field(default_factory=list)  # (user, message) acknowledged
    active: threading.Event = field(default_factory=threading.Event)
    stopping: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        self.active.set()
        for number in range(len(self.tokens)):
            thread = threading.Thread(target=self._user, args=(number,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def pause(self) -> None:
        self.active.clear()
        time.sleep(0.5)

    def resume(self) -> None:
        self.active.set()

    def stop(self) -> None:
        self.stopping.set()
        self.active.set()
        for thread in self._threads:
            thread.join(150)

    def _user(self, number: int) -> None:
        rng = random.Random(number)
        order = self.questions[:]
        rng.shuffle(order)
        headers = {"Authorization": f"Bearer {self.tokens[number]}"}
        api = httpx2.Client(base_url=self.base, headers=headers, timeout=120)
        page = httpx2.Client(base_url=self.base, timeout=60)
        signed_in = False
        answers = 0
        i = number
        time.sleep(rng.uniform(0, 2))
        while not self.stopping.is_set():
            self.active.wait()
            if self.stopping.is_set():
                break
            question = order[i % len(order)]
            i += 1
            if rng.random() < self.search_share:
                self._record(
                    number,
                    "search",
                    lambda q=question: api.get("/api/v1/search", params={"q": q, "k": 5}),
                )
            else:
                request = self._record(
                    number, "ask", lambda q=question: api.post("/api/v1/ask", json={"question": q})
                )
                if request.message_id:
                    answers += 1
                    if answers % self.rate_every == 0:
                        signed_in = signed_in or _sign_in(page, self.names[number], USER_PASSWORD)
                        if signed_in:
                            self._rate(number, page, request.message_id, rng)
            time.sleep(rng.uniform(0.5, 1.5) * self.think)
        api.close()
        page.close()

    def _record(self, number: int, kind: str, send: Callable) -> Request:
        started = time.monotonic()
        message_id, detail = None, ""
        try:
            response = send()
            status: int | str = response.status_code
            seen, message_id, detail = _what_was_seen(response)
        except httpx2.HTTPError as exc:
            status, seen = type(exc).__name__, "no-answer"
        seconds = time.monotonic() - started
        request = Request(number, kind, started, seconds, status, seen, message_id, detail)
        with self._lock:
            self.log.append(request)
        return request

    def _rate(self, number: int, page: httpx2.Client, message_id: int, rng: random.Random) -> None:
        value = "up" if rng.random() < 0.7 else "down"

        def send():
            token = page.cookies.get("csrftoken", "")
            return page.post(
                f"/feedback/answers/{message_id}/rating/",
                data={"value": value, "csrfmiddlewaretoken": token},
                headers={"HX-Request": "true", "Referer": self.base + "/"},
            )

        request = self._record(number, "rate", send)
        if request.status == 200:
            with self._lock:
                self.ratings.append((number, message_id))

    def between(self, start: float, end: float) -> list[Request]:
        """Requests started in [start, end)."""
        with self._lock:
            return [r for r in self.log if start <= r.started < end]

    def overlapping(self, start: float, end: float) -> list[Request]:
        """Requests in flight at some moment of [start, end]."""
        with self._lock:
            return [r for r in self.log if r.started <= end and r.started + r.seconds >= start]

    def answered_since(self, moment: float) -> set[int]:
        """The users who have had an answer to a question they asked after ``moment``."""
        with self._lock:
            return {r.user for r in self.log if r.started >= moment and r.seen == "answer"}


def _what_was_seen(response: httpx2.Response) -> tuple[str, int | None, str]:
    """(what the user saw, the answer's message id, the notice or error in words)."""
    text = response.text
    if TRACEBACK.search(text):
        return "unclear", None, "a traceback"
    if response.status_code == 200:
        if "application/json" not in response.headers.get("content-type", ""):
            return "answer", None, ""
        body = response.json()
        if isinstance(body, dict) and "answer" in body:
            # A partial answer's notice is the answer itself; any other notice (or a second
            # one) says the answer was made without something (the LLM, the embeddings).
            notice = str(body.get("notice") or "")
            partial = body.get("outcome") == "partial"
            degraded = bool(notice) and (not partial or "\n" in notice)
            return ("degraded" if degraded else "answer"), body.get("id"), notice[:100]
        return "answer", None, ""
    try:
        body = response.json()
    except ValueError:
        body = None
    error = str(body.get("error") or "")[:100] if isinstance(body, dict) else ""
    if response.status_code in (429, 503) and response.headers.get("retry-after"):
        return "clear-error", None, error or f"{response.status_code} with Retry-After"
    if error:
        return "clear-error", None, error
    return "unclear", None, f"{response.status_code} {text[:60]!r}"


def _sign_in(client: httpx2.Client, username: str, password: str) -> bool:
    try:
        page = client.get("/login/")
        found = CSRF.search(page.text)
        if not found:
            return False
        response = client.post(
            "/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": found[1]},
            headers={"Referer": str(client.base_url) + "/login/"},
        )
        return response.status_code == 302 and "sessionid" in client.cookies
    except httpx2.HTTPError:
        return False


# --- staff -----------------------------------------------------------------------------------


@dataclass
class Upload:
    name: str
    sha256: str
    status: int | str
    seen: str  # queued, unchanged, clear-error, unclear, no-answer
    at: float


class Staff:
    """The admin at the Documents page: uploads and reindexes as the buttons do."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.client = httpx2.Client(base_url=base, timeout=120)
        self.uploads: list[Upload] = []

    def sign_in(self) -> None:
        self.client.cookies.clear()
        if not _sign_in(self.client, "admin", ADMIN_PASSWORD):
            raise SystemExit("the admin could not sign in")

    def _post(self, path: str, data: dict, files=None) -> httpx2.Response:
        token = self.client.cookies.get("csrftoken", "")
        return self.client.post(
            path,
            data={**data, "csrfmiddlewaretoken": token},
            files=files,
            headers={"Referer": self.base + "/documents/"},
        )

    def reindex_source(self, source_id: int) -> int | str:
        try:
            return self._post(f"/sources/{source_id}/reindex/", {}).status_code
        except httpx2.HTTPError as exc:
            return type(exc).__name__

    def upload(self, source_id: int, name: str, data: bytes) -> Upload:
        import hashlib

        started = time.monotonic()
        try:
            response = self._post(
                "/documents/upload/",
                {"source": str(source_id)},
                files=[("files", (name, data, "text/markdown"))],
            )
            status: int | str = response.status_code
            seen = _upload_seen(self.client, response)
        except httpx2.HTTPError as exc:
            status, seen = type(exc).__name__, "no-answer"
        upload = Upload(name, hashlib.sha256(data).hexdigest(), status, seen, started)
        self.uploads.append(upload)
        return upload

    def close(self) -> None:
        self.client.close()


def _upload_seen(client: httpx2.Client, response: httpx2.Response) -> str:
    """What the Documents page said after the upload (its messages), or the error page."""
    if TRACEBACK.search(response.text):
        return "unclear"
    if response.status_code != 302:
        return "clear-error" if response.status_code in (400, 503) else "unclear"
    page = client.get(response.headers["location"])
    text = page.text
    if TRACEBACK.search(text) or page.status_code >= 500:
        return "unclear"
    if re.search(r"new versions? queued|нов\w+ верси\w+ в очереди", text, re.I):
        return "queued"
    if re.search(r"Unchanged|Без изменений", text):
        return "unchanged"
    return "clear-error"
