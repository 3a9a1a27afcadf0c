"""Background work queued by task name, once the current transaction commits.

Services ask for work through here instead of importing ``knowledge.tasks``, which imports the
services: task modules depend on services, never the reverse (no import circle
registration -> tasks -> pipeline -> store -> registration).
"""

from __future__ import annotations

from django.db import transaction

from portal.celery import app

INGEST_VERSION = "knowledge.ingest_version"
SYNC_SOURCE = "knowledge.sync_source"
FILL_SECOND_VECTORS = "knowledge.fill_second_vectors"


def enqueue_on_commit(task: str, *args: object, **kwargs: object) -> None:
    """Send ``task`` (routed to its queue by name) when the transaction commits; at once outside
    a transaction. Nothing is queued for work a rollback undoes."""
    transaction.on_commit(lambda: app.send_task(task, args=args, kwargs=kwargs))
