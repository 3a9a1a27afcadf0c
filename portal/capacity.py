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
- **Slots** (``CapacityLimit``): at most ``KB_WEB_CONCURRENCY`` requests of a process at
  once; the next get 503 with ``Retry-After`` at once, before a thread or a connection is
  taken. A request takes its slot only once its body has arrived: a body sent a byte at a time
  holds a socket, never a slot (``portal.deadlines`` ends it), where it held one for as long as
  its sender liked (issue 40). Long-lived streams (the chat's answer events, ``STREAM_PATHS``
  in the settings) have slots of their own, ``KB_WEB_STREAMS``, so a page never waits behind
  them, and at most ``KB_STREAMS_PER_USER`` of them are one user's (``claim_stream``, in the
  view that knows the user); at most ``KB_DOWNLOADS_PER_USER`` files go to one user at once
  (``claim_download``), and a staff session's large upload, which takes its slot before its
  body is in, holds one of ``KB_UPLOADS_PER_USER`` places (``claim_upload``). ``/healthz`` is not counted (it takes neither; ``portal.health``)
  and reports them (``slots_in_use``).
- **No connection held while a response goes out** (``ConnectionReleasingHandler``): a
  request's pooled connection goes back once its response is made, before the first byte is
  sent; 24 slow readers of a 20 MB download held 20 of them to their last byte (issue 50).
- **A busy database is a 503** (``server_error``): a request that waited
  ``KB_DB_POOL_TIMEOUT`` s for a connection, or that PostgreSQL refused, is told to come back,
  never answered 500.
"""

from __future__ import annotations

import json as _json
import logging
import re
import sys
import threading
from collections import Counter

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.handlers.asgi import ASGIHandler
from django.db import OperationalError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.views import defaults
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from portal import deadlines

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
    if getattr(connection, "pool", None) is not None and not connection.in_atomic_block:
        connection.close()


class ConnectionReleasingHandler(ASGIHandler):
    """Django's ASGI handler, giving the request's pooled database connection back as soon as
    its response is made, before a byte of it is sent: what a response needs of the database
    it has read by then, and the client decides how long the sending takes. Django gives it
    back only at the end (``request_finished``); a response that reads the database while it
    streams (a chat answer) takes one again and gives it back itself."""

    async def run_get_response(self, request: HttpRequest) -> HttpResponse:
        response = await super().run_get_response(request)
        # In the request's own thread (thread-sensitive), where its connection lives.
        await sync_to_async(release_connection)()
        return response


def busy_message() -> str:
    return _("The portal is busy; try again in %(seconds)d s.") % {
        "seconds": settings.RETRY_AFTER_SECONDS
    }


class Slots:
    """This process's slots in use. The counters change on the event loop (one per process);
    the per-user counts of streams and downloads also in a view's thread, hence the lock."""

    def __init__(self) -> None:
        self.pages = 0
        self.streams = 0
        self.arriving = 0  # requests whose body is still coming in (they hold no slot)
        self.page_limit = settings.WEB_CONCURRENCY
        self.stream_limit = settings.WEB_STREAMS
        self.per_user: Counter[object] = Counter()
        self.lock = threading.Lock()


SLOTS = Slots()
PLACES = "knowledge_belt.places"  # the ASGI scope key of a request's Places


class Places:
    """A request's claims on its user's places of each kind in this web process (answer streams,
    downloads), given back when the request ends, however it ends (``CapacityLimit`` holds them;
    the view names the user)."""

    def __init__(self, slots: Slots) -> None:
        self.slots = slots
        self.held: list[tuple[str, object]] = []

    def claim(self, kind: str, user_key: object, limit: int) -> bool:
        key = (kind, user_key)
        with self.slots.lock:
            if key in self.held:
                return True
            if self.slots.per_user[key] >= limit:
                return False
            self.slots.per_user[key] += 1
            self.held.append(key)
            return True

    def release(self) -> None:
        with self.slots.lock:
            for key in self.held:
                self.slots.per_user[key] -= 1
                if self.slots.per_user[key] <= 0:
                    del self.slots.per_user[key]
            self.held.clear()


def _claim(request: HttpRequest, kind: str, user_key: object, limit: int) -> bool:
    """A request not served through ``CapacityLimit`` (the test client, a WSGI server) has no
    places to claim and may always go on."""
    places = getattr(request, "scope", {}).get(PLACES)
    return places is None or places.claim(kind, user_key, limit)


def claim_stream(request: HttpRequest, user_key: object) -> bool:
    """For a view answering with a long-lived stream: take one of ``user_key``'s stream places
    in this web process; False when the user already has ``KB_STREAMS_PER_USER`` open (answer
    ``too_many_streams()``)."""
    return _claim(request, "stream", user_key, settings.STREAMS_PER_USER)


