"""The embedded-services layout implied by the settings (one place, used by every entry point)."""

from __future__ import annotations

from functools import cache

from django.conf import settings

from portal.embedded import EmbeddedLayout, acquire


@cache
def embedded_layout() -> EmbeddedLayout:
    return EmbeddedLayout(
        data_dir=settings.DATA_DIR,
        redis_port=settings.EMBEDDED_REDIS_PORT,
        postgres=settings.EMBEDDED_POSTGRES,
        redis=settings.EMBEDDED_REDIS,
        fast_and_unsafe=settings.EMBEDDED_FAST_UNSAFE,
        shared_buffers_mb=settings.EMBEDDED_PG_SHARED_BUFFERS_MB,
    )


def acquire_services() -> None:
    """Start (or join) whatever embedded servers the settings call for."""
    if settings.EMBEDDED_POSTGRES or settings.EMBEDDED_REDIS:
        acquire(embedded_layout())
