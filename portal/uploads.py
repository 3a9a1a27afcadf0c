"""Upload size limits, enforced while the request streams in, never after reading it whole.

Three layers, outermost first:

- ``RequestSizeLimitASGIMiddleware`` wraps the ASGI application (``portal/asgi.py``). Django's
  ASGI handler reads the whole body into a temporary file before any Django middleware runs, so
  without it a client could fill the disk with one upload. It answers 413 from the declared
  Content-Length without reading the body, and stops reading a body without a length (chunked)
  as soon as it passes ``KB_MAX_REQUEST_MB``. A staff upload larger than ``KB_MAX_BODY_KB``
  holds its request slot while its body comes in: one user holds at most
  ``KB_UPLOADS_PER_USER`` such slots (429), and a body slower than
  ``KB_BODY_MIN_KB_PER_SECOND`` is cut (``portal.deadlines``).
- ``RequestSizeLimitMiddleware`` does the same check inside Django for WSGI servers (which read
  the body lazily), before the CSRF middleware would parse the form.
- ``FileSizeLimitUploadHandler`` drops a single file once it passes ``KB_MAX_UPLOAD_MB`` while
  the multipart body is parsed (``SkipFile``): nothing of it is stored, the other files of the
  same request still arrive, and the view reports the refused names from
  ``request.refused_uploads``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from http.cookies import SimpleCookie
from importlib import import_module
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from portal.capacity import claim_upload, declared_length

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def too_large_message(length: int, limit: int | None = None) -> str:
    if limit is not None and limit < settings.MAX_REQUEST_MB * 1024 * 1024:
        return _(
            "The request body is %(size).0f KB; at most %(limit)d KB are accepted here "
            "(uploads are for signed-in staff)."
        ) % {"size": length / 1024, "limit": limit // 1024}
    return _(
        "The upload is %(size).0f MB; at most %(request)s MB per upload and %(file)s MB per "
        "file are accepted."
    ) % {
        "size": length / 1024 / 1024,
        "request": settings.MAX_REQUEST_MB,
        "file": settings.MAX_UPLOAD_MB,
    }


UPLOAD_PATHS = ("/documents/upload/",)


def body_limit(path: str, session_key: str | None) -> int:
    """The most bytes a request body may have: the upload size for staff on the upload page,
    ``KB_MAX_BODY_KB`` for every other request (a form, a question, an API call). Decided from
    the path and the session cookie, before a byte of the body is read."""
    small = settings.MAX_BODY_KB * 1024
    if path not in UPLOAD_PATHS or not session_key:
        return small
    return settings.MAX_REQUEST_MB * 1024 * 1024 if staff_user(session_key) else small


def staff_user(session_key: str) -> int | None:
    """The id of the active staff member signed in with ``session_key``, or None."""
    engine = import_module(settings.SESSION_ENGINE)
    user_id = engine.SessionStore(session_key).get("_auth_user_id")
    if user_id is None:
        return None
    users = get_user_model().objects.filter(pk=user_id, is_active=True, is_staff=True)
    return users.values_list("pk", flat=True).first()


def _session_key(cookie_header: str) -> str | None:
    cookies = SimpleCookie()
    try:
        cookies.load(cookie_header)
    except Exception:  # noqa: BLE001 - a malformed cookie header is no session
        return None
    morsel = cookies.get(settings.SESSION_COOKIE_NAME)
    return morsel.value if morsel else None


class FileSizeLimitUploadHandler(FileUploadHandler):
    def new_file(self, *args, **kwargs) -> None:
        super().new_file(*args, **kwargs)
        self._received = 0
        if not hasattr(self.request, "refused_uploads"):
            self.request.refused_uploads = []

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self._received += len(raw_data)
        if self._received > settings.MAX_UPLOAD_MB * 1024 * 1024:
            self.request.refused_uploads.append(self.file_name)
            raise SkipFile
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the next handler builds the file object


class RequestSizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > settings.MAX_BODY_KB * 1024:
            limit = body_limit(request.path, request.COOKIES.get(settings.SESSION_COOKIE_NAME))
            if length > limit:
                return HttpResponse(
                    too_large_message(length, limit),
                    status=413,
                    content_type="text/plain; charset=utf-8",
                )
        return self.get_response(request)


class RequestSizeLimitASGIMiddleware:
    """ASGI wrapper refusing request bodies over their limit (``body_limit``) before they are
    read: anonymous callers cannot make the server spool large bodies to disk."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = settings.MAX_BODY_KB * 1024
        declared = declared_length(scope)
        if scope.get("path") in UPLOAD_PATHS and (declared is None or declared > limit):
            cookie = _header(scope, b"cookie")
            key = _session_key(cookie) if cookie else None
            staff = await sync_to_async(staff_user)(key) if key else None
            if staff is not None:
                limit = settings.MAX_REQUEST_MB * 1024 * 1024
                # Its slot is taken before its body is in: a few of one user's at once.
                if not claim_upload(scope, staff):
                    await _too_many_uploads(send)
                    return
        if declared is not None and declared > limit:
            await _refuse(send, declared, limit)
            return
        received = 0
        overflow = False
        started = False

        async def limited_receive() -> Message:
            nonlocal received, overflow
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    # Django's handler gives up on a disconnect without answering; we answer.
                    overflow = True
                    return {"type": "http.disconnect"}
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, limited_receive, watched_send)
        if overflow and not started:
            await _refuse(send, received, limit)


def _header(scope: Scope, wanted: bytes) -> str:
    for name, value in scope.get("headers", []):
        if name == wanted:
            return value.decode("latin-1")
    return ""


async def _too_many_uploads(send: Send) -> None:
    body = (
        _("You have too many uploads under way; try again in %(seconds)d s.")
        % {"seconds": settings.RETRY_AFTER_SECONDS}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", str(settings.RETRY_AFTER_SECONDS).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _refuse(send: Send, length: int, limit: int) -> None:
    body = too_large_message(length, limit).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
