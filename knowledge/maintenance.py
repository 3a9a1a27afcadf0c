"""Finding work that fell through the cracks: dead workers, lost messages."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from knowledge.models import DocumentVersion


def stalled_versions() -> list[int]:
    """Versions active with a stale heartbeat, or pending for very long (a lost message).

    A re-enqueued version that is in fact still queued costs nothing: the second task finds
    it claimed or done and returns.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=settings.INGEST_STALE_SECONDS)
    forgotten = now - timedelta(seconds=settings.INGEST_STALE_SECONDS * 6)
    return list(
        DocumentVersion.objects.filter(
            Q(status__in=DocumentVersion.ACTIVE, heartbeat_at__lt=stale)
            | Q(status=DocumentVersion.Status.PENDING, created_at__lt=forgotten)
        ).values_list("pk", flat=True)[:500]
    )
