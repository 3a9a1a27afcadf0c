"""/healthz under a flood of anonymous callers, against the real server (uvicorn) and worker.

It used to ping the workers through the broker on every request: twenty parallel callers hung
every later one, each hung request holding a web thread and a PostgreSQL connection until the
server ran out of connections. Now it reads the workers' heartbeat rows, checks at most once
per period per process and shares that check between concurrent callers.
"""

from __future__ import annotations

import logging
import re
from concurrent.futures import ThreadPoolExecutor

import httpx2
import pytest
from django.db import connection

from portal.health import forget_cached_states
from tests.conftest import PASSWORD, BeatProcess, PortalServer
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
    worker, beat, server, alice
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


def test_healthz_reads_the_beats_last_tick_and_turns_503_without_it(
    worker, client, alice, settings, tmp_path
):
    """Every schedule (stalled ingests, source syncs, the drop folder) runs only while the beat
    does: a portal whose beat died said 200 all the same."""
    from portal.models import WorkerHeartbeat

    settings.HEALTH_CACHE_SECONDS = 0
    client.force_login(alice)
    assert _wait_for(WorkerHeartbeat.objects.filter(worker__startswith=worker.name).exists)
    response = client.get("/healthz/services")
    assert response.status_code == 503  # a worker alone: nothing scheduled would ever run
    assert response.json()["services"]["beat"] == {
        **response.json()["services"]["beat"],
        "ok": False,
        "detail": "RuntimeError: the beat never ticked: no schedule runs",
    }

    beat = BeatProcess(tmp_path)
    try:
        beat.wait_ticking()
        body = client.get("/healthz/services").json()
        assert body["status"] == "ok"
        assert body["services"]["beat"]["detail"].startswith("last tick ")
    finally:
        beat.stop()
    # A beat stopped on purpose takes its tick with it: red at once, not after the stale limit.
    assert client.get("/healthz/services").status_code == 503


def test_a_beat_silent_longer_than_the_stale_limit_turns_healthz_503(client, alice, settings, db):
    from datetime import timedelta

    from django.utils import timezone

    from portal.models import WorkerHeartbeat

    settings.HEALTH_CACHE_SECONDS = 0
    settings.WORKER_HEARTBEAT_STALE_SECONDS = 30
    client.force_login(alice)
    WorkerHeartbeat.objects.create(worker="w@host")
    tick = WorkerHeartbeat.objects.create(worker="beat@host", kind=WorkerHeartbeat.Kind.BEAT)
    WorkerHeartbeat.objects.filter(pk=tick.pk).update(
        beat_at=timezone.now() - timedelta(seconds=45)
    )
    response = client.get("/healthz/services")
    assert response.status_code == 503
    detail = response.json()["services"]["beat"]["detail"]
    assert re.search(r"the beat's last tick was 4\d s ago \(beat@host\)", detail), detail
    assert (
        response.json()["services"]["workers"]["detail"] == "1 worker(s)"
    )  # the beat is no worker
    WorkerHeartbeat.objects.filter(pk=tick.pk).update(beat_at=timezone.now())
    assert client.get("/healthz/services").status_code == 200


def test_healthz_logs_the_start_at_info_and_a_later_outage_as_an_error(
    client, settings, caplog, db
):
    """On a first start probes see 503 until the worker's first heartbeat: that is the portal
    starting, not an error a new user should read; once it was up, a 503 is an error again."""
    from portal.models import WorkerHeartbeat

    settings.HEALTH_CACHE_SECONDS = 0
    forget_cached_states()  # a process that has not been up yet
    with caplog.at_level(logging.INFO):
        assert client.get("/healthz").status_code == 503
        assert client.get("/healthz").status_code == 503
    assert [r.levelname for r in caplog.records if r.levelno >= logging.WARNING] == []
    starting = [r for r in caplog.records if r.name == "portal.health"]
    assert [r.levelname for r in starting] == ["INFO", "INFO"]
    assert "workers (RuntimeError: no Celery worker sent a heartbeat" in starting[0].getMessage()

    beat = WorkerHeartbeat.objects.create(worker="w@host")
    tick = WorkerHeartbeat.objects.create(worker="beat@host", kind=WorkerHeartbeat.Kind.BEAT)
    assert client.get("/healthz").status_code == 200
    beat.delete()
    tick.delete()
    caplog.clear()
    with caplog.at_level(logging.INFO):
        assert client.get("/healthz").status_code == 503
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [(r.name, r.getMessage()) for r in errors] == [
        ("django.request", "Service Unavailable: /healthz")
    ]
    forget_cached_states()
