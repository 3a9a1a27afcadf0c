"""ASGI entry point (uvicorn): streaming answers need an asynchronous server."""

from __future__ import annotations

from portal.boot import setup_or_exit

setup_or_exit()

from django.core.asgi import get_asgi_application  # noqa: E402

django_application = get_asgi_application()  # sets Django up before the imports below

from chat.mcp.http import with_mcp  # noqa: E402
from portal.uploads import RequestSizeLimitASGIMiddleware  # noqa: E402

# Django's ASGI handler reads a whole request body before any middleware sees it: the size
# limit has to wrap the application to refuse an oversized upload before it is read.
# /mcp (MCP for coding agents, API tokens) is served beside Django, not through it.
application = with_mcp(RequestSizeLimitASGIMiddleware(django_application))
