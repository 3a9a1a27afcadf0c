"""Reads behind the version pages: a document's history with change summaries, and the
documents that have more than one version."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Max, QuerySet

from knowledge.models import Document, DocumentVersion, VersionEvent
from knowledge.versions.services import stored_summary, summary_between
from knowledge.versions.summary import ChangeSummary

# Summaries a history page computes while it renders (newest first); the rest arrive through
# HTMX one row at a time, so a long history opens at once.
INLINE_SUMMARIES = 8


@dataclass
class HistoryRow:
    version: DocumentVersion
    position: int  # 1 = oldest
    previous: DocumentVersion | None
    summary: ChangeSummary | None  # against ``previous``; None when either is not ready
    deferred: bool = False  # both ready, summary not computed yet: the page fetches it

    @property
    def comparable(self) -> bool:
        ready = DocumentVersion.Status.READY
        return bool(self.previous) and self.previous.status == ready == self.version.status

    @property
    def added_by(self) -> str:
        """Who or what added the version: a person, or the way in (upload, cli, folder)."""
        user = self.version.added_by
        who = user.get_username() if user else ""
        via = self.version.added_via
        return f"{who} · {via}" if who and via else who or via


def history(document: Document, inline: int = INLINE_SUMMARIES) -> list[HistoryRow]:
    """Every version, newest first, each with its change summary against its predecessor:
    stored ones read back, up to ``inline`` missing ones computed (and stored), the others
    marked ``deferred``."""
    versions = list(document.versions.select_related("added_by").defer("parsed").order_by("number"))
    rows = [
        HistoryRow(version, index + 1, versions[index - 1] if index else None, None)
        for index, version in enumerate(versions)
    ][::-1]
    budget = inline
    for row in rows:
        if not row.comparable:
            continue
        row.summary = stored_summary(row.previous, row.version)
        if row.summary is None and budget > 0:
            budget -= 1
            row.summary = summary_between(row.previous, row.version)
        row.deferred = row.summary is None
    return rows


def history_row(document: Document, version: DocumentVersion) -> HistoryRow:
    """One row of the history, its summary computed now (the deferred cells ask for it)."""
    versions = list(document.versions.defer("parsed").order_by("number"))
    index = next(k for k, v in enumerate(versions) if v.pk == version.pk)
    previous = versions[index - 1] if index else None
    row = HistoryRow(version, index + 1, previous, None)
    if row.comparable:
        row.summary = summary_between(previous, version)
    return row


def events(document: Document, limit: int = 20) -> QuerySet[VersionEvent]:
    return document.version_events.select_related("user")[:limit]


@dataclass
class VersionedDocument:
    document: Document
    count: int
    newest: DocumentVersion | None
    previous: DocumentVersion | None


def versioned_documents(user) -> list[VersionedDocument]:
    """Documents the user may read with more than one version, the newest change first."""
    documents = (
        Document.objects.visible_to(user)
        .live()
        .annotate(version_count=Count("versions"), last_added=Max("versions__created_at"))
        .filter(version_count__gt=1)
        .select_related("source")
        .order_by("-last_added", "title")
    )
    documents = list(documents)
    latest: dict[int, list[DocumentVersion]] = {}
    versions = (
        DocumentVersion.objects.filter(document__in=documents)
        .defer("parsed")
        .order_by("document_id", "-number")
    )
    for version in versions:
        bucket = latest.setdefault(version.document_id, [])
        if len(bucket) < 2:
            bucket.append(version)
    rows = []
    for document in documents:
        newest = latest.get(document.pk, [])
        rows.append(
            VersionedDocument(
                document,
                document.version_count,
                newest[0] if newest else None,
                newest[1] if len(newest) > 1 else None,
            )
        )
    return rows
