"""Shared fixtures: personas, a real Celery worker, the real web server, a headless browser.

Everything runs on real services: the session's embedded PostgreSQL (pgvector) and Redis, a
Celery worker process over that Redis, uvicorn serving the ASGI application, Debian's Chromium.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import kombu.exceptions
import psutil
import pytest
import redis
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(os.environ.get("KB_ARTIFACTS_DIR", ROOT / "artifacts"))
PASSWORD = "correct-horse-battery-staple"


# --- per-process caches of search() -------------------------------------------------------------


@pytest.fixture(autouse=True)
def _fresh_search_caches() -> Iterator[None]:
    """search() reads the stored embedding models and dimensions once a minute per process; a
    test that stored vectors of another model (the served embedder, a tiny test model) would
    otherwise make the next tests in that minute refuse the configured model."""
    from knowledge import vector_index

    vector_index.forget_stored()
    yield
    vector_index.forget_stored()


@pytest.fixture(autouse=True)
def _forget_sign_in_counters() -> Iterator[None]:
    """Sign-in counters live in Redis for a day: one test's wrong passwords from the test
    client's address must not cool off the next test's sign-ins."""
    yield
    import redis

    from portal.throttle import _redis

    try:
        client = _redis()
        for key in client.scan_iter("kb:signin:*"):
            client.delete(key)
    except redis.RedisError:
        pass  # a test that never started the session's Redis left nothing there


# --- the ranking's weights ----------------------------------------------------------------------


@pytest.fixture
def ranking_weights() -> Iterator:
    """Change the ranking's weights (``knowledge.retrieval.weights``) for one test, in this
    process: ``ranking_weights(gate={"min_score": 0.0})`` (returns the weights now in use);
    the configured ones come back after it."""
    from knowledge.retrieval import weights as module

    configured = module.weights()

    def change(**groups):
        return module.configure(module.weights().changed(**groups))

    yield change
    module.configure(configured)


# --- personas: alice the admin, bob a reader, eve outside ---------------------------------------


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_superuser("alice", "alice@example.com", PASSWORD)


@pytest.fixture
def bob(django_user_model):
    return django_user_model.objects.create_user("bob", "bob@example.com", PASSWORD)


@pytest.fixture
def eve(django_user_model):
    return django_user_model.objects.create_user("eve", "eve@example.com", PASSWORD)


# --- subprocesses on the test database ------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def subprocess_env(**extra: str) -> dict[str, str]:
    """Environment for a child process that must see the test database, not the dev one."""
    env = dict(os.environ)
    env["KB_DB_NAME"] = connection.settings_dict["NAME"]
    # The suite's servers answer a few questions each: loading the models at every start would
    # cost each about 3 s of CPU (tests/portal/test_warm_up.py starts one that does).
    env.setdefault("KB_WARM_UP", "0")
    env.update(extra)
    return env


def _forget_queue_marks() -> None:
    """A new worker starts from no "queued once" mark and no taken turn: an earlier test's mark
    outlives the message it stood for when that test purged the queue, and the second vectors
    would then never be queued within the test (the beat, which sends them anyway, is not run)."""
    from knowledge import queue

    queue.started_once(queue.FILL_SECOND_VECTORS)
    queue.end_turn(queue.FILL_SECOND_VECTORS)


class WorkerProcess:
    """A real Celery worker process (prefork pool) on the session's Redis and test database."""

    def __init__(
        self,
        name: str,
        concurrency: int = 1,
        log_dir: Path | None = None,
        queues: str = "",  # e.g. "ingest"; empty: every queue
        second_vectors: bool = False,
    ) -> None:
        self.name = name
        self.log_path = (log_dir or ARTIFACTS / "logs") / f"worker-{name}.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        _forget_queue_marks()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "portal.celery",
                "worker",
                "--pool",
                "prefork",
                "--concurrency",
                str(concurrency),
                "--loglevel",
                "INFO",
                "--hostname",
                f"{name}@%h",
                "--without-mingle",
                "--without-gossip",
                *(["--queues", queues] if queues else []),
            ],
            cwd=ROOT,
            # Reading every unit of a document with e5 takes about a second of CPU per chunk:
            # the workers of the tests leave it out but in the tests of the second vectors.
            env=subprocess_env(**({} if second_vectors else {"KB_SECOND_EMBEDDER": "none"})),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            self.wait_ready()
        except BaseException:
            self.stop()  # a worker that never answered is not left running after the test
            raise

    def wait_ready(self, timeout: float = 60) -> None:
        from portal.celery import app

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"worker exited: {self.log_path.read_text()[-2000:]}")
            # A connection of its own each time: the pool's may lead to a Redis that an earlier
            # test stopped and started again ("Connection closed by server").
            try:
                with app.connection_for_write() as broker:
                    replies = app.control.ping(timeout=0.5, connection=broker)
            except (redis.RedisError, kombu.exceptions.OperationalError):
                continue
            if any(self.name in next(iter(reply)) for reply in replies):
                return
        raise RuntimeError(f"worker {self.name} did not answer a ping; log: {self.log_path}")

    def kill(self) -> None:
        """SIGKILL the whole process group: the worker and its pool children, mid-task."""
        os.killpg(self.process.pid, 9)
        self.process.wait()

    def kill_pool(self) -> list[int]:
        """SIGKILL the worker's children (its pool), mid-task; the worker's main process lives
        on and starts new ones. Returns the pids killed."""
        killed = []
        for child in psutil.Process(self.process.pid).children():
            with contextlib.suppress(psutil.Error):
                child.kill()
                killed.append(child.pid)
        return killed

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait()
        self._log.close()


