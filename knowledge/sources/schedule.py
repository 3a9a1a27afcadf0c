"""When sources sync: on their interval (a beat task asks every minute which are due) and on
demand (the "Sync now" button, the admin action).

Queuing is a compare-and-set on the source's status: a source already queued or syncing is not
queued again (unless that sync has been silent for ``KB_SOURCE_SYNC_STALE_SECONDS``: its worker
died), so a slow sync is never piled up behind. A queued task that finds another sync running
does nothing (``knowledge.sources.sync``).
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import DateTimeField, ExpressionWrapper, F, Q, Value
from django.utils import timezone

from knowledge.models import Source
from knowledge.queue import SYNC_SOURCE, enqueue_on_commit

Status = Source.SyncStatus


def _free() -> Q:
    """Sources with no sync queued or running (or one presumed lost)."""
    stale = timezone.now() - timedelta(seconds=settings.SOURCE_SYNC_STALE_SECONDS)
    return (
        ~Q(last_sync_status__in=Source.SYNC_ACTIVE)
        | Q(sync_requested_at__isnull=True)
        | Q(sync_requested_at__lt=stale)
    )


def _claim(source_id: int) -> bool:
    """Mark the source queued unless a sync is queued or running; True when this call did."""
    claimed = (
        Source.objects.filter(_free(), pk=source_id)
        .exclude(connector="")
        .update(last_sync_status=Status.QUEUED, sync_requested_at=timezone.now())
    )
    if claimed:
        enqueue_on_commit(SYNC_SOURCE, source_id, on_failure=lambda: _unclaim(source_id))
    return bool(claimed)


def _unclaim(source_id: int) -> None:
    # The task could not be sent (the queue was down): free again, the next due check (or a
    # "Sync now") queues it, rather than after KB_SOURCE_SYNC_STALE_SECONDS.
    Source.objects.filter(pk=source_id, last_sync_status=Status.QUEUED).update(
        sync_requested_at=None
    )


def request_sync(source: Source) -> bool:
    """Queue a sync of ``source`` now; False when one is already queued or running."""
    with transaction.atomic():
        return _claim(source.pk)


def due_sources() -> list[int]:
    """Sources whose interval has passed since their last sync (or that never synced)."""
    due_at = ExpressionWrapper(
        F("last_synced_at") + F("sync_interval_minutes") * Value(timedelta(minutes=1)),
        output_field=DateTimeField(),
    )
    return list(
        Source.objects.exclude(connector="")
        .filter(_free(), sync_interval_minutes__gt=0)
        .alias(due_at=due_at)
        .filter(Q(last_synced_at__isnull=True) | Q(due_at__lte=timezone.now()))
        .values_list("pk", flat=True)
    )


def queue_due_syncs() -> list[int]:
    """Queue a sync of every due source; returns the ids queued."""
    with transaction.atomic():
        return [pk for pk in due_sources() if _claim(pk)]
