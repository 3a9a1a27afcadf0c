"""A web process that stays within bounds under a flood: it answers 503 with ``Retry-After``
instead of opening a PostgreSQL connection per request until the server refuses them all.

Under ASGI every synchronous request runs in a thread of its own, and Django keeps one database
connection per thread: 200 requests at once were 200 connections, "too many clients" (500) for
the rest, and connections of finished threads left open for minutes. Now:

- **A pool** (``use_connection_pool``, Django's psycopg pool): the web server's processes share
  ``KB_DB_WEB_CONNECTIONS`` connections, each process its share; a request takes one for as
  long as it runs and gives it back; above the pool's minimum (one), a connection left unused
  is closed every ``KB_DB_POOL_IDLE_SECONDS`` (psycopg's pool shrinks one at a time), so after a
  flood the count goes back to idle within about pool size x that period. Only the web server uses it: Celery's prefork
  workers would inherit an open pool across ``fork``; they keep one connection each.
- **A ceiling** (``CapacityLimit``): at most ``KB_WEB_CONCURRENCY`` requests of a process at
  once; the next get 503 with ``Retry-After`` at once, before a thread or a connection is
  taken. ``/healthz`` is not counted (it takes neither; ``portal.health``).
- **A busy database is a 503** (``server_error``): a request that waited
  ``KB_DB_POOL_TIMEOUT`` s for a connection, or that PostgreSQL refused, is told to come back,
  never answered 500.
"""

from __future__ import annotations

import json as _json
import logging
import sys

from django.conf import settings
from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.views import defaults
from starlette.types import ASGIApp, Receive, Scope, Send

logger = logging.getLogger(__name__)
HEALTHZ = "/healthz"


def pool_size() -> int:
    """Connections of one web process: the web server's share split between its processes."""
    return max(2, settings.DB_WEB_CONNECTIONS // settings.RUN_WEB_WORKERS)


def use_connection_pool() -> None:
    """Switch this process's database connections to a bounded pool; call before the first
    query (the web server's entry point, ``portal.asgi``)."""
    database = settings.DATABASES["default"]
    database["CONN_MAX_AGE"] = 0  # a connection goes back to the pool when its request ends
    database.setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": pool_size(),
        "timeout": settings.DB_POOL_TIMEOUT,
        "max_idle": float(settings.DB_POOL_IDLE_SECONDS),
        "name": "knowledge-belt-web",
    }


def release_connection() -> None:
    """Give this thread's pooled connection back while it waits on something else (a streamed
    answer between two tokens of the LLM): a conversation of a minute must not hold one of the
    pool's few connections for that minute. Nothing without a pool, or inside a transaction."""
    from django.db import connection

    if getattr(connection, "pool", None) is not None and not connection.in_atomic_block:
        connection.close()


def busy_message() -> str:
    return _("The portal is busy; try again in %(seconds)d s.") % {
        "seconds": settings.RETRY_AFTER_SECONDS
    }


class CapacityLimit:
    """ASGI: at most ``limit`` HTTP requests of this process at once (one event loop per
    process, so a plain counter is exact); the next are answered 503 with ``Retry-After``."""

    def __init__(self, app: ASGIApp, limit: int | None = None) -> None:
        self.app = app
        self.limit = limit or settings.WEB_CONCURRENCY
        self.running = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] == HEALTHZ:
            await self.app(scope, receive, send)
            return
        if self.running >= self.limit:
            await _unavailable(send, json=scope["path"].startswith(("/api/", "/mcp")))
            return
        self.running += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.running -= 1


async def _unavailable(send: Send, *, json: bool) -> None:
    if json:
        body = _json.dumps({"error": busy_message()}, ensure_ascii=False).encode()
        content_type = b"application/json"
    else:
        body = (busy_message() + "\n").encode()
        content_type = b"text/plain; charset=utf-8"
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", str(settings.RETRY_AFTER_SECONDS).encode()),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: the database busy or down is a 503 with ``Retry-After`` (JSON for the
    API); anything else is the plain 500 page."""
    error = sys.exc_info()[1]
    if not isinstance(error, OperationalError):
        return defaults.server_error(request)
    logger.warning("503: the database is busy or down (%s)", error)
    message = busy_message()
    if request.path.startswith("/api/"):
        response = JsonResponse(
            {"error": message}, status=503, json_dumps_params={"ensure_ascii": False}
        )
    else:
        response = HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(settings.RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response
