"""The drop folder, watched by a real worker: files placed in it are kept in sync as documents.

The worker is told where the folder is (``KB_DROP_FOLDER``) and runs the same beat task that
production schedules (``knowledge.scan_drop_folder``), then ingests what it registered.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge.models import Chunk, Document, DocumentVersion
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.types import Filters
from knowledge.retrieval.weights import Hits
from knowledge.tasks import scan_drop_folder
from tests.conftest import WorkerProcess
from tests.knowledge.conftest import finished_tasks, wait_for

pytestmark = pytest.mark.worker

PAGES = {
    "onboarding.md": "# Onboarding\n\nNew testers read the glossary and pair with a mentor.\n",
    "smoke/checklist.md": "# Smoke checklist\n\nLog in, open the catalogue, place an order.\n",
}


@pytest.fixture
def drop_folder(tmp_path, settings, monkeypatch) -> Path:
    folder = tmp_path / "private_knowledge"
    folder.mkdir()
    settings.DROP_FOLDER = folder
    monkeypatch.setenv("KB_DROP_FOLDER", str(folder))  # for the worker started after this
    return folder


@pytest.fixture
def folder_worker(drop_folder, transactional_db):
    process = WorkerProcess("dropfolder")
    yield process
    process.stop()


def scan(worker: WorkerProcess) -> None:
    """One scan by the worker, and every ingest it enqueued, finished."""
    done = finished_tasks(worker, "knowledge.scan_drop_folder")
    scan_drop_folder.delay()
    wait_for(
        lambda: finished_tasks(worker, "knowledge.scan_drop_folder") == done + 1, what="the scan"
    )
    wait_for(
        lambda: (
            not DocumentVersion.objects.exclude(status__in=["ready", "failed"]).exists()
            and finished_tasks(worker) >= 0
        ),
        what="the ingests of the scan",
    )


def searchable_paths(query: str) -> set[str]:
    hits = search(
        query,
        filters=Filters(),
        options=SearchOptions(hits=Hits(k=20, per_document=5, cascade=False), min_score=-1.0),
    ).hits
    chunks = Chunk.objects.filter(pk__in=[h.chunk_id for h in hits]).select_related("document")
    return {c.document.path for c in chunks}


def test_drop_folder_follows_new_changed_and_deleted_files(drop_folder, folder_worker):
    for name, text in PAGES.items():
        (drop_folder / name).parent.mkdir(parents=True, exist_ok=True)
        (drop_folder / name).write_text(text, encoding="utf-8")
    scan(folder_worker)
    documents = {d.path: d for d in Document.objects.all()}
    assert set(documents) == set(PAGES)
    assert {d.source.name for d in documents.values()} == {"Drop folder"}
    assert all(d.current_version.status == "ready" for d in documents.values())
    assert searchable_paths("catalogue order") >= {"smoke/checklist.md"}

    # Changed bytes: a new version; the same bytes again: nothing new.
    (drop_folder / "onboarding.md").write_text(
        PAGES["onboarding.md"] + "\nMentors review the first ten bug reports.\n", encoding="utf-8"
    )
    (drop_folder / "smoke/checklist.md").write_text(PAGES["smoke/checklist.md"], encoding="utf-8")
    scan(folder_worker)
    onboarding = Document.objects.get(path="onboarding.md")
    assert list(onboarding.versions.values_list("number", "status")) == [
        (1, "ready"),
        (2, "ready"),
    ]
    assert onboarding.current_version.number == 2
    assert set(
        Chunk.objects.filter(document=onboarding, searchable=True).values_list(
            "version__number", flat=True
        )
    ) == {2}
    assert Document.objects.get(path="smoke/checklist.md").versions.count() == 1

    # Deleted file: the document is removed and no longer searched (its versions are kept).
    (drop_folder / "smoke/checklist.md").unlink()
    scan(folder_worker)
    checklist = Document.objects.get(path="smoke/checklist.md")
    assert checklist.removed_at is not None
    assert checklist.versions.count() == 1
    assert not Chunk.objects.filter(document=checklist, searchable=True).exists()
    assert "smoke/checklist.md" not in searchable_paths("catalogue order")

    # The same file put back: the document is live and searchable again, with no new version.
    (drop_folder / "smoke/checklist.md").write_text(PAGES["smoke/checklist.md"], encoding="utf-8")
    scan(folder_worker)
    checklist.refresh_from_db()
    assert checklist.removed_at is None and checklist.versions.count() == 1
    assert "smoke/checklist.md" in searchable_paths("catalogue order")


@pytest.mark.django_db
def test_the_drop_folder_source_is_private_and_links_out_of_it_are_skipped(
    drop_folder, tmp_path, bob
):
    from knowledge.ingest.dropfolder import sync_drop_folder
    from knowledge.models import Source

    (drop_folder / "notes.md").write_text("# Notes\n\nRelease on Friday.\n")
    secret = tmp_path / "secret_key"
    secret.write_text("django-insecure-do-not-index-me")
    (drop_folder / "key.md").symlink_to(secret)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "page.md").write_text("# Outside\n\nNot in the drop folder.\n")
    (drop_folder / "linked").symlink_to(outside, target_is_directory=True)

    report = sync_drop_folder()
    assert report.registered == ["notes.md"]
    source = Source.objects.get(name="Drop folder")
    assert source.is_public is False
    assert not Source.objects.visible_to(bob).filter(pk=source.pk).exists()
    assert not Document.objects.filter(path__in=["key.md", "linked/page.md"]).exists()


def test_a_scan_dropped_as_a_tiff_of_two_pages_is_recognised_by_the_worker(
    drop_folder, folder_worker
):
    import io

    from PIL import Image

    from tests.knowledge.scans import page_png

    pages = [
        page_png("<p>The night build publishes its report to the QA channel.</p>", dpi=200),
        page_png("<p>Регрессию запускают после каждого мержа в основную ветку.</p>", dpi=200),
    ]
    # A TIFF of two pages, as a scanner's document feeder makes it.
    first, *others = [Image.open(io.BytesIO(data)) for data in pages]
    first.save(drop_folder / "night.tiff", save_all=True, append_images=others)
    scan(folder_worker)
    version = Document.objects.get(path="night.tiff").current_version
    assert (version.status, version.format, version.page_count) == ("ready", "image", 2)
    assert searchable_paths("регрессию запускают после каждого мержа") >= {"night.tiff"}