@pytest.fixture
def worker(transactional_db) -> Iterator[WorkerProcess]:
    """A fresh worker for one test; tests using it see committed rows only (transactional_db)."""
    process = WorkerProcess(f"w{os.getpid()}-{time.monotonic_ns() % 10**6}")
    yield process
    process.stop()


class BeatProcess:
    """A real ``celery beat`` on the session's services that schedules nothing but ticks (its
    tick is what ``/healthz`` reads: ``tests/beat_settings.py``)."""

    def __init__(self, tmp_path: Path) -> None:
        self.log_path = ARTIFACTS / "logs" / f"beat-{os.getpid()}-{time.monotonic_ns()}.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "portal.celery",
                "beat",
                "--loglevel",
                "INFO",
                "--schedule",
                str(tmp_path / "celerybeat-schedule"),
            ],
            cwd=ROOT,
            env=subprocess_env(DJANGO_SETTINGS_MODULE="tests.beat_settings"),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ticking(self, timeout: float = 60) -> None:
        from portal.models import WorkerHeartbeat

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"beat exited: {self.log_path.read_text()[-2000:]}")
            if WorkerHeartbeat.objects.filter(kind=WorkerHeartbeat.Kind.BEAT).exists():
                return
            time.sleep(0.2)
        raise RuntimeError(f"the beat did not tick; log: {self.log_path}")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait()
        self._log.close()


@pytest.fixture
def beat(transactional_db, tmp_path) -> Iterator[BeatProcess]:
    """A real beat for one test (``/healthz`` is 200 only while the beat ticks)."""
    process = BeatProcess(tmp_path)
    try:
        process.wait_ticking()
        yield process
    finally:
        process.stop()


