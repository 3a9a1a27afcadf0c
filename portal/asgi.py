"""ASGI entry point (uvicorn): streaming answers need an asynchronous server."""

from __future__ import annotations

import threading

from portal.boot import setup_or_exit

setup_or_exit()

from portal.capacity import (  # noqa: E402
    CapacityLimit,
    ConnectionReleasingHandler,
    use_connection_pool,
)

use_connection_pool()  # before the first query: this process is the web server

# Django's handler (what get_asgi_application gives, Django set up above), giving a request's
# database connection back once its response is made: a slow reader holds none.
django_application = ConnectionReleasingHandler()

from django.conf import settings  # noqa: E402
from django.utils.module_loading import import_string  # noqa: E402

from portal.uploads import RequestSizeLimitASGIMiddleware  # noqa: E402

# Django's ASGI handler reads a whole request body before any middleware sees it: the size
# limit has to wrap the application to refuse an oversized upload before it is read.
# /mcp (MCP for coding agents, API tokens) is served beside Django, not through it. The
# ceiling on requests at once comes first: a flood is refused before it costs anything.
# The apps' own ASGI endpoints (KB_ASGI_ENDPOINTS: MCP at /mcp) are named in the settings, as
# their URLs are in ROOT_URLCONF: the portal, the base layer, imports none of them.
application = RequestSizeLimitASGIMiddleware(django_application)
for wrapper in settings.ASGI_ENDPOINTS:
    application = import_string(wrapper)(application)
application = CapacityLimit(application)

# Load the models on a thread, the server already accepting requests (a question meanwhile waits
# for them as it would have, the health check does not).
for warm_up in settings.WARM_UP:
    threading.Thread(target=import_string(warm_up), name="warm-up", daemon=True).start()
