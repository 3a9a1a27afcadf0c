"""Celery tasks of the knowledge base: thin wrappers that take primary keys."""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError

from knowledge.ingest.dropfolder import sync_drop_folder
from knowledge.ingest.maintenance import requeue_stalled_versions
from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.second import fill_second_vectors
from knowledge.models import DocumentVersion, Source
from knowledge.sources.schedule import queue_due_syncs
from knowledge.sources.sync import sync_source
from portal.celery import app

logger = logging.getLogger(__name__)


@app.task(
    name="knowledge.ingest_version",
    ignore_result=True,
    autoretry_for=(ConnectionError, TimeoutError),
    retry_backoff=True,
    max_retries=5,
    acks_late=True,
)
def ingest_version_task(version_id: int, force: bool = False) -> None:
    """Ingest one version; returns quietly when it is gone or claimed by another run."""
    if not DocumentVersion.objects.filter(pk=version_id).exists():
        return
    try:
        ingest_version(version_id, force=force)
    except (OperationalError, InterfaceError) as exc:
        # The database went away mid-run (restart): retry later, the version was handed back.
        raise ingest_version_task.retry(exc=exc, countdown=10) from exc


@app.task(name="knowledge.recover_stalled_versions", ignore_result=True)
def recover_stalled_versions() -> int:
    """Re-enqueue versions whose worker died (heartbeat too old) or that never got a task."""
    ids = requeue_stalled_versions()
    for version_id in ids:
        ingest_version_task.delay(version_id)
    if ids:
        logger.info("re-enqueued %d stalled versions", len(ids))
    return len(ids)


# Seconds one run of the second vectors' task works before it queues its follow-up: a backlog
# (a new knowledge base, a new model) is filled in turns, and ingests queued meanwhile run
# between them.
SECOND_VECTORS_TURN = 60


@app.task(name="knowledge.fill_second_vectors", ignore_result=True, acks_late=True)
def fill_second_vectors_task() -> int:
    """Give searchable chunks their second vector (``knowledge.ingest.second``), in batches that
    two workers never share; queued when a version is ready and by the beat."""
    try:
        done, more = fill_second_vectors(budget=SECOND_VECTORS_TURN)
    except (OperationalError, InterfaceError):
        logger.warning("second vectors: the database went away; the beat queues them again")
        return 0
    if more:
        fill_second_vectors_task.delay()
    return done


@app.task(name="knowledge.scan_drop_folder", ignore_result=True)
def scan_drop_folder() -> None:
    """Register new and changed files of the drop folder; mark deleted ones removed."""
    sync_drop_folder()


@app.task(
    name="knowledge.sync_source",
    ignore_result=True,
    autoretry_for=(ConnectionError,),
    retry_backoff=True,
    max_retries=3,
)
def sync_source_task(source_id: int) -> None:
    """Sync one source (git, folder); returns quietly when it is gone or already syncing."""
    if not Source.objects.filter(pk=source_id).exists():
        return
    try:
        sync_source(source_id)
    except (OperationalError, InterfaceError) as exc:
        raise sync_source_task.retry(exc=exc, countdown=30) from exc


@app.task(name="knowledge.sync_due_sources", ignore_result=True)
def sync_due_sources() -> int:
    """Queue a sync of every source whose interval has passed (the beat runs this)."""
    queued = queue_due_syncs()
    if queued:
        logger.info("queued syncs of sources %s", queued)
    return len(queued)
