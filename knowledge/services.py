"""Service functions behind the knowledge pages (the views stay thin)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from django.conf import settings
from django.contrib import messages
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Prefetch, Q
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from knowledge.ingest import second
from knowledge.ingest.registration import register_file
from knowledge.ingest.storage import StorageFull
from knowledge.models import Document, DocumentVersion, Source
from knowledge.queue import FILL_SECOND_VECTORS, INGEST_VERSION, enqueue_on_commit, pace
from knowledge.roles import Role
from knowledge.text.confusables import visible
from portal.params import id_param


@dataclass
class DocumentRow:
    document: Document
    version: DocumentVersion | None  # the newest version (what ingest is working on)
    current: DocumentVersion | None  # the newest ready version (what search sees)
    pending: bool = False

    @property
    def status(self) -> str:
        return self.version.status if self.version else "none"


def document_rows(user, *, source_id: str = "", query: str = "") -> list[DocumentRow]:
    """Documents the user may read, each with its newest and its searchable version."""
    documents = (
        Document.objects.visible_to(user)
        .live()
        .select_related("source", "current_version")
        .prefetch_related(
            Prefetch(
                "versions", queryset=DocumentVersion.objects.defer("parsed").order_by("-number")
            )
        )
        .order_by("source__priority", "source__name", "path")
    )
    if id_param(source_id):
        documents = documents.filter(source_id=id_param(source_id))
    if query:
        documents = documents.filter(Q(title__icontains=query) | Q(path__icontains=query))
    rows = []
    for document in documents[:2000]:
        versions = list(document.versions.all())
        newest = versions[0] if versions else None
        rows.append(
            DocumentRow(
                document,
                newest,
                document.current_version,
                pending=bool(newest and newest.status == "pending"),
            )
        )
    return rows


@dataclass(frozen=True)
class MeaningIndex:
    """The second vectors of the sources a user may read: how far they have got, and how long
    the rest should take at the pace of the work so far (or how long the last run took)."""

    progress: second.Progress
    seconds_left: float | None = None  # at the current run's pace (None: not known yet)
    took: float | None = None  # the last run, done within the day: its seconds

    def __getattr__(self, name: str):  # done, total, percent, complete: the progress's
        return getattr(self.progress, name)

    @property
    def minutes_left(self) -> int | None:
        return None if self.seconds_left is None else max(1, round(self.seconds_left / 60))

    @property
    def minutes_took(self) -> int | None:
        return None if self.took is None else max(1, round(self.took / 60))


def second_vectors(user) -> MeaningIndex | None:
    """How far the second vectors of the sources the user may read have got, and their pace
    (None: they are off)."""
    visible = Source.objects.visible_to(user).values_list("pk", flat=True)
    progress = second.progress(list(visible))
    if progress is None:
        return None
    run = pace(FILL_SECOND_VECTORS)
    if not run:
        return MeaningIndex(progress)
    spent = run["at"] - run["started"]
    made = run["done"] - run["start_done"]
    if run["done"] >= run["total"]:
        return MeaningIndex(progress, took=spent if spent > 0 else None)
    rate = made / spent if spent > 0 and made > 0 else 0.0
    left = (progress.total - progress.done) / rate if rate else None
    return MeaningIndex(progress, seconds_left=left)


def status_counts(rows: list[DocumentRow]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    return counts


def version_for_view(document: Document, requested: str | None) -> DocumentVersion | None:
    versions = document.versions.all()
    if id_param(requested) is not None:
        return versions.filter(pk=id_param(requested)).first()
    return document.current_version or versions.order_by("-number").first()


def synced_sources(user) -> dict:
    """The sources that sync themselves, as the user may see them, and whether one is syncing."""
    sources = list(Source.objects.visible_to(user).exclude(connector=""))
    return {"synced_sources": sources, "syncing": any(s.is_syncing for s in sources)}


def page_url(document: Document) -> str:
    """The original page's address: its own when the source gave one (a ticket), else the
    source's base URL joined with the document path."""
    if document.url:
        return document.url
    base = document.source.base_url
    if not base:
        return ""
    return base.rstrip("/") + "/" + document.path.lstrip("/")


