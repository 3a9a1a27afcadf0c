"""WSGI entry point, for servers that cannot speak ASGI (answers then stream per thread)."""

from __future__ import annotations

from portal.boot import setup_or_exit

setup_or_exit()

from django.core.wsgi import get_wsgi_application  # noqa: E402

application = get_wsgi_application()
