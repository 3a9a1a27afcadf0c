"""A stored file sent to a reader without holding anything the portal's pages need.

The download view reads what it needs of the database (who may read the version, its file's
name), then the file goes out here:

- **behind nginx** (``KB_DOWNLOAD_ACCEL``, e.g. ``/_files/``): an empty answer with
  ``X-Accel-Redirect``; nginx sends the bytes from its internal location over the files folder
  (``deploy/nginx/knowledge-belt.conf``), with its own send deadline, and the web process is
  free at once;
- **otherwise** from the web process, read a block at a time as the client takes them (Django
  read a whole file into memory before sending it under ASGI: 24 readers of a 20 MB version
  held 480 MB), its database connection already given back
  (``portal.capacity.ConnectionReleasingHandler``), at most ``KB_DOWNLOADS_PER_USER`` of one
  user's at once (``portal.capacity.claim_download``; the send deadline of
  ``portal.deadlines`` ends a reader that takes nothing).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from urllib.parse import quote

from django.conf import settings
from django.core.files import File
from django.http import FileResponse, HttpRequest, HttpResponse, StreamingHttpResponse
from django.utils.http import content_disposition_header

BLOCK = 256 * 1024


def send_file(request: HttpRequest, stored: File, filename: str) -> HttpResponse:
    """``stored`` (a FieldFile of the files folder) as an attachment named ``filename``, always
    as bytes to save: an uploaded .html or .svg must never run in the portal's origin. Raises
    OSError when the file is missing."""
    if settings.DOWNLOAD_ACCEL:
        response = HttpResponse(content_type="application/octet-stream")
        response["X-Accel-Redirect"] = settings.DOWNLOAD_ACCEL + quote(stored.name)
    elif hasattr(request, "scope"):  # ASGI: the blocks are read as they are sent
        handle = stored.open("rb")
        response = StreamingHttpResponse(_blocks(handle), content_type="application/octet-stream")
        response["Content-Length"] = str(stored.size)
    else:  # WSGI and the test client stream a sync file as they are
        response = FileResponse(stored.open("rb"), content_type="application/octet-stream")
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


async def _blocks(handle) -> AsyncIterator[bytes]:
    """The file a block at a time, each read in a thread (a disk read must not stall the event
    loop); closed however the sending ends."""
    try:
        while block := await asyncio.to_thread(handle.read, BLOCK):
            yield block
    finally:
        handle.close()
