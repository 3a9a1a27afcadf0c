"""Entry-point guard: bad configuration ends the process with one readable line."""

from __future__ import annotations

import os
import sys


def load_settings_or_exit() -> None:
    """Import the settings now, turning a configuration error into a one-line message."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    try:
        settings.INSTALLED_APPS  # noqa: B018 - forces the settings module to load
    except ImproperlyConfigured as exc:
        sys.stderr.write(f"knowledge-belt: configuration error: {exc}\n")
        raise SystemExit(2) from None
