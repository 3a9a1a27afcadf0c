"""When sources sync: due by their interval, queued once (a compare-and-set on the status), a
lost sync queued again after the stale limit; "Sync now" does not pile up behind a running one."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from knowledge.models import Source
from knowledge.sources.schedule import due_sources, queue_due_syncs, request_sync


def git_source(name: str, **fields) -> Source:
    return Source.objects.create(
        name=name, connector="git", sync_url="/srv/wiki.git", kind="wiki", **fields
    )


def test_due_sources_are_those_whose_interval_passed_and_each_is_queued_once(db, settings):
    settings.SOURCE_SYNC_STALE_SECONDS = 3600
    now = timezone.now()
    never = git_source("Never synced")
    git_source("On demand only", sync_interval_minutes=0)
    Source.objects.create(name="Uploads")  # no connector: never synced by the schedule
    git_source("Fresh", last_synced_at=now - timedelta(minutes=5), last_sync_status="ok")
    old = git_source("Old", last_synced_at=now - timedelta(minutes=20), last_sync_status="failed")
    git_source(
        "Queued",
        last_synced_at=now - timedelta(minutes=20),
        last_sync_status="queued",
        sync_requested_at=now - timedelta(minutes=1),
    )
    lost = git_source(
        "Lost",
        last_synced_at=now - timedelta(hours=3),
        last_sync_status="running",
        sync_requested_at=now - timedelta(hours=2),
    )
    hourly = git_source(
        "Hourly", sync_interval_minutes=60, last_synced_at=now - timedelta(minutes=30)
    )

    assert sorted(due_sources()) == sorted([never.pk, old.pk, lost.pk])
    assert sorted(queue_due_syncs()) == sorted([never.pk, old.pk, lost.pk])
    statuses = dict(Source.objects.values_list("name", "last_sync_status"))
    assert statuses["Never synced"] == statuses["Old"] == statuses["Lost"] == "queued"
    assert queue_due_syncs() == []  # queued now: not again
    assert Source.objects.get(pk=hourly.pk).last_sync_status == ""


def test_sync_now_queues_a_source_unless_a_sync_is_under_way(db):
    source = git_source("Wiki", sync_interval_minutes=0)
    assert request_sync(source) is True
    source.refresh_from_db()
    assert source.last_sync_status == "queued" and source.sync_requested_at is not None
    assert request_sync(source) is False
    Source.objects.filter(pk=source.pk).update(last_sync_status="ok")
    assert request_sync(source) is True
    assert request_sync(Source.objects.create(name="Uploads")) is False  # nothing to sync
