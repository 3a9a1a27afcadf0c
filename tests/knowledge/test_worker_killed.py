"""A worker's pool processes SIGKILLed mid-ingest, the worker itself living on.

Celery starts new pool processes and delivers the killed task again (acks late, rejected when
its worker is lost). That delivery used to find the version "embedding" with the heartbeat its
dead run had just written, take it for a live run and drop it: the version stayed in
"embedding" until the beat's stall recovery, and for ever when the beat had died with the pool
(``./kb run`` ran it inside the worker). No beat runs in these tests and the stale limit is the
default 300 s: only the delivered task itself can finish the version.
"""

from __future__ import annotations

import os
import socket
from datetime import timedelta

import psutil
import pytest
from django.utils import timezone

from knowledge.ingest.pipeline import claim_version
from knowledge.ingest.registration import register_file
from knowledge.models import DocumentVersion, Source
from portal.processes import started, this_process
from tests.conftest import WorkerProcess
from tests.knowledge.conftest import wait_for
from tests.knowledge.test_ingest import chunk_rows, expected_chunks
from tests.knowledge.test_tasks import big_page, version_of, wait_ready

pytestmark = pytest.mark.worker


def test_version_whose_pool_process_was_killed_is_finished_by_the_task_delivered_again(
    transactional_db, tmp_path, settings
):
    worker = WorkerProcess(f"poolkill-{os.getpid()}")
    try:
        source = Source.objects.create(name="Handbook")
        data = big_page(tmp_path).read_bytes()
        version = register_file(source, "handbook.md", data).version

        def embedding_under_way():
            found = version_of(version.pk)
            return found.status == "embedding" and 10 < found.progress < 90

        wait_for(embedding_under_way, what="the version to be embedding", interval=0.05)
        killed = worker.kill_pool()
        assert killed and worker.process.poll() is None  # the worker's main process lives on
        # Well within the 300 s stale limit: only the delivered task can have finished it.
        finished = wait_ready(version.pk, timeout=150)
    finally:
        worker.stop()
    assert finished.attempts == 2  # the killed run, then the delivered task's
    assert chunk_rows(finished) == expected_chunks(data, "handbook.md", settings)
    assert finished.chunks.filter(searchable=True).count() == finished.chunk_count


# --- who may take a claimed version over ------------------------------------------------------


@pytest.fixture
def claimed(db, settings) -> DocumentVersion:
    settings.INGEST_STALE_SECONDS = 300
    source = Source.objects.create(name="Specs")
    version = register_file(source, "a.md", b"# A\n\nText.\n", enqueue=False).version
    DocumentVersion.objects.filter(pk=version.pk).update(
        status="embedding", claim_token="old", heartbeat_at=timezone.now()
    )
    return version


def claimed_by(version: DocumentVersion, owner: str) -> None:
    DocumentVersion.objects.filter(pk=version.pk).update(claimed_by=owner)


def dead_pid() -> int:
    """A pid no process has (the next ones the kernel would give, skipping any alive)."""
    pid = os.getpid() + 50_000
    while psutil.pid_exists(pid):
        pid += 1
    return pid


def test_a_fresh_claim_of_a_process_gone_from_this_machine_is_taken_over_at_once(claimed):
    claimed_by(claimed, f"{socket.gethostname()}:{dead_pid()}:1.0")
    token = claim_version(claimed.pk)
    assert token and token != "old"
    assert version_of(claimed.pk).claimed_by == this_process()


def test_a_fresh_claim_of_a_live_process_is_left_alone(claimed):
    parent = psutil.Process(os.getppid())
    claimed_by(claimed, f"{socket.gethostname()}:{parent.pid}:{started(parent.pid):.3f}")
    assert claim_version(claimed.pk) is None


def test_a_pid_reused_by_another_process_does_not_keep_a_dead_claim(claimed):
    parent = psutil.Process(os.getppid())  # alive, but started at another time than the owner
    claimed_by(claimed, f"{socket.gethostname()}:{parent.pid}:{started(parent.pid) - 3600:.3f}")
    assert claim_version(claimed.pk)


def test_a_fresh_claim_from_another_machine_waits_for_its_heartbeat_to_go_stale(claimed):
    claimed_by(claimed, f"another-host.example:{dead_pid()}:1.0")
    assert claim_version(claimed.pk) is None  # its process cannot be looked at from here
    DocumentVersion.objects.filter(pk=claimed.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=301)
    )
    assert claim_version(claimed.pk)
