"""A Celery worker tells the portal it is alive by writing its heartbeat row every few seconds.

``/healthz`` reads these rows instead of pinging workers through the broker. The beat runs in a
thread of the worker's main process (started when the worker is ready, stopped at shutdown), so
it says "this worker process is up", whatever its pool is busy with.
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import IntegrityError, close_old_connections, connection
from django.utils import timezone

from portal.models import WorkerHeartbeat

logger = logging.getLogger(__name__)


def record_heartbeat(worker: str, kind: str = WorkerHeartbeat.Kind.WORKER) -> None:
    """Store that ``worker`` (a worker, or the beat) is alive now (keeps the row's token,
    which tests use)."""
    if WorkerHeartbeat.objects.filter(worker=worker).update(beat_at=timezone.now(), kind=kind):
        return
    try:
        WorkerHeartbeat.objects.create(worker=worker, kind=kind)
    except IntegrityError:  # another process of the same worker created it first
        WorkerHeartbeat.objects.filter(worker=worker).update(beat_at=timezone.now())


def forget_worker(worker: str) -> None:
    """A worker shutting down removes its row, so health turns red at once, not after a while."""
    WorkerHeartbeat.objects.filter(worker=worker).delete()


class HeartbeatThread(threading.Thread):
    def __init__(self, worker: str) -> None:
        super().__init__(name="kb-heartbeat", daemon=True)
        self.worker = worker
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            try:
                close_old_connections()
                record_heartbeat(self.worker)
            except Exception:  # noqa: BLE001 - the database may be restarting; try again later
                logger.warning("worker heartbeat not stored", exc_info=True)
                connection.close()
            self.stopped.wait(settings.WORKER_HEARTBEAT_SECONDS)
        connection.close()

    def stop(self) -> None:
        self.stopped.set()
        self.join(timeout=5)
        try:
            forget_worker(self.worker)
        except Exception:  # noqa: BLE001 - the row goes stale on its own
            logger.warning("worker heartbeat not removed", exc_info=True)
        finally:
            connection.close()
