"""Celery tasks of the knowledge base: thin wrappers that take primary keys."""

from __future__ import annotations

import logging

from celery import signals
from django.db import InterfaceError, OperationalError

from knowledge.ingest.dropfolder import sync_drop_folder
from knowledge.ingest.maintenance import requeue_stalled_versions, seconds_until_stale
from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.second import fill_second_vectors, progress
from knowledge.models import DocumentVersion, Source
from knowledge.queue import (
    FILL_SECOND_VECTORS,
    end_turn,
    enqueue_once_on_commit,
    record_pace,
    started_once,
    take_turn,
)
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
    """Ingest one version; returns quietly when it is gone or claimed by another run.

    Delivered again (its worker process died mid-run) and finding the version claimed under a
    fresh heartbeat, it does not return: that claim may be the dead run's own, written a moment
    before it died on another machine. It looks again once that heartbeat would be stale (a
    run killed on this machine is seen gone at once, ``claim_version``)."""
    try:
        if not DocumentVersion.objects.filter(pk=version_id).exists():
            return
        result = ingest_version(version_id, force=force)
    except (OperationalError, InterfaceError) as exc:
        # The database went away (restart): retry later, for up to about three minutes. The
        # version was handed back, or is still claimed by this very thread, which the retry
        # takes back at once (portal.processes).
        retries = ingest_version_task.request.retries
        raise ingest_version_task.retry(exc=exc, countdown=min(60, 10 * 2**retries)) from exc
    delivery = ingest_version_task.request.delivery_info or {}
    if result.status == "skipped" and delivery.get("redelivered"):
        wait = seconds_until_stale(version_id)
        if wait is not None:
            logger.info(
                "version %s claimed by a run that may be dead: again in %.0f s", version_id, wait
            )
            ingest_version_task.apply_async((version_id,), countdown=wait + 1)


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
# (a new knowledge base, a new model) is filled in turns, one process at a time, and ingests
# queued meanwhile run beside it and between its turns.
SECOND_VECTORS_TURN = 30


@app.task(name="knowledge.fill_second_vectors", ignore_result=True, acks_late=True)
def fill_second_vectors_task() -> int:
    """Give searchable chunks their second vector (``knowledge.ingest.second``), one process of
    the deployment at a time (``take_turn``: the other worker processes stay free for ingests
    and maintenance); queued when a version is ready (one run waiting at most) and by the
    beat."""
    started_once(FILL_SECOND_VECTORS)
    if not take_turn(FILL_SECOND_VECTORS, SECOND_VECTORS_TURN + 60):
        return 0  # another process is filling: its turn queues the next
    try:
        try:
            before = progress()
            if before is not None:  # the pace the Documents page reads (its time left)
                record_pace(FILL_SECOND_VECTORS, before.done, before.total)
            done, more = fill_second_vectors(budget=SECOND_VECTORS_TURN)
        finally:
            end_turn(FILL_SECOND_VECTORS)
        # Checked again once the turn is over: a version ready while this run found nothing
        # left queued a run that found the turn still taken.
        left = progress()
        if left is not None:
            record_pace(FILL_SECOND_VECTORS, left.done, left.total)
    except (OperationalError, InterfaceError):
        logger.warning("second vectors: the database went away; the beat queues them again")
        return 0
    if more or (left is not None and not left.complete):
        enqueue_once_on_commit(FILL_SECOND_VECTORS)
    return done


@signals.worker_ready.connect
def _recover_when_a_worker_starts(**_: object) -> None:
    # A worker started after another was killed on this machine (./kb run and systemd restart
    # it): the versions the dead one's runs held are taken up now, each judged from here, where
    # their processes ran, rather than at the stale limit by the beat's next round.
    try:
        recover_stalled_versions()
    except Exception:  # noqa: BLE001 - the beat's round does the same later
        logger.warning("stalled versions not recovered at start", exc_info=True)


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
