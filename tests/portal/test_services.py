"""The portal's own plumbing: real worker over real Redis, health, configuration errors."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import pytest
from django.db import transaction

from portal.embedded import redis_running, start_redis, stop_redis
from portal.models import WorkerHeartbeat
from portal.services_layout import embedded_layout
from tests.conftest import ROOT


def _wait_for(predicate, timeout: float = 30.0, step: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


def test_task_enqueued_on_commit_runs_on_a_real_worker(worker):
    from portal.tasks import heartbeat

    token = uuid.uuid4().hex
    with transaction.atomic():
        heartbeat.delay_on_commit(token)
        # Not sent before the commit: the worker must not see work for uncommitted rows.
        time.sleep(0.5)
        assert not WorkerHeartbeat.objects.filter(token=token).exists()
    assert _wait_for(lambda: WorkerHeartbeat.objects.filter(token=token).exists())
    beat = WorkerHeartbeat.objects.get(token=token)
    assert beat.worker.startswith(worker.name)


def test_task_enqueued_in_a_rolled_back_transaction_never_runs(worker):
    from portal.tasks import heartbeat

    token = uuid.uuid4().hex
    with pytest.raises(RuntimeError), transaction.atomic():
        heartbeat.delay_on_commit(token)
        raise RuntimeError("roll back")
    heartbeat.delay("after")  # a later task proves the worker was running all along
    assert _wait_for(lambda: WorkerHeartbeat.objects.filter(token="after").exists())
    assert not WorkerHeartbeat.objects.filter(token=token).exists()


@pytest.mark.skipif(bool(os.environ.get("REDIS_URL")), reason="needs the embedded Redis")
def test_healthz_turns_503_without_redis_and_200_when_it_is_back(
    worker, beat, client, alice, settings
):
    settings.HEALTH_CACHE_SECONDS = 0
    client.force_login(alice)  # staff see each service; anonymous callers only the status
    response = client.get("/healthz/services")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "ok"
    assert (
        body["services"]["database"]["ok"] and "pgvector" in body["services"]["database"]["detail"]
    )
    assert body["services"]["workers"]["ok"]

    layout = embedded_layout()
    stop_redis(layout)
    try:
        assert not redis_running(layout)
        response = client.get("/healthz/services")
        assert response.status_code == 503
        assert response.json()["services"]["redis"]["ok"] is False
    finally:
        start_redis(layout)
    # The worker reconnects to the broker on its own; health is green again once it answers.
    assert _wait_for(lambda: client.get("/healthz/services").status_code == 200, timeout=60, step=1)


def test_embedded_postgresql_runs_with_the_configured_page_cache(db, settings):
    from django.db import connection

    assert settings.EMBEDDED_POSTGRES  # the test session runs its own embedded server
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT setting::int * 8 / 1024 FROM pg_settings WHERE name = 'shared_buffers'"
        )
        assert cursor.fetchone()[0] == settings.EMBEDDED_PG_SHARED_BUFFERS_MB == 1024


def test_healthz_needs_no_login_and_reveals_nothing_but_the_status_and_the_slots(client, db):
    response = client.get("/healthz")
    assert response.status_code in (200, 503)
    assert set(response.json()) == {"status", "slots"}
    slots = {"pages", "streams", "arriving", "timed_out", "downloads"}  # counts, no names
    assert set(response.json()["slots"]) == slots


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("DATABASE_URL", "nonsense", "DATABASE_URL='nonsense' is not a valid URL"),
        ("REDIS_URL", "http://example", "REDIS_URL='http://example' is not a valid URL"),
        ("KB_DEBUG", "maybe", "KB_DEBUG='maybe' is not a boolean"),
        ("KB_PORT", "eighty", "KB_PORT='eighty' is not a whole number"),
        # A ranking weight, read by knowledge.retrieval.weights as the apps start.
        ("KB_SEARCH_MIN_SCORE", "low", "KB_SEARCH_MIN_SCORE='low' is not a number"),
        ("KB_SEARCH_RESULTS", "0", "KB_SEARCH_RESULTS=0 is below the minimum 1"),
        (
            "KB_HNSW_EF_CONSTRUCTION",
            "20",
            "KB_HNSW_EF_CONSTRUCTION=20 must be at least twice KB_HNSW_M=16",
        ),
    ],
)
def test_bad_configuration_fails_with_one_readable_line(variable, value, expected):
    result = _manage("check", **{variable: value})
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("knowledge-belt: configuration error:")
    assert expected in lines[0]


def test_unreachable_database_is_one_line_not_a_driver_traceback():
    result = _manage("migrate", DATABASE_URL="postgres://kb:kb@127.0.0.1:1/kb")
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "cannot connect to PostgreSQL at 127.0.0.1" in lines[0]


def test_check_deploy_with_production_settings_reports_no_warnings():
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        KB_DEBUG="0",
        KB_SECURE="1",
        KB_ALLOWED_HOSTS="kb.example.com",
        DJANGO_SECRET_KEY="x7#Kp2!vQz9@Lm4$Rt8^Wn3&Yb6*Hc1(Jd5)Fg0-Se2+Ua7=Xi4_Zo9~Me3",
        KB_CSRF_TRUSTED_ORIGINS="https://kb.example.com",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