def claim_upload(scope: Scope, user_key: object) -> bool:
    """For an upload taking its slot before its body is in (``portal.uploads``, a staff
    session's large body): take one of ``user_key``'s upload places in this web process; False
    when the user already has ``KB_UPLOADS_PER_USER`` bodies coming. 70 slow uploads of one
    staff session held all 64 slots (issue 50)."""
    places = scope.get(PLACES)
    return places is None or places.claim("upload", user_key, settings.UPLOADS_PER_USER)


def claim_download(request: HttpRequest, user_key: object) -> bool:
    """For a view sending a file: take one of ``user_key``'s download places in this web
    process; False when the user already has ``KB_DOWNLOADS_PER_USER`` files coming (answer
    ``too_many_downloads()``). A download holds its page slot while its bytes go out, however
    slowly they are read: one user's readers must not take the slots everyone's pages need."""
    return _claim(request, "download", user_key, settings.DOWNLOADS_PER_USER)


def _too_many(message: str) -> HttpResponse:
    response = HttpResponse(message, status=429, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(settings.RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response


def too_many_streams() -> HttpResponse:
    return _too_many(
        _("You have too many answers streaming at once; try again in %(seconds)d s.")
        % {"seconds": settings.RETRY_AFTER_SECONDS}
    )


def too_many_downloads() -> HttpResponse:
    return _too_many(
        _("You have too many downloads under way; try again in %(seconds)d s.")
        % {"seconds": settings.RETRY_AFTER_SECONDS}
    )


def slots_in_use() -> dict[str, object]:
    """This web process's slots, for ``/healthz``: pages and streams in use and their limits,
    requests whose body is still arriving, open connections and the connections cut by each
    deadline since the process started (``portal.deadlines``)."""
    report: dict[str, object] = {
        "pages": {"in_use": SLOTS.pages, "limit": SLOTS.page_limit},
        "streams": {"in_use": SLOTS.streams, "limit": SLOTS.stream_limit},
        "downloads": sum(n for (kind, _), n in SLOTS.per_user.items() if kind == "download"),
        "arriving": SLOTS.arriving,
        "timed_out": {phase: deadlines.cut[phase] for phase in ("head", "body", "send")},
    }
    connections = deadlines.open_connections()
    if connections is not None:
        report["connections"] = {"open": connections, "limit": settings.WEB_CONNECTIONS}
    return report


class CapacityLimit:
    """ASGI: the slots above (one event loop per process, so plain counters are exact); a
    request over its kind's limit is answered 503 with ``Retry-After``."""

    def __init__(self, app: ASGIApp, limit: int | None = None) -> None:
        self.app = app
        self.slots = SLOTS
        self.slots.page_limit = limit or settings.WEB_CONCURRENCY
        self.streams = [re.compile(pattern) for pattern in settings.STREAM_PATHS]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] == HEALTHZ:
            await self.app(scope, receive, send)
            return
        declared = declared_length(scope)
        if declared is not None and declared > settings.MAX_BODY_KB * 1024:
            # Refused at once by the size limit (portal.uploads), or a staff upload: either way
            # the application must see it now, not once the body is in.
            replay: Receive | None = receive
        else:
            replay = await self._body_first(receive)
        if replay is None:  # gone before its body arrived (or cut: portal.deadlines)
            return
        if any(pattern.match(scope["path"]) for pattern in self.streams):
            await self._stream(scope, replay, send)
        else:
            await self._page(scope, replay, send)

    async def _page(self, scope: Scope, receive: Receive, send: Send) -> None:
        slots = self.slots
        if slots.pages >= slots.page_limit:
            await _unavailable(send, json=scope["path"].startswith(("/api/", "/mcp")))
            return
        places = Places(slots)
        slots.pages += 1
        try:
            await self.app({**scope, PLACES: places}, receive, send)
        finally:
            slots.pages -= 1
            places.release()

    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        slots = self.slots
        if slots.streams >= slots.stream_limit:
            await _unavailable(send, json=False)
            return
        places = Places(slots)
        slots.streams += 1
        try:
            await self.app({**scope, PLACES: places}, receive, send)
        finally:
            slots.streams -= 1
            places.release()

    async def _body_first(self, receive: Receive) -> Receive | None:
        """The request's body read before it takes a slot, up to ``KB_MAX_BODY_KB`` (a longer
        one without a declared length streams on once that much is in, and ``portal.uploads``
        decides); then handed to the application as it came. None if the client went away
        meanwhile."""
        messages: list[Message] = []
        size = 0
        self.slots.arriving += 1
        try:
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    return None
                messages.append(message)
                size += len(message.get("body", b""))
                if not message.get("more_body", False) or size > settings.MAX_BODY_KB * 1024:
                    break
        finally:
            self.slots.arriving -= 1

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        return replay


def declared_length(scope: Scope) -> int | None:
    """The request's ``Content-Length``, or None (none, or not a number)."""
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            text = value.decode("latin-1")
            return int(text) if text.isdigit() else None
    return None


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
