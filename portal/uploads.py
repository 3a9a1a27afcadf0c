"""Upload size limits enforced while the request streams in, never after reading it whole.

``RequestSizeLimitMiddleware`` refuses a request whose declared length is over the request
limit before anything reads its body (it runs before the CSRF middleware, which would parse the
form). ``FileSizeLimitUploadHandler`` stops reading a single file once it passes the per-file
limit; the file is dropped (``SkipFile``), the others in the same request still arrive, and the
view reports the refused names from ``request.refused_uploads``.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.http import HttpRequest, HttpResponse


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
        limit = settings.MAX_REQUEST_MB * 1024 * 1024
        if length > limit:
            return HttpResponse(
                f"The upload is {length / 1024 / 1024:.0f} MB; at most {settings.MAX_REQUEST_MB} MB "
                f"per upload and {settings.MAX_UPLOAD_MB} MB per file are accepted.",
                status=413,
                content_type="text/plain; charset=utf-8",
            )
        return self.get_response(request)
