"""The beat's scheduler: Celery's own, which also records the beat's last tick.

Every schedule (stalled-ingest recovery, source syncs, the drop folder, the audit purge) runs
only while the beat runs. A beat that died used to go unseen: ``/healthz`` counted workers only.
Now the beat stores a heartbeat row (``WorkerHeartbeat``, kind "beat") as it ticks, at least
every ``KB_WORKER_HEARTBEAT_SECONDS``, and ``portal.health`` reports its last tick: a silent
beat turns ``/healthz`` 503. Chosen by ``CELERY_BEAT_SCHEDULER``, so every way of starting the
beat (``./kb run``, the units, ``celery worker --beat``) records it.
"""

from __future__ import annotations

import logging
import socket
import time

from celery.beat import PersistentScheduler
from django.conf import settings
from django.db import close_old_connections, connection

from portal.models import WorkerHeartbeat
from portal.worker_heartbeat import forget_worker, record_heartbeat

logger = logging.getLogger(__name__)


def beat_name() -> str:
    return f"beat@{socket.gethostname()}"


class TickingScheduler(PersistentScheduler):
    """``PersistentScheduler`` (the schedule file) that records each tick, at most every
    ``KB_WORKER_HEARTBEAT_SECONDS``, and ticks at least that often."""

    _recorded = 0.0

    def tick(self, *args: object, **kwargs: object) -> float:
        interval = super().tick(*args, **kwargs)
        now = time.monotonic()
        if now - self._recorded >= settings.WORKER_HEARTBEAT_SECONDS:
            self._recorded = now
            _store(record_heartbeat, beat_name(), WorkerHeartbeat.Kind.BEAT)
        return min(interval, settings.WORKER_HEARTBEAT_SECONDS)

    def close(self) -> None:
        # A beat stopped on purpose is gone at once from /healthz, as a stopped worker is.
        _store(forget_worker, beat_name())
        super().close()


def _store(write, *args: object) -> None:
    try:
        close_old_connections()
        write(*args)
    except Exception:  # noqa: BLE001 - the database may be restarting: the next tick tries again
        logger.warning("the beat's tick not stored", exc_info=True)
        connection.close()
