"""Celery queues: ingest, sync and default, so that a long ingest holds up nothing else."""

from __future__ import annotations

import pytest

from knowledge.ingest.registration import register_file
from knowledge.models import DocumentVersion, Source
from portal.celery import app
from portal.models import WorkerHeartbeat
from portal.tasks import heartbeat
from tests.conftest import WorkerProcess
from tests.knowledge.conftest import PMI, wait_for


def queue_of(task: str) -> str:
    return app.amqp.router.route({}, task)["queue"].name


def test_each_task_goes_to_its_queue():
    import knowledge.tasks  # noqa: F401  (registers the knowledge tasks)

    assert queue_of("knowledge.ingest_version") == "ingest"
    assert queue_of("knowledge.sync_source") == queue_of("knowledge.sync_due_sources") == "sync"
    for task in (
        "portal.heartbeat",
        "portal.purge_audit_log",
        "knowledge.recover_stalled_versions",
    ):
        assert queue_of(task) == "default"
    # A worker started without --queues consumes all of them.
    assert {"default", "ingest", "sync"} <= set(app.amqp.queues)


@pytest.mark.worker
def test_a_default_worker_runs_maintenance_while_ingests_wait_for_an_ingest_worker(
    transactional_db,
):
    source = Source.objects.create(name="Specs")
    default = WorkerProcess("default-only", queues="default")
    try:
        version = register_file(source, PMI.name, PMI.read_bytes()).version  # -> "ingest"
        heartbeat.delay("queues-test")  # -> "default"
        wait_for(
            lambda: WorkerHeartbeat.objects.filter(token="queues-test").exists(),
            timeout=60,
            what="the default worker to run the heartbeat",
        )
        status = DocumentVersion.objects.values_list("status", flat=True).get(pk=version.pk)
        assert status == "pending"  # nobody consumes the ingest queue yet

        ingest = WorkerProcess("ingest-only", queues="ingest")
        try:
            wait_for(
                lambda: DocumentVersion.objects.filter(pk=version.pk, status="ready").exists(),
                timeout=600,
                what="the ingest worker to index the version",
            )
        finally:
            ingest.stop()
    finally:
        default.stop()
