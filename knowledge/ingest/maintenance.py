"""Finding work that fell through the cracks: dead workers, lost messages."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from knowledge.models import DocumentVersion
from portal.processes import process_gone

Status = DocumentVersion.Status
# The stage of a pending version whose task could not be sent (the queue was down).
NOT_QUEUED = "not queued"


def stalled_versions() -> list[int]:
    """Versions active with a stale heartbeat or whose run's process is gone from this machine,
    pending whose task could not be sent, or pending for very long (a lost message).

    A re-enqueued version that is in fact still queued costs nothing: the second task finds
    it claimed or done and returns. A pending version counts again only a long while after it
    was last re-enqueued (``requeue_stalled_versions`` marks it), so a long queue is not
    flooded with another copy of every waiting version at each run.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=settings.INGEST_STALE_SECONDS)
    forgotten = now - timedelta(seconds=settings.INGEST_STALE_SECONDS * 6)
    found = list(
        DocumentVersion.objects.filter(
            Q(status__in=DocumentVersion.ACTIVE, heartbeat_at__lt=stale)
            | Q(status=Status.PENDING, stage=NOT_QUEUED)
            | Q(status=Status.PENDING, created_at__lt=forgotten)
            & (Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=forgotten))
        ).values_list("pk", flat=True)[:500]
    )
    return found + [pk for pk in orphaned_versions() if pk not in found]


def orphaned_versions() -> list[int]:
    """Active versions with a fresh heartbeat whose run's process is gone from this machine
    (a worker killed with its pool): they need not wait for the stale limit."""
    fresh = timezone.now() - timedelta(seconds=settings.INGEST_STALE_SECONDS)
    rows = DocumentVersion.objects.filter(
        status__in=DocumentVersion.ACTIVE, heartbeat_at__gte=fresh
    ).values_list("pk", "claimed_by")
    return [pk for pk, owner in rows if process_gone(owner)]


def seconds_until_stale(version_id: int) -> float | None:
    """How long until the version's run counts as dead (its heartbeat stale); None when the
    version is not being ingested."""
    beat = (
        DocumentVersion.objects.filter(pk=version_id, status__in=DocumentVersion.ACTIVE)
        .values_list("heartbeat_at", flat=True)
        .first()
    )
    if beat is None:
        return None
    age = (timezone.now() - beat).total_seconds()
    return max(0.0, settings.INGEST_STALE_SECONDS - age)


def requeue_stalled_versions() -> list[int]:
    """The stalled versions, each pending one marked as re-enqueued now (see above).

    An active one is left as it is: its stale heartbeat is what lets the next run claim it.
    """
    ids = stalled_versions()
    DocumentVersion.objects.filter(pk__in=ids, status=Status.PENDING, stage=NOT_QUEUED).update(
        stage=""
    )
    DocumentVersion.objects.filter(pk__in=ids, status=Status.PENDING).update(
        heartbeat_at=timezone.now()
    )
    return ids


def mark_not_queued(version_id: int) -> None:
    """The version's task could not be sent (the queue was down): the next recovery round
    sends it (``stalled_versions``), rather than the long wait for a lost message."""
    DocumentVersion.objects.filter(pk=version_id, status=Status.PENDING).update(stage=NOT_QUEUED)
