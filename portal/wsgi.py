"""WSGI entry point, for servers that cannot speak ASGI (answers then stream per thread)."""

from __future__ import annotations

from portal.boot import load_settings_or_exit

load_settings_or_exit()

from django.core.wsgi import get_wsgi_application  # noqa: E402

application = get_wsgi_application()
