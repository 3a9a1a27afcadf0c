"""/healthz under a flood of anonymous callers, against the real server (uvicorn) and worker.

It used to ping the workers through the broker on every request: twenty parallel callers hung
every later one, each hung request holding a web thread and a PostgreSQL connection until the
server ran out of connections. Now it reads the workers' heartbeat rows, checks at most once
per period per process and shares that check between concurrent callers.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import httpx2
import pytest
from django.db import connection

from portal.health import forget_cached_states
from tests.conftest import PASSWORD, PortalServer
from tests.portal.test_services import _wait_for


def _connections() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        return cursor.fetchone()[0]


def _login(base: str, username: str) -> int:
    with httpx2.Client(base_url=base, timeout=30) as client:
        page = client.get("/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        response = client.post(
            "/login/",
            data={"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token},
        )
        return response.status_code


@pytest.fixture
def server(transactional_db):
    server = PortalServer()
    yield server
    server.stop()


def test_two_hundred_concurrent_anonymous_healthz_all_answer_and_hold_no_connections(
    worker, server, alice
):
    with httpx2.Client(base_url=server.url, timeout=30) as client:
        assert client.get("/healthz").status_code == 200  # warm: one check, one connection
    before = _connections()

    def probe(_: int) -> tuple[int, dict]:
        # A generous timeout only tells an answer from a hang; speed is benchmarks/health.py's.
        response = httpx2.get(server.url + "/healthz", timeout=30)
        return response.status_code, response.json()

    with ThreadPoolExecutor(max_workers=100) as pool:
        flood = pool.map(probe, range(200))
        login_status = _login(server.url, "alice")  # sign-in keeps working meanwhile
        results = list(flood)

    assert login_status == 302
    assert [status for status, _ in results] == [200] * 200
    # Anonymous callers learn the status and the slots, nothing about the services behind it.
    assert all(body["status"] == "ok" and set(body) == {"status", "slots"} for _, body in results)
    # Callers share one check: the flood leaves no PostgreSQL connection behind it.
    assert _connections() <= before + 2
    with httpx2.Client(base_url=server.url, timeout=30) as client:
        assert client.get("/healthz").status_code == 200


def test_healthz_counts_workers_by_their_heartbeat_and_forgets_a_stopped_one(
    worker, client, alice, settings
):
    from portal.models import WorkerHeartbeat

    settings.HEALTH_CACHE_SECONDS = 0
    client.force_login(alice)
    # The worker writes its heartbeat as soon as it is ready, without any task being sent.
    assert _wait_for(WorkerHeartbeat.objects.filter(worker__startswith=worker.name).exists)
    body = client.get("/healthz/services").json()
    assert body["services"]["workers"] == {**body["services"]["workers"], "ok": True}
    assert body["services"]["workers"]["detail"] == "1 worker(s)"

    worker.stop()
    forget_cached_states()
    assert not WorkerHeartbeat.objects.filter(worker__startswith=worker.name).exists()
    response = client.get("/healthz/services")
    assert response.status_code == 503
    assert response.json()["services"]["workers"]["ok"] is False


def test_healthz_ignores_a_heartbeat_older_than_the_stale_limit(client, alice, settings, db):
    from datetime import timedelta

    from django.utils import timezone

    from portal.models import WorkerHeartbeat

    settings.HEALTH_CACHE_SECONDS = 0
    settings.WORKER_HEARTBEAT_STALE_SECONDS = 30
    client.force_login(alice)
    beat = WorkerHeartbeat.objects.create(worker="old@host")
    WorkerHeartbeat.objects.filter(pk=beat.pk).update(
        beat_at=timezone.now() - timedelta(seconds=31)
    )
    assert client.get("/healthz/services").json()["services"]["workers"]["ok"] is False
    WorkerHeartbeat.objects.filter(pk=beat.pk).update(beat_at=timezone.now())
    assert client.get("/healthz/services").json()["services"]["workers"]["ok"] is True