def source_for_upload(source_id: str | None, new_name: str, user) -> Source | None:
    """The source ``user`` uploads into: the one chosen, or the one named (created when no
    source has a name that reads the same: in any case, spacing, with invisible characters or
    look-alike letters). None when there is none ``user`` may write to: a
    source named like one they may not read is not theirs to add versions to
    (``SourceQuerySet.writable_by``), and which it is stays unsaid."""
    writable = Source.objects.writable_by(user)
    # As it is seen: no invisible character, one space between words (confusables.visible).
    name = " ".join(visible(new_name).split())[:200]
    if name:
        # A name that only looks different ("Secret\u00a0A", a Cyrillic "Ѕ") is that source.
        existing = Source.objects.named_like(name)
        if existing is None:
            return Source.objects.create(name=name, kind=Source.Kind.UPLOADS)
        return writable.filter(pk=existing.pk).first()
    if id_param(source_id):
        return writable.filter(pk=id_param(source_id)).first()
    return None


@dataclass
class UploadOutcome:
    new: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def messages(self) -> list[tuple[int, str]]:
        out = []
        if self.new:
            out.append(
                (
                    messages.SUCCESS,
                    ngettext(
                        "%(count)d new version queued: %(paths)s",
                        "%(count)d new versions queued: %(paths)s",
                        len(self.new),
                    )
                    % {"count": len(self.new), "paths": ", ".join(self.new[:10])},
                )
            )
        if self.unchanged:
            out.append(
                (
                    messages.INFO,
                    _("Unchanged (same bytes already indexed): %(paths)s")
                    % {"paths": ", ".join(self.unchanged[:10])},
                )
            )
        for text in self.refused:
            out.append((messages.ERROR, text))
        if not (self.new or self.unchanged or self.refused):
            out.append((messages.ERROR, _("No file was uploaded.")))
        return out


def register_uploads(
    source: Source, files: list[UploadedFile], user, *, refused: list[str]
) -> UploadOutcome:
    """Register uploaded files (bad content is caught at ingest and shown on its version)."""
    outcome = UploadOutcome()
    for name in refused:
        outcome.refused.append(
            _("%(name)s: over the %(limit)s MB limit, not read")
            % {"name": PurePosixPath(name).name, "limit": settings.MAX_UPLOAD_MB}
        )
    for uploaded in files:
        name = uploaded.name or "upload"
        data = uploaded.read()
        try:
            registration = register_file(source, name, data, added_by=user, via="upload")
        except StorageFull:
            # Nothing of it was kept (knowledge.ingest.storage): the same file uploaded again
            # once there is room is stored whole.
            outcome.refused.append(
                _("%(name)s: not saved, the server's disk is full; try again later.")
                % {"name": PurePosixPath(name).name}
            )
            continue
        (outcome.new if registration.created else outcome.unchanged).append(
            registration.document.path
        )
    return outcome


def reindex(scope: str, pk: int | None, user) -> int | None:
    """Force a re-ingest of the newest version of each document in scope that ``user`` may
    write to; returns how many (None: no such document or source of theirs).

    A version being ingested right now (a long scan being recognised) is taken from the run
    that holds it: its claim is dropped here, so that run stops at its next page (its
    heartbeat finds the claim gone) and the queued re-ingest claims the version afresh.
    """
    writable = Source.objects.writable_by(user)
    documents = Document.objects.live().filter(source__in=writable.values("pk"))
    if scope == "document":
        documents = documents.filter(pk=pk)
        if not documents.exists():
            return None
    elif scope == "source":
        if not writable.filter(pk=pk).exists():
            return None
        documents = documents.filter(source_id=pk)
    newest = (
        DocumentVersion.objects.filter(document__in=documents)
        .order_by("document_id", "-number")
        .distinct("document_id")
        .values_list("pk", flat=True)
    )
    version_ids = list(newest)
    with transaction.atomic():
        DocumentVersion.objects.filter(
            pk__in=version_ids, status__in=DocumentVersion.ACTIVE
        ).update(
            status=DocumentVersion.Status.PENDING,
            claim_token="",
            claimed_by="",
            stage="queued",
            progress=0,
        )
        for version_id in version_ids:
            enqueue_on_commit(INGEST_VERSION, version_id, force=True)
    return len(version_ids)


def set_role(document: Document, role: str) -> bool:
    """Staff set the document's role ("" gives it back to its source's role or the one read
    from it); False for a value that is not a role."""
    if role and role not in Role.values:
        return False
    Document.objects.filter(pk=document.pk).update(role=role)
    document.role = role
    return True
