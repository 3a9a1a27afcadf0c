"""The ingest task on real Celery workers: run twice, run at once, and killed mid-ingest.

Each test starts its own worker processes on the session's Redis and test database. A killed
worker is SIGKILLed with its pool (``WorkerProcess.kill``) once the version is embedding, so the
kill always lands mid-ingest, whatever the machine's speed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection
from django.test import override_settings

from knowledge.ingest.maintenance import stalled_versions
from knowledge.ingest.registration import register_file
from knowledge.models import Chunk, Document, DocumentVersion, Source
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.types import Filters
from knowledge.retrieval.weights import Hits
from knowledge.tasks import ingest_version_task, recover_stalled_versions
from tests.conftest import WorkerProcess
from tests.knowledge.conftest import PMI, WIKI, finished_tasks, wait_for
from tests.knowledge.test_ingest import chunk_rows, expected_chunks

pytestmark = pytest.mark.worker


def version_of(pk: int) -> DocumentVersion:
    return DocumentVersion.objects.defer("parsed").get(pk=pk)


def wait_ready(pk: int, timeout: float = 900) -> DocumentVersion:
    def ready():
        version = version_of(pk)
        assert version.status != "failed", version.error
        return version if version.status == "ready" and not version.claim_token else None

    return wait_for(ready, timeout=timeout, what=f"version {pk} to be ready")


def test_task_run_twice_one_after_the_other_gives_the_same_chunks(worker, settings):
    source = Source.objects.create(name="Specs")
    data = PMI.read_bytes()
    version = register_file(source, PMI.name, data).version  # enqueued on commit
    wait_ready(version.pk)
    first = chunk_rows(version)
    assert first == expected_chunks(data, PMI.name, settings)

    ingest_version_task.delay(version.pk)  # again: finds it done, changes nothing
    wait_for(lambda: finished_tasks(worker) == 2, what="the second task")
    assert chunk_rows(version) == first and version_of(version.pk).attempts == 1

    ingest_version_task.delay(version.pk, force=True)  # the reindex button
    wait_for(lambda: finished_tasks(worker) == 3, what="the reindex task")
    version = wait_ready(version.pk)
    assert version.attempts == 2
    assert chunk_rows(version) == first
    assert version.chunks.count() == version.chunk_count == len(first)


def test_two_workers_on_one_version_at_once_store_one_chunk_set(transactional_db, settings):
    workers = []
    try:
        workers = [WorkerProcess(f"twin{n}") for n in (1, 2)]
        source = Source.objects.create(name="Specs")
        data = PMI.read_bytes()
        version = register_file(source, PMI.name, data, enqueue=False).version
        ingest_version_task.delay(version.pk)
        ingest_version_task.delay(version.pk)
        wait_for(lambda: all(finished_tasks(w) == 1 for w in workers), what="a task on each worker")
        version = wait_ready(version.pk)
    finally:
        for w in workers:
            w.stop()
    assert version.attempts == 1  # one claim won; the other run found it taken and returned
    assert chunk_rows(version) == expected_chunks(data, PMI.name, settings)
    assert version.chunks.count() == version.chunk_count
    assert version.chunks.filter(searchable=True).count() == version.chunk_count


# --- a worker killed mid-ingest ---------------------------------------------------------------------


def big_page(tmp_path: Path, words: int = 9000) -> Path:
    """One Markdown page made of wiki pages, long enough for several embedding batches."""
    parts, total = [], 0
    for page in sorted(WIKI.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        parts.append(text)
        total += len(text.split())
        if total >= words:
            break
    path = tmp_path / "handbook.md"
    path.write_text("\n\n".join(parts), encoding="utf-8")
    return path


def searchable_sets(document_id: int) -> dict[int, tuple[int, int]]:
    """version -> (searchable chunks, all chunks), read in one statement (one snapshot)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT version_id, count(*) FILTER (WHERE searchable), count(*) "
            "FROM knowledge_chunk WHERE document_id = %s GROUP BY version_id",
            [document_id],
        )
        return {v: (on, total) for v, on, total in cursor.fetchall()}


def assert_one_whole_set(document_id: int) -> int:
    """Search sees exactly one version's chunks, all of them; returns that version."""
    sets = searchable_sets(document_id)
    live = [v for v, (on, _) in sets.items() if on]
    assert len(live) == 1, sets
    on, total = sets[live[0]]
    assert on == total, sets
    return live[0]


def kill_mid_embedding(start_worker, tmp_path: Path):
    """v1 ready; v2 (a big page) killed while embedding. Returns (v1, v2, its path's bytes)."""
    source = Source.objects.create(name="Handbook")
    worker = start_worker()
    v1 = register_file(source, "handbook.md", b"# Handbook\n\nThe first, short edition.\n").version
    wait_ready(v1.pk)
    data = big_page(tmp_path).read_bytes()
    v2 = register_file(source, "handbook.md", data).version

    def embedding_under_way():
        assert assert_one_whole_set(v1.document_id) == v1.pk
        version = version_of(v2.pk)
        return version.status == "embedding" and 10 < version.progress < 90

    wait_for(embedding_under_way, what="the big version to be embedding", interval=0.05)
    worker.kill()
    return v1, version_of(v2.pk), data


def assert_killed_version_is_invisible(v1: DocumentVersion, v2: DocumentVersion) -> None:
    assert v2.status == "embedding" and v2.chunks.count() == 0  # nothing half-written
    assert assert_one_whole_set(v1.document_id) == v1.pk
    hits = search(
        "тестирование требования",
        filters=Filters(document_ids=[v1.document_id]),
        options=SearchOptions(hits=Hits(cascade=False), min_score=-1.0),
    ).hits
    assert hits
    assert {Chunk.objects.get(pk=h.chunk_id).version_id for h in hits} == {v1.pk}
    with override_settings(INGEST_STALE_SECONDS=3):
        wait_for(lambda: v2.pk in stalled_versions(), timeout=30, what="the stall to show")


def assert_completed(
    v1: DocumentVersion,
    v2: DocumentVersion,
    data: bytes,
    settings,
    attempts: frozenset[int] = frozenset({2}),
) -> None:
    v2 = wait_ready(v2.pk)
    assert v2.attempts in attempts
    assert chunk_rows(v2) == expected_chunks(data, "handbook.md", settings)
    assert assert_one_whole_set(v1.document_id) == v2.pk
    assert version_of(v1.pk).status == "ready"  # the old version is kept
    assert Document.objects.get(pk=v1.document_id).current_version_id == v2.pk


def test_worker_killed_mid_ingest_is_recovered_by_the_stall_task(stale_workers, tmp_path, settings):
    v1, v2, data = kill_mid_embedding(stale_workers, tmp_path)
    assert_killed_version_is_invisible(v1, v2)
    stale_workers()
    recover_stalled_versions.delay()
    assert_completed(v1, v2, data, settings)


def test_worker_killed_mid_ingest_is_completed_by_the_reindex_button(
    stale_workers, tmp_path, settings, client, alice
):
    v1, v2, data = kill_mid_embedding(stale_workers, tmp_path)
    assert_killed_version_is_invisible(v1, v2)
    stale_workers()
    client.force_login(alice)
    response = client.post(f"/documents/{v1.document_id}/reindex/")
    assert response.status_code == 302
    # The worker that started takes up what its killed predecessor held; when it did so before
    # the button was pressed, the reindex starts that run once more (a third attempt).
    assert_completed(v1, v2, data, settings, attempts=frozenset({2, 3}))
