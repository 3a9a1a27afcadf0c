"""ASGI entry point (uvicorn): streaming answers need an asynchronous server."""

from __future__ import annotations

from portal.boot import load_settings_or_exit

load_settings_or_exit()

from django.core.asgi import get_asgi_application  # noqa: E402

from portal.uploads import RequestSizeLimitASGIMiddleware  # noqa: E402

# Django's ASGI handler reads a whole request body before any middleware sees it: the size
# limit has to wrap the application to refuse an oversized upload before it is read.
application = RequestSizeLimitASGIMiddleware(get_asgi_application())
