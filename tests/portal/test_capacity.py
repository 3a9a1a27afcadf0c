"""A web server that stays within bounds: a flood gets 503 with Retry-After (never 500), holds
no more PostgreSQL connections than its pool, and leaves none behind; /healthz reads no session.

Against the real server (uvicorn, started as ./kb run starts it) with small limits, so the
floods of the attack fit on a test machine.
"""

from __future__ import annotations

import secrets
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
import pytest
from django.db import connection

from knowledge.embedding import get_embedder
from portal.api_auth import create_token
from portal.health import forget_cached_states
from tests.conftest import ROOT, PortalServer
from tests.knowledge.retrieval.conftest import add_document, make_source

SMALL = {
    "KB_WEB_CONCURRENCY": "24",
    "KB_DB_WEB_CONNECTIONS": "3",
    "KB_DB_POOL_TIMEOUT": "2",
    "KB_DB_POOL_IDLE_SECONDS": "2",
    "KB_RATE_SEARCH_PER_MINUTE": "100000",
}


def _connections() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        return cursor.fetchone()[0]


class Peak:
    """The most connections to the test database seen while a flood runs."""

    def __init__(self) -> None:
        self.value = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        from django.db import connection as own

        while not self._stop.is_set():
            with own.cursor() as cursor:
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                )
                self.value = max(self.value, cursor.fetchone()[0])
            time.sleep(0.02)
        own.close()

    def __enter__(self) -> Peak:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def _flood(url: str, calls: int, headers) -> list[httpx2.Response]:
    limits = httpx2.Limits(max_connections=calls, max_keepalive_connections=0)
    with httpx2.Client(timeout=60, limits=limits) as client:

        def call(_: int) -> httpx2.Response:
            return client.get(url, headers=headers())

        with ThreadPoolExecutor(max_workers=calls) as pool:
            return list(pool.map(call, range(calls)))


def _settle(expected: int, timeout: float = 20) -> int:
    deadline = time.monotonic() + timeout
    while (now := _connections()) > expected and time.monotonic() < deadline:
        time.sleep(0.5)
    return now


@pytest.fixture
def small_server(transactional_db):
    server = PortalServer(**SMALL)
    yield server
    server.stop()


def _random_session() -> dict[str, str]:
    return {"Cookie": f"sessionid={secrets.token_hex(16)}"}


def test_a_flood_of_made_up_session_cookies_is_answered_within_the_pool(worker, beat, small_server):
    # With a worker and the beat /healthz is 200 ("ok"); the pool opened by a first request.
    assert httpx2.get(small_server.url + "/healthz", timeout=30).status_code == 200
    httpx2.get(small_server.url + "/login/", timeout=30)
    idle = _connections()
    with Peak() as peak:
        login = _flood(small_server.url + "/login/", 200, _random_session)
        health = _flood(small_server.url + "/healthz", 200, _random_session)
    statuses = {r.status_code for r in login + health}
    assert statuses <= {200, 503}, statuses  # never "500 too many clients"
    assert all(r.headers.get("retry-after") for r in login + health if r.status_code == 503)
    assert sum(r.status_code == 200 for r in login) >= 24  # the ceiling's worth, at least
    assert all(r.status_code == 200 for r in health)  # not counted: it takes no connection
    # At most the pool (3) besides the connections that were there: the test's own, the
    # sampler's, the pool's first.
    assert peak.value <= idle + 1 + 3, (idle, peak.value)
    # Idle connections above the pool's minimum close again.
    assert _settle(idle + 1) <= idle + 1


def test_150_parallel_api_searches_get_answers_or_503_never_500(small_server, bob):
    embedder = get_embedder()
    source = make_source("Office", is_public=True)
    for i in range(6):
        add_document(
            source,
            f"page-{i}.md",
            f"# Пропуск {i}\n\nПропуск номер {i} выдают на ресепшене.",
            embedder,
        )
    _, token = create_token(bob, "agent")
    auth = {"Authorization": f"Bearer {token}"}
    httpx2.get(small_server.url + "/login/", timeout=30)
    idle = _connections()
    with Peak() as peak:
        answers = _flood(small_server.url + "/api/v1/search?q=пропуск", 150, lambda: auth)
    statuses = {r.status_code for r in answers}
    assert statuses <= {200, 503}, statuses
    unavailable = [r for r in answers if r.status_code == 503]
    assert all(r.headers["retry-after"] == "5" and "busy" in r.json()["error"] for r in unavailable)
    assert any(r.status_code == 200 for r in answers)
    assert peak.value <= idle + 1 + 3, (idle, peak.value)


def test_healthz_reads_no_session_even_with_a_session_cookie(
    client, db, settings, django_assert_num_queries
):
    settings.HEALTH_CACHE_SECONDS = 600
    forget_cached_states()
    client.get("/healthz")  # the shared check runs once
    client.cookies["sessionid"] = secrets.token_hex(16)
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert set(response.json()) == {"status", "slots"}  # no service's details
    assert "no-cache" in response["Cache-Control"] or "no-store" in response["Cache-Control"]
    forget_cached_states()


def test_staff_read_each_services_state_at_healthz_services(client, alice, bob, settings):
    settings.HEALTH_CACHE_SECONDS = 0
    forget_cached_states()
    assert client.get("/healthz/services").status_code == 302  # to the login page
    client.force_login(bob)
    assert client.get("/healthz/services").status_code in (302, 403)
    client.force_login(alice)
    body = client.get("/healthz/services").json()
    assert set(body["services"]) == {
        "database",
        "redis",
        "workers",
        "beat",
        "ocr",
        "llm",
    }  # optional: OCR, LLM


def test_the_deployed_command_lines_carry_the_run_commands_bounds():
    """systemd, compose and ./kb run start uvicorn with the same safety flags, and the unit
    passes KB_WEB_WORKERS as --workers, so the portal splits its pool by the real number."""
    from portal.management.commands.run import web_command

    sys.path.insert(0, str(Path(ROOT, "deploy", "checks")))
    from production import expand, read_unit

    ours = web_command("127.0.0.1", 8000)
    unit = read_unit(Path(ROOT, "deploy/systemd/kb-web.service"))
    unit_args = expand(unit.start, home=Path("/srv/kb"), env=unit.environment)
    assert unit_args[:4] == ["/srv/kb/.venv/bin/python", "-m", "uvicorn", "portal.asgi:application"]
    compose = Path(ROOT, "deploy/docker-compose.yml").read_text()
    for flag in ("--no-proxy-headers", "--limit-concurrency", "--http", "--ws"):
        assert flag in ours and flag in unit_args and f'"{flag}"' in compose
    for flag in ("--http", "--ws"):  # the deadlines' protocol, no WebSocket
        assert unit_args[unit_args.index(flag) + 1] == ours[ours.index(flag) + 1]
    assert ours[ours.index("--http") + 1] == "portal.deadlines:DeadlineProtocol"
    assert "--proxy-headers" not in unit_args and '"--proxy-headers"' not in compose
    limit = unit_args[unit_args.index("--limit-concurrency") + 1]
    assert limit == ours[ours.index("--limit-concurrency") + 1]  # KB_WEB_CONNECTIONS' default
    assert "--workers ${KB_WEB_WORKERS}" in unit.start
