"""Two syncs of one source at once do the work once: in two threads of this process (each its
own database connection, as two processes would have), and as two tasks on a real worker."""

from __future__ import annotations

import os
import threading
import time

import pytest
from django.db import connections

from knowledge.models import Document, DocumentVersion, Source
from knowledge.sources.sync import SyncOutcome, sync_source
from knowledge.tasks import sync_source_task
from tests.conftest import WorkerProcess
from tests.knowledge.conftest import finished_tasks, wait_for
from tests.knowledge.sources.conftest import PAGES, add_source


def _both_at_once(source_id: int) -> list[SyncOutcome]:
    start = threading.Barrier(2)
    outcomes: list[SyncOutcome] = []

    def run() -> None:
        try:
            start.wait()
            outcomes.append(sync_source(source_id, enqueue=False))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_two_syncs_at_once_register_each_page_once(transactional_db, wiki):
    add_source("Wiki", str(wiki.path))
    source = Source.objects.get(name="Wiki")
    outcomes = _both_at_once(source.pk)
    assert sorted(o.status for o in outcomes) in (["busy", "ok"], ["ok", "ok"])
    worked = [o for o in outcomes if o.added]
    assert len(worked) == 1 and sorted(worked[0].added) == sorted(PAGES)
    idle = next(o for o in outcomes if o is not worked[0])
    assert idle.version_ids == [] and not (idle.added or idle.changed or idle.removed)
    versions = DocumentVersion.objects.filter(document__source=source)
    assert versions.count() == Document.objects.filter(source=source).count() == len(PAGES)
    source.refresh_from_db()
    assert source.last_sync_status == "ok" and source.sync_cursor == wiki.git("rev-parse", "HEAD")


@pytest.mark.worker
def test_two_sync_tasks_at_once_on_a_worker_sync_and_ingest_once(transactional_db, wiki):
    from portal.celery import app

    app.control.purge()  # messages earlier tests queued without a worker are not this test's
    add_source("Wiki", str(wiki.path))
    source = Source.objects.get(name="Wiki")
    worker = WorkerProcess(f"sync{os.getpid()}-{time.monotonic_ns() % 10**6}", concurrency=2)
    versions = DocumentVersion.objects.filter(document__source=source)
    try:
        sync_source_task.delay(source.pk)
        sync_source_task.delay(source.pk)
        wait_for(
            lambda: finished_tasks(worker, "knowledge.sync_source") == 2,
            timeout=120,
            what="both sync tasks",
        )
        wait_for(
            lambda: (
                versions.filter(status="ready").count() == len(PAGES)
                and finished_tasks(worker) >= len(PAGES)
            ),
            timeout=300,
            what="the ingests the sync enqueued",
            state=lambda: _state(worker, versions),
        )
        assert versions.count() == len(PAGES)
        # Each version ingested once: one claim each, none taken over or retried.
        assert set(versions.values_list("attempts", flat=True)) == {1}
        source.refresh_from_db()
        assert source.last_sync_status == "ok"
        # The second task found the first running (busy), or came after it: nothing to do.
        assert source.last_sync_result.startswith((f"Documents {len(PAGES)} added;", "Up to date"))
    finally:
        worker.stop()


def _state(worker: WorkerProcess, versions) -> str:
    """What a timed-out wait saw: the versions, the worker's tasks, the end of its log."""
    from portal.celery import app

    inspect = app.control.inspect(timeout=2.0)
    mine = lambda replies: {k: v for k, v in (replies or {}).items() if k.startswith(worker.name)}  # noqa: E731
    rows = list(versions.values_list("pk", "status", "stage", "attempts", "error"))
    log = worker.log_path.read_text(errors="replace")[-3000:] if worker.log_path.exists() else ""
    return (
        f"versions {rows}; stats {mine(inspect.stats())}; active {mine(inspect.active())}; "
        f"reserved {mine(inspect.reserved())}; log tail:\n{log}"
    )
