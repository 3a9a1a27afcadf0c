"""Staff actions on versions: relabel, move in the order, remove. Each is logged (VersionEvent).

The order of a document's versions is their ``number``; an explicit order set here wins over
label dates (dates can tie, and a date in a file name can lag the change). Numbers stay unique
per document: a move permutes the document's existing numbers inside one transaction, with the
document row locked as registration locks it before numbering a new version.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import F, Max, Q
from django.utils.translation import gettext as _

from knowledge import termstats
from knowledge.ingest.pipeline import refresh_searchable
from knowledge.models import Chunk, Document, DocumentVersion, VersionEvent

Action = VersionEvent.Action


class VersionActionError(Exception):
    """The action cannot be done; the message is shown to the staff member as is."""


def _snapshot(version: DocumentVersion) -> dict:
    return {
        "label": version.display_label,
        "number": version.number,
        "label_date": version.label_date.isoformat() if version.label_date else None,
        "sha256": version.sha256,
        "filename": version.filename,
    }


def relabel_version(
    version: DocumentVersion, *, label: str, label_date: date | None, user
) -> DocumentVersion:
    """Set a version's label and date (the order is left alone: it is set by moving)."""
    label = " ".join(label.split())[:200]
    before = {"label": version.label, "label_date": _iso(version.label_date)}
    after = {"label": label, "label_date": _iso(label_date)}
    if before == after:
        return version
    with transaction.atomic():
        DocumentVersion.objects.filter(pk=version.pk).update(label=label, label_date=label_date)
        version.label, version.label_date = label, label_date
        _log(version, Action.RELABEL, user, {"before": before, "after": after})
    return version


def _iso(day: date | None) -> str | None:
    return day.isoformat() if day else None


def move_version(version: DocumentVersion, position: int, *, user) -> DocumentVersion:
    """Move a version to ``position`` (1 = oldest) in its document's order.

    The versions keep the document's set of numbers; only who holds which changes. The newest
    ready version may change, so the searchable chunks follow (``refresh_searchable``).
    """
    with transaction.atomic():
        document = Document.objects.select_for_update().get(pk=version.document_id)
        versions = list(document.versions.order_by("number").defer("parsed"))
        numbers = [v.number for v in versions]
        current = next(k for k, v in enumerate(versions) if v.pk == version.pk)
        target = min(max(position, 1), len(versions)) - 1
        if target == current:
            return version
        moved = versions.pop(current)
        versions.insert(target, moved)
        # Park every number above the current maximum first: the unique (document, number)
        # constraint is checked row by row, and no parked number can collide with a final one.
        offset = (document.versions.aggregate(n=Max("number"))["n"] or 0) + 1
        document.versions.update(number=F("number") + offset)
        for v, number in zip(versions, numbers, strict=True):
            DocumentVersion.objects.filter(pk=v.pk).update(number=number)
        version.number = numbers[target]
        _log(
            version,
            Action.MOVE,
            user,
            {"label": version.display_label, "from": current + 1, "to": target + 1},
        )
        refresh_searchable(document.pk)
    return version


@dataclass
class Removal:
    label: str
    file_kept: bool  # another version (of any document) has the same bytes


def remove_version(version: DocumentVersion, *, user) -> Removal:
    """Remove a version: its chunks leave the search, the newest remaining ready version becomes
    searchable, and its file is deleted unless another version shares its bytes (files are
    stored once per sha256). Refused for the only version of a document and for a version
    being indexed right now."""
    with transaction.atomic():
        document = Document.objects.select_for_update().get(pk=version.document_id)
        version = DocumentVersion.objects.select_for_update().defer("parsed").get(pk=version.pk)
        if version.is_active:
            raise VersionActionError(_("This version is being indexed; remove it when it is done."))
        if document.versions.count() <= 1:
            raise VersionActionError(
                _("This is the document's only version; remove the document instead.")
            )
        # BM25 statistics must lose this version's searchable chunks while they still exist.
        off = list(
            Chunk.objects.filter(version=version, searchable=True).values_list("pk", flat=True)
        )
        termstats.apply_flip([], off)
        Chunk.objects.filter(pk__in=off).update(searchable=False)
        name = version.file.name
        shared = (
            DocumentVersion.objects.filter(Q(sha256=version.sha256) | Q(file=name))
            .exclude(pk=version.pk)
            .exists()
        )
        snapshot = {**_snapshot(version), "file_kept": shared}
        _log(version, Action.REMOVE, user, snapshot)
        version.delete()
        refresh_searchable(document.pk)
        if not shared and name:
            # Only once the removal is committed: a rolled-back removal keeps its file.
            transaction.on_commit(lambda: default_storage.delete(name))
    return Removal(snapshot["label"], shared)


def _log(version: DocumentVersion, action: str, user, detail: dict) -> VersionEvent:
    return VersionEvent.objects.create(
        document_id=version.document_id,
        version=version if action != Action.REMOVE else None,
        action=action,
        user=user if getattr(user, "pk", None) else None,
        detail=detail,
    )
