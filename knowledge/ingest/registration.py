"""Registering files: every entry point (upload, drop folder, reindex, CLI, demo) comes here.

Same bytes as an existing version of the document: nothing new. New bytes: a new
DocumentVersion, its file stored once per sha256, and the ingest task enqueued on commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import PurePosixPath

from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from knowledge.ingest.maintenance import mark_not_queued
from knowledge.ingest.names import label_from_name, safe_path, title_from_path
from knowledge.ingest.storage import sha256_of, store_blob
from knowledge.ingest.store import refresh_searchable
from knowledge.models import Document, DocumentVersion, Source
from knowledge.queue import INGEST_VERSION, enqueue_on_commit

# JSON and YAML: API descriptions (OpenAPI, Swagger). The content decides how a file is read,
# not the name; the name decides which files of a folder are candidates.
SUPPORTED_SUFFIXES = {
    ".docx",
    ".pdf",
    ".xlsx",
    ".md",
    ".markdown",
    ".txt",
    ".json",
    ".yaml",
    ".yml",
}

# Scans, recognised with OCR: candidates of the drop folder and of ``manage.py ingest``, not of
# a synced wiki or folder, whose pictures illustrate its pages (and would each fail as a
# document when they hold no text).
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".tif", ".tiff"}


@dataclass(frozen=True)
class Registration:
    document: Document
    version: DocumentVersion
    created: bool  # False when the bytes were already a version of this document


def register_file(
    source: Source,
    path: str,
    data: bytes,
    *,
    filename: str | None = None,
    added_by=None,
    via: str = "upload",
    label: str | None = None,
    label_date: date | None = None,
    enqueue: bool = True,
) -> Registration:
    """Register ``data`` as the newest version of the document at ``path`` in ``source``.

    Returns the existing version when the same bytes were registered before (no new version,
    nothing enqueued). ``filename`` is the file's own name when it differs from the document
    path (a version series); the version label and date are derived from it unless ``label``
    and ``label_date`` say them (a commit's). ``enqueue`` False leaves the version pending for
    an in-process ingest.
    """
    path = safe_path(path)
    filename = PurePosixPath(safe_path(filename or path)).name
    digest = sha256_of(data)
    name = store_blob(data, digest)
    derived_label, derived_date = label_from_name(filename)
    with transaction.atomic():
        # The document row is locked for the rest of the transaction: version numbering and the
        # same-bytes check are serialised per document.
        document, _ = Document.objects.select_for_update().get_or_create(
            source=source, path=path, defaults={"title": title_from_path(path)}
        )
        known = document.versions.aggregate(
            newest=Max("number"), same=Max("pk", filter=Q(sha256=digest))
        )
        if known["same"] is not None:
            _restore(document)
            return Registration(document, DocumentVersion.objects.get(pk=known["same"]), False)
        version = DocumentVersion.objects.create(
            document=document,
            number=(known["newest"] or 0) + 1,
            sha256=digest,
            file=name,
            filename=filename,
            size=len(data),
            label=label if label is not None else derived_label,
            label_date=label_date or derived_date,
            added_by=added_by if getattr(added_by, "pk", None) else None,
            added_via=via,
        )
        _restore(document)
        if enqueue:
            pk = version.pk
            enqueue_on_commit(INGEST_VERSION, pk, on_failure=lambda: mark_not_queued(pk))
    return Registration(document, version, created=True)


def remove_document(document: Document) -> None:
    """The document's file is gone from its source: it leaves search at once; its versions are
    kept, and the same file coming back restores it (``_restore``)."""
    with transaction.atomic():
        Document.objects.filter(pk=document.pk).update(removed_at=timezone.now())
        refresh_searchable(document.pk)


def _restore(document: Document) -> None:
    """A removed document whose file came back is live again, and searchable at once."""
    if document.removed_at is None:
        return
    Document.objects.filter(pk=document.pk).update(removed_at=None)
    document.removed_at = None
    refresh_searchable(document.pk)


def get_or_create_source(name: str, **defaults) -> Source:
    source, _ = Source.objects.get_or_create(name=name, defaults=defaults)
    return source
