"""The drop folder: files placed in it become documents of one source, kept in sync.

New and changed files (by sha256) become versions; a file that disappears marks its document
removed (its versions are kept; it is no longer searched). Scanned by a beat task.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from knowledge.ingest.files import FileRefused, iter_document_files, read_listed_file
from knowledge.ingest.registration import get_or_create_source, register_file, remove_document
from knowledge.models import Document, Source

logger = logging.getLogger(__name__)


@dataclass
class SyncReport:
    registered: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)


def sync_folder(source: Source, root: Path, *, via: str = "folder") -> SyncReport:
    """Bring ``source`` in line with the files under ``root``."""
    report = SyncReport()
    seen: set[str] = set()
    identities: dict[str, tuple[int, int]] = {}
    limit = settings.MAX_UPLOAD_MB * 1024 * 1024
    for _, relative, problem in iter_document_files(root, identities=identities):
        seen.add(relative)
        if problem:
            report.refused.append((relative, problem))
            continue
        try:
            # The file the listing checked, opened once (never read again by its name).
            data = read_listed_file(root, relative, identities.get(relative), limit=limit)
        except FileRefused as exc:
            report.refused.append((relative, str(exc)))
            continue
        registration = register_file(source, relative, data, via=via)
        if registration.created:
            report.registered.append(relative)
        else:
            report.unchanged += 1
    for document in Document.objects.filter(source=source, removed_at__isnull=True).exclude(
        path__in=seen
    ):
        remove_document(document)
        report.removed.append(document.path)
    return report


def sync_drop_folder() -> SyncReport | None:
    root = settings.DROP_FOLDER
    if not root.is_dir():
        return None
    # Private until staff name its readers: files dropped on a server are not everyone's.
    source = get_or_create_source(
        settings.DROP_FOLDER_SOURCE, kind=Source.Kind.FOLDER, root_path=str(root), is_public=False
    )
    report = sync_folder(source, root)
    if report.registered or report.removed:
        logger.info(
            "drop folder: %d new or changed, %d removed",
            len(report.registered),
            len(report.removed),
        )
    return report
