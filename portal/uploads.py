"""Upload size limits, enforced while the request streams in, never after reading it whole.

Three layers, outermost first:

- ``RequestSizeLimitASGIMiddleware`` wraps the ASGI application (``portal/asgi.py``). Django's
  ASGI handler reads the whole body into a temporary file before any Django middleware runs, so
  without it a client could fill the disk with one upload. It answers 413 from the declared
  Content-Length without reading the body, and stops reading a body without a length (chunked)
  as soon as it passes ``KB_MAX_REQUEST_MB``.
- ``RequestSizeLimitMiddleware`` does the same check inside Django for WSGI servers (which read
  the body lazily), before the CSRF middleware would parse the form.
- ``FileSizeLimitUploadHandler`` drops a single file once it passes ``KB_MAX_UPLOAD_MB`` while
  the multipart body is parsed (``SkipFile``): nothing of it is stored, the other files of the
  same request still arrive, and the view reports the refused names from
  ``request.refused_uploads``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.http import HttpRequest, HttpResponse

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def too_large_message(length: int) -> str:
    return (
        f"The upload is {length / 1024 / 1024:.0f} MB; at most {settings.MAX_REQUEST_MB} MB "
        f"per upload and {settings.MAX_UPLOAD_MB} MB per file are accepted."
    )


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
        if length > settings.MAX_REQUEST_MB * 1024 * 1024:
            return HttpResponse(
                too_large_message(length), status=413, content_type="text/plain; charset=utf-8"
            )
        return self.get_response(request)


class RequestSizeLimitASGIMiddleware:
    """ASGI wrapper refusing request bodies over ``KB_MAX_REQUEST_MB`` before they are read."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = settings.MAX_REQUEST_MB * 1024 * 1024
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _refuse(send, declared)
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
            await _refuse(send, received)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _refuse(send: Send, length: int) -> None:
    body = too_large_message(length).encode()
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
