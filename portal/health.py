"""Health of the services the portal depends on, for ``/healthz`` and the run command."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from django.conf import settings
from django.db import connection


@dataclass(frozen=True)
class ServiceState:
    ok: bool
    detail: str
    ms: float


def _timed(check) -> ServiceState:
    started = time.perf_counter()
    try:
        detail = check()
        ok = True
    except Exception as exc:  # noqa: BLE001 - any failure is "down", reported in words
        detail = (
            f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        )
        ok = False
    return ServiceState(ok=ok, detail=detail, ms=round((time.perf_counter() - started) * 1000, 1))


def _database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    return f"postgresql, pgvector {row[0]}" if row else "postgresql, pgvector missing"


def _redis() -> str:
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1, socket_connect_timeout=1)
    try:
        client.ping()
    finally:
        client.close()
    return "ping ok"


def _workers() -> str:
    from portal.celery import app

    replies = app.control.ping(timeout=1.0)
    if not replies:
        raise RuntimeError("no Celery worker answered")
    return f"{len(replies)} worker(s)"


def service_states() -> dict[str, ServiceState]:
    """Check the database, Redis and the Celery workers; each check has its own short timeout."""
    states = {"database": _timed(_database), "redis": _timed(_redis)}
    if states["redis"].ok:
        states["workers"] = _timed(_workers)
    else:
        states["workers"] = ServiceState(ok=False, detail="Redis is down", ms=0.0)
    return states


def as_json(states: dict[str, ServiceState]) -> dict[str, object]:
    return {
        "status": "ok" if all(s.ok for s in states.values()) else "degraded",
        "services": {name: asdict(state) for name, state in states.items()},
    }
