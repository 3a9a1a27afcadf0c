"""Health of the services the portal depends on, for ``/healthz``.

``/healthz`` answers 200 when the database, Redis, a worker and the beat (its last tick) are
up. It needs no login, so it must stay cheap whatever the number of callers: the
services are checked at most once per ``KB_HEALTH_CACHE_SECONDS`` per web process, by one
request at a time (the others get the last result, never a queue of their own checks), and
no check talks to the Celery broker. Workers are seen through the heartbeat rows they write
themselves (``portal.heartbeat``), not through ``app.control.ping()``: a broadcast ping from
many web threads at once shares one broker connection pool and hangs, each hung request
keeping a thread and a database connection (the denial of service this module once had).

While a process has not yet seen the portal healthy once (the services and the worker still
coming up), a 503 is what a start looks like, not a failure: it is logged at INFO with the
reason. After that a 503 is an error again, logged as Django logs any server error.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import asdict, dataclass
from datetime import timedelta

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.utils.module_loading import import_string

from portal.capacity import slots_in_use
from portal.models import WorkerHeartbeat

logger = logging.getLogger(__name__)


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
    client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1, socket_connect_timeout=1)
    try:
        client.ping()
    finally:
        client.close()
    return "ping ok"


def _workers() -> str:
    fresh = timezone.now() - timedelta(seconds=settings.WORKER_HEARTBEAT_STALE_SECONDS)
    count = WorkerHeartbeat.objects.filter(
        kind=WorkerHeartbeat.Kind.WORKER, beat_at__gte=fresh
    ).count()
    if not count:
        raise RuntimeError(
            f"no Celery worker sent a heartbeat in {settings.WORKER_HEARTBEAT_STALE_SECONDS} s"
        )
    return f"{count} worker(s)"


def _beat() -> str:
    """The beat's last tick (``portal.beat``): without the beat no schedule runs (stalled
    ingests stay stalled, sources do not sync, the drop folder is not read)."""
    last = (
        WorkerHeartbeat.objects.filter(kind=WorkerHeartbeat.Kind.BEAT)
        .order_by("-beat_at")
        .values_list("worker", "beat_at")
        .first()
    )
    if last is None:
        raise RuntimeError("the beat never ticked: no schedule runs")
    ago = (timezone.now() - last[1]).total_seconds()
    if ago > settings.WORKER_HEARTBEAT_STALE_SECONDS:
        raise RuntimeError(
            f"the beat's last tick was {ago:.0f} s ago ({last[0]}): no schedule runs"
        )
    return f"last tick {ago:.0f} s ago ({last[0]})"


def service_states() -> dict[str, ServiceState]:
    """Check the database, Redis and the Celery workers now; each check is bounded. The
    optional checks (``HEALTH_OPTIONAL_CHECKS``: OCR) are reported but never make the portal
    unhealthy: without them some files are refused, everything else works.

    Callers that may run often (``/healthz``) use ``cached_service_states`` instead.
    """
    states = {"database": _timed(_database), "redis": _timed(_redis)}
    for name, check in (("workers", _workers), ("beat", _beat)):
        if states["database"].ok:
            states[name] = _timed(check)
        else:
            states[name] = ServiceState(ok=False, detail="database is down", ms=0.0)
    for name, dotted in settings.HEALTH_OPTIONAL_CHECKS.items():
        states[name] = _timed(import_string(dotted))
    return states


_lock = threading.Lock()
_last: tuple[float, dict[str, ServiceState]] | None = None
_up_once = False  # this process has answered "ok" at least once
_UNKNOWN = {"checking": ServiceState(ok=False, detail="first check still running", ms=0.0)}


def cached_service_states() -> dict[str, ServiceState]:
    """The last check if it is fresh enough; else one caller checks while the others wait
    briefly, then take the last result (a flood of callers costs one check per period)."""
    global _last
    last = _last
    if last and time.monotonic() - last[0] < settings.HEALTH_CACHE_SECONDS:
        return last[1]
    if not _lock.acquire(timeout=1.0):
        return _last[1] if _last else _UNKNOWN
    try:
        last = _last
        if last and time.monotonic() - last[0] < settings.HEALTH_CACHE_SECONDS:
            return last[1]
        states = service_states()
        _last = (time.monotonic(), states)
        return states
    finally:
        _lock.release()


def forget_cached_states() -> None:
    """Drop the cached result and the memory of having been up (tests that change a service
    and look again at once, or start the portal anew)."""
    global _last, _up_once
    with _lock:
        _last = None
        _up_once = False


def as_json(states: dict[str, ServiceState], *, details: bool = True) -> dict[str, object]:
    required = [s for name, s in states.items() if name not in settings.HEALTH_OPTIONAL_CHECKS]
    payload: dict[str, object] = {"status": "ok" if all(s.ok for s in required) else "degraded"}
    if details:
        payload["services"] = {name: asdict(state) for name, state in states.items()}
    return payload


class HealthCheckMiddleware:
    """``GET /healthz`` answered first, before sessions and users: a load balancer's probe (or a
    flood of callers with made-up session cookies) never costs a session lookup, and the answer
    is the status (200 ok / 503 degraded) and this web process's slots in use
    (``portal.capacity.slots_in_use``), nothing about the services: staff read each service's
    state at ``/healthz/services``."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path != "/healthz":
            return self.get_response(request)
        if request.method not in ("GET", "HEAD"):
            response = HttpResponse(status=405)
            response["Allow"] = "GET, HEAD"
            return response
        states = cached_service_states()
        payload = as_json(states, details=False)
        # The slots are this web process's load, not a service's state: a full portal is up
        # (it answers 503 with Retry-After per request), so they never change the status.
        payload["slots"] = slots_in_use()
        response = JsonResponse(payload, status=200 if payload["status"] == "ok" else 503)
        add_never_cache_headers(response)
        _log_startup(response, states)
        return response


def _log_startup(response: HttpResponse, states: dict[str, ServiceState]) -> None:
    """Until the first "ok", a 503 is the portal starting: logged at INFO with what is not up
    yet, and kept out of Django's error log (``django.request`` skips a response marked as
    logged). From the first "ok" on, Django logs a 503 as the error it then is."""
    global _up_once
    if response.status_code == 200:
        _up_once = True
    elif not _up_once:
        waiting = ", ".join(
            f"{name} ({state.detail})"
            for name, state in states.items()
            if not state.ok and name not in settings.HEALTH_OPTIONAL_CHECKS
        )
        logger.info("/healthz: starting, not up yet: %s", waiting)
        response._has_been_logged = True  # type: ignore[attr-defined]
