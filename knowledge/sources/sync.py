"""The sync service: one source brought in line with what its connector reports, once.

Idempotent by state, not by hope:
- one sync of a source at a time: a PostgreSQL advisory lock (session level, keyed by the
  source) is taken without waiting; a second sync, in another worker or a ``manage.py source
  sync`` at the same time, finds it taken and does nothing;
- the connector reports changes since the source's cursor (the last commit synced), and the
  cursor moves only when a sync succeeded: a second sync with nothing new changes nothing;
- everything a sync registers (new versions, renames, removals) is written in one transaction,
  so a sync that fails half-way leaves nothing behind it: no half of the changes searchable, and
  the next sync starts again from the same cursor. The ingest tasks of its new versions are
  enqueued when that transaction commits; a version is searchable once it is ready, as always;
- the same bytes never make a second version (``register_file``), whatever a connector offers.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass, field

from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import Count
from django.utils import timezone

from knowledge.ingest.names import safe_path
from knowledge.ingest.registration import register_file, remove_document
from knowledge.models import Document, DocumentVersion, Source
from knowledge.sources.base import ChangedItem, Changes, Connector, SyncError
from knowledge.sources.folder import FolderConnector
from knowledge.sources.git import GitConnector
from knowledge.sources.tracker import TrackerConnector
from knowledge.versions.actions import move_version

logger = logging.getLogger(__name__)
Status = Source.SyncStatus
LOCK_CLASS = 0x6B62  # advisory lock namespace ("kb") for source syncs; the source id is the key


@dataclass
class SyncOutcome:
    source_id: int
    source: str = ""
    status: str = Status.OK  # ok, failed, or busy (another sync of the source was running)
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)
    version_ids: list[int] = field(default_factory=list)  # new versions, oldest first
    where: str = ""
    error: str = ""

    def summary(self) -> str:
        """The result in plain words, as the Documents page shows it."""
        if self.status == "busy":
            return "Another sync of this source was running; this one did nothing."
        if self.status == Status.FAILED:
            return self.error
        parts = [
            f"{len(self.added)} added" if self.added else "",
            f"{len(self.changed)} changed" if self.changed else "",
            f"{len(self.renamed)} renamed" if self.renamed else "",
            f"{len(self.removed)} removed" if self.removed else "",
            f"{len(self.refused)} refused" if self.refused else "",
        ]
        done = ", ".join(p for p in parts if p)
        where = f" ({self.where})" if self.where else ""
        if not done:
            return f"Up to date{where}."
        versions = len(self.version_ids)
        unchanged = f"; {self.unchanged} unchanged" if self.unchanged else ""
        return (
            f"Documents {done}{unchanged}; {versions} new "
            f"version{'s' if versions != 1 else ''}{where}."
        )

    def as_dict(self) -> dict:
        data = asdict(self)
        data["renamed"] = [{"from": old, "to": new} for old, new in self.renamed]
        data["refused"] = [{"path": path, "error": why} for path, why in self.refused]
        data["new_versions"] = len(self.version_ids)
        data["summary"] = self.summary()
        return data


def connector_for(source: Source) -> Connector:
    """The connector of the source's kind of sync."""
    if source.connector == Source.Connector.GIT:
        return GitConnector(source)
    if source.connector == Source.Connector.FOLDER:
        return FolderConnector(source)
    if source.connector == Source.Connector.TRACKER:
        return TrackerConnector(source)
    raise SyncError(
        f"{source.name} does not sync itself: it has no connector (git, folder, tracker)."
    )


def sync_source(
    source_id: int, *, enqueue: bool = True, connector: Connector | None = None
) -> SyncOutcome:
    """Bring the source in line with its origin, at most one sync at a time.

    ``enqueue`` False leaves the new versions pending for an in-process ingest (the command
    line); their ids are in the outcome either way.
    """
    with _sync_lock(source_id) as locked:
        source = Source.objects.filter(pk=source_id).first()
        outcome = SyncOutcome(source_id, source.name if source else "")
        if not locked or source is None:
            outcome.status = "busy" if source else Status.FAILED
            outcome.error = "" if source else "The source no longer exists."
            return outcome
        _record(source_id, last_sync_status=Status.RUNNING, sync_requested_at=timezone.now())
        try:
            with closing(connector or connector_for(source)) as reader:
                changes = reader.changes(source.sync_cursor)
                with transaction.atomic():
                    _apply(source, changes, outcome, enqueue=enqueue)
                    _finish(outcome, cursor=changes.cursor)
        except SyncError as exc:
            _fail(outcome, str(exc))
        except (OperationalError, InterfaceError):
            raise  # the database went away: the task retries; the status goes stale meanwhile
        except Exception as exc:
            logger.exception("sync of source %s failed", source_id)
            _fail(
                outcome,
                f"Internal error while syncing ({type(exc).__name__}); "
                "the administrators can see the log",
            )
    return outcome


