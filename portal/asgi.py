"""ASGI entry point (uvicorn): streaming answers need an asynchronous server."""

from __future__ import annotations

from portal.boot import load_settings_or_exit

load_settings_or_exit()

from django.core.asgi import get_asgi_application  # noqa: E402

application = get_asgi_application()
