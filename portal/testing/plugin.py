"""pytest plugin, loaded before pytest-django reads the settings (``-p portal.testing.plugin``).

The test session gets its own throw-away data folder and a free Redis port, so its embedded
PostgreSQL and Redis never touch a running portal's data; both servers are stopped and the
folder removed when the session ends. With ``DATABASE_URL``/``REDIS_URL`` set, those servers
are used instead.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


_OWNED_DATA_DIR: Path | None = None
if not os.environ.get("KB_TEST_DATA_DIR"):
    _OWNED_DATA_DIR = Path(tempfile.mkdtemp(prefix="kb-test-"))
    os.environ["KB_DATA_DIR"] = str(_OWNED_DATA_DIR)
else:
    os.environ["KB_DATA_DIR"] = os.environ["KB_TEST_DATA_DIR"]
os.environ["KB_REDIS_PORT"] = str(_free_port())
os.environ["KB_EMBEDDED_FAST_UNSAFE"] = "1"
os.environ.setdefault("KB_DEMO", "0")
# Playwright's sync API keeps an event loop in the main thread; the ORM calls in browser tests
# are still plain synchronous calls, made between browser steps.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
# The suite's page assertions are written in English: pages fall back to English unless a test
# asks for Russian (Accept-Language, the switcher, the profile); tests/portal/test_i18n.py checks
# the product's own default (ru) and every page in both languages.
os.environ.setdefault("KB_LANGUAGE", "en")

# A clean checkout has no compiled catalogs: build them before any page is rendered.
from portal.locale_build import compile_catalogs  # noqa: E402

compile_catalogs()


def pytest_unconfigure(config) -> None:  # noqa: ANN001 - pytest hook signature
    # A pytest plugin is loaded before Django is configured: Django's parts are imported here.
    from django.conf import settings

    if not settings.configured:
        return
    from django.db import connections

    from portal.embedded import release
    from portal.services_layout import embedded_layout

    connections.close_all()
    if settings.EMBEDDED_POSTGRES or settings.EMBEDDED_REDIS:
        release(embedded_layout())
    if _OWNED_DATA_DIR is not None:
        shutil.rmtree(_OWNED_DATA_DIR, ignore_errors=True)