class PortalServer:
    """uvicorn serving the real ASGI application on a free loopback port, started as
    ``./kb run`` starts it."""

    def __init__(self, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = ARTIFACTS / "logs" / f"web-{self.port}.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        from portal.management.commands.run import web_command

        self.process = subprocess.Popen(
            # The product's own command line (its flags are part of what is tested).
            web_command("127.0.0.1", self.port),
            cwd=ROOT,
            env=subprocess_env(**env),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            self._wait()
        except BaseException:
            self.stop()  # a server that starts after the wait gave up must not be left running
            raise

    def _wait(self, timeout: float = 60) -> None:
        import urllib.request

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"web server exited: {self.log_path.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/login/", timeout=2):
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("web server did not start")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
        self._log.close()


@pytest.fixture
def portal_server(transactional_db) -> Iterator[PortalServer]:
    server = PortalServer()
    yield server
    server.stop()


# --- browser --------------------------------------------------------------------------------------

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def _browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


def browser_page(browser, locale: str = "en-US"):
    """A fresh browser context sending ``Accept-Language`` for ``locale``."""
    context = browser.new_context(viewport={"width": 1280, "height": 860}, locale=locale)
    page = context.new_page()
    page.set_default_timeout(20_000)
    return page


@pytest.fixture
def page(_browser):
    # English explicitly: the browser tests' assertions read the English interface; the Russian
    # one is driven by tests/portal/test_i18n_pages.py.
    page = browser_page(_browser)
    yield page
    page.context.close()


def screenshot(page, name: str) -> Path:
    """Save a full-page screenshot as a CI artifact under artifacts/screenshots/."""
    path = ARTIFACTS / "screenshots" / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True)
    return path


def login(page, server_url: str, username: str, password: str = PASSWORD) -> None:
    page.goto(server_url + "/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)


# --- knowledge bases ------------------------------------------------------------------------------

CORPUS = ROOT.parent / "shared" / "corpus"


def ingest_folder(folder: Path, source: str, **options: object) -> dict:
    """Ingest a folder in-process (the `manage.py ingest` code path) and return its JSON summary."""
    import io
    import json

    from django.core.management import call_command

    out = io.StringIO()
    call_command("ingest", str(folder), source=source, json=True, stdout=out, **options)
    return json.loads(out.getvalue())


@pytest.fixture(scope="session")
def demo_kb(django_db_setup, django_db_blocker):
    """The demo knowledge base (QA Bible wiki + HSE app specifications), ingested once.

    For non-transactional (`db`) tests only: a transactional test flushes the database, and
    pytest-django runs those after all the others, so they cannot see it anyway.
    """
    from knowledge.demo import DEMO_SOURCES, plan_source
    from knowledge.embedding import build_second_embedder
    from knowledge.ingest.batch import register_planned
    from knowledge.ingest.pipeline import ingest_version
    from knowledge.ingest.registration import get_or_create_source
    from knowledge.ingest.second import fill_second_vectors

    with django_db_blocker.unblock():
        sources = {}
        for demo in DEMO_SOURCES:
            source = get_or_create_source(demo.name, kind=demo.kind, base_url=demo.base_url)
            for item in plan_source(CORPUS, demo):
                registration = register_planned(source, item, via="demo", enqueue=False)
                ingest_version(registration.version.pk)
            sources[demo.name] = source
        # The second vectors, as the workers make them after each version: every core here.
        fill_second_vectors(build_second_embedder(threads=os.cpu_count()))
        yield sources


def _django_group(item: pytest.Item) -> int:
    """pytest-django's order: 0 database tests, 1 transactional ones, 2 the rest."""
    marker = item.get_closest_marker("django_db")
    fixtures = getattr(item, "fixturenames", [])
    transactional = bool(
        marker and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences"))
    )
    transactional = transactional or "transactional_db" in fixtures or "live_server" in fixtures
    if transactional:
        return 1
    return 0 if (marker or "db" in fixtures) else 2


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests on the demo knowledge base run last among the database tests.

    ``demo_kb`` is committed once per session; every database test after it would see it. Run
    last, it is seen only by the tests that ask for it, and the transactional tests that follow
    flush it.
    """
    items.sort(
        key=lambda item: (_django_group(item), "demo_kb" in getattr(item, "fixturenames", []))
    )
