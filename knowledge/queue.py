"""Background work queued by task name, once the current transaction commits.

Services ask for work through here instead of importing ``knowledge.tasks``, which imports the
services: task modules depend on services, never the reverse (no import circle
registration -> tasks -> pipeline -> store -> registration).

The queue (Redis) may be down when the transaction commits: the work is then not sent, the
request that asked for it still succeeds (what it stored is committed), and ``on_failure`` marks
the rows so that the beat's recovery sends it once the queue is back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import redis
from django.db import transaction
from kombu.exceptions import OperationalError as QueueUnreachable

from portal.celery import app

logger = logging.getLogger(__name__)

INGEST_VERSION = "knowledge.ingest_version"
SYNC_SOURCE = "knowledge.sync_source"
FILL_SECOND_VECTORS = "knowledge.fill_second_vectors"


def enqueue_on_commit(
    task: str,
    *args: object,
    on_failure: Callable[[], object] | None = None,
    **kwargs: object,
) -> None:
    """Send ``task`` (routed to its queue by name) when the transaction commits; at once outside
    a transaction. Nothing is queued for work a rollback undoes."""
    transaction.on_commit(lambda: _send(task, args, kwargs, on_failure))


def _send(task: str, args: tuple, kwargs: dict, on_failure: Callable[[], object] | None) -> None:
    try:
        app.send_task(task, args=args, kwargs=kwargs)
    except (QueueUnreachable, redis.RedisError, OSError) as exc:
        logger.warning("%s%r not queued, the queue is unreachable: %s", task, args, exc)
        if on_failure is not None:
            on_failure()
