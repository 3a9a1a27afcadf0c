"""Finding work that fell through the cracks: dead workers, lost messages."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from knowledge.models import DocumentVersion

Status = DocumentVersion.Status


def stalled_versions() -> list[int]:
    """Versions active with a stale heartbeat, or pending for very long (a lost message).

    A re-enqueued version that is in fact still queued costs nothing: the second task finds
    it claimed or done and returns. A pending version counts again only a long while after it
    was last re-enqueued (``requeue_stalled_versions`` marks it), so a long queue is not
    flooded with another copy of every waiting version at each run.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=settings.INGEST_STALE_SECONDS)
    forgotten = now - timedelta(seconds=settings.INGEST_STALE_SECONDS * 6)
    return list(
        DocumentVersion.objects.filter(
            Q(status__in=DocumentVersion.ACTIVE, heartbeat_at__lt=stale)
            | Q(status=Status.PENDING, created_at__lt=forgotten)
            & (Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=forgotten))
        ).values_list("pk", flat=True)[:500]
    )


def requeue_stalled_versions() -> list[int]:
    """The stalled versions, each pending one marked as re-enqueued now (see above).

    An active one is left as it is: its stale heartbeat is what lets the next run claim it.
    """
    ids = stalled_versions()
    DocumentVersion.objects.filter(pk__in=ids, status=Status.PENDING).update(
        heartbeat_at=timezone.now()
    )
    return ids