@contextmanager
def _sync_lock(source_id: int) -> Iterator[bool]:
    """Try the source's advisory lock without waiting; released on the way out (or with the
    connection, should the process die)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [LOCK_CLASS, source_id])
        locked = bool(cursor.fetchone()[0])
    try:
        yield locked
    finally:
        if locked:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [LOCK_CLASS, source_id])


def _apply(source: Source, changes: Changes, outcome: SyncOutcome, *, enqueue: bool) -> None:
    outcome.where = changes.where
    outcome.refused = list(changes.refused)
    seen: set[str] = {safe_path(path) for path, _ in changes.refused}
    gone = [safe_path(path) for path in changes.deleted]
    for item in changes.items:
        path = safe_path(item.path)
        seen.add(path)
        gone += _register(source, item, path, changes.complete, outcome, enqueue=enqueue)
    if changes.complete:
        live = Document.objects.filter(source=source, removed_at__isnull=True)
        gone += [p for p in live.values_list("path", flat=True) if p not in seen]
    for document in Document.objects.filter(source=source, path__in=gone, removed_at__isnull=True):
        remove_document(document)
        outcome.removed.append(document.path)


def _register(
    source: Source,
    item: ChangedItem,
    path: str,
    complete: bool,
    outcome: SyncOutcome,
    *,
    enqueue: bool,
) -> list[str]:
    """Register one item's versions; returns paths that leave search (a rename's old path
    when the new one was taken)."""
    gone: list[str] = []
    previous = safe_path(item.previous_path) if item.previous_path else ""
    if previous and previous != path:
        if _rename(source, previous, path):
            outcome.renamed.append((previous, path))
        else:
            gone.append(previous)
    before = (
        Document.objects.filter(source=source, path=path)
        .annotate(versions_held=Count("versions"))
        .values("removed_at", "versions_held")
        .first()
    )
    known = bool(before and before["versions_held"])
    live = known and before["removed_at"] is None
    versions = list(item.versions)
    if complete and known:
        # A full listing of a document this source already holds: only its current text.
        # Older versions offered now would be numbered after the ones it has.
        versions = versions[-1:]
    created = []
    registration = None
    for version in versions:
        registration = register_file(
            source,
            path,
            version.data,
            filename=item.file_name,
            via=source.connector or "sync",
            label=version.label or None,
            label_date=version.label_date,
            enqueue=enqueue,
        )
        if registration.created:
            created.append(registration.version.pk)
            if version.dated_at is not None:
                _date(registration.version.pk, version.dated_at)
    reverted = registration is not None and not registration.created and _make_current(registration)
    if registration is not None and (item.title or item.url):
        Document.objects.filter(pk=registration.document.pk).update(
            **({"title": item.title[:500]} if item.title else {}),
            **({"url": item.url[:1000]} if item.url else {}),
        )
    outcome.version_ids += created
    if not live:  # new, or back in search
        outcome.added.append(path)
    elif created or reverted:
        outcome.changed.append(path)
    else:
        outcome.unchanged += 1
    return gone


def _date(version_id: int, when) -> None:
    """The version dates from ``when`` (a ticket's resolution), not from this sync. Its
    heartbeat says "queued now", so the maintenance does not take an old date for a lost
    message (``knowledge.ingest.maintenance``)."""
    DocumentVersion.objects.filter(pk=version_id).update(
        created_at=when, heartbeat_at=timezone.now()
    )


def _make_current(registration) -> bool:
    """The current text is the bytes of an older version (a page reverted): that version
    becomes the newest again, so search reads what the source says now. True if it moved."""
    versions = registration.document.versions
    if versions.order_by("-number").values_list("pk", flat=True).first() == registration.version.pk:
        return False
    move_version(registration.version, versions.count(), user=None)  # to the end: the newest
    return True


def _rename(source: Source, old: str, new: str) -> bool:
    """The document at ``old`` takes the path ``new`` (its versions and history with it);
    False when there is no such document or ``new`` already has one."""
    if Document.objects.filter(source=source, path=new).exists():
        return False
    document = Document.objects.select_for_update().filter(source=source, path=old).first()
    if document is None:
        return False
    Document.objects.filter(pk=document.pk).update(path=new)
    return True


def _record(source_id: int, **fields) -> None:
    Source.objects.filter(pk=source_id).update(**fields)


def _finish(outcome: SyncOutcome, *, cursor: str) -> None:
    _record(
        outcome.source_id,
        sync_cursor=cursor,
        last_synced_at=timezone.now(),
        last_sync_status=Status.OK,
        last_sync_result=outcome.summary()[:500],
        last_sync_error="",
    )


def _fail(outcome: SyncOutcome, message: str) -> None:
    """Nothing of the failed sync was kept: its outcome lists nothing, the cursor stays."""
    failed = SyncOutcome(outcome.source_id, outcome.source, Status.FAILED, error=message)
    outcome.__dict__.update(failed.__dict__)
    _record(
        outcome.source_id,
        last_synced_at=timezone.now(),
        last_sync_status=Status.FAILED,
        last_sync_result="",
        last_sync_error=message,
    )
