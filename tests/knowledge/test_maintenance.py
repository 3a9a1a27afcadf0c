"""Finding stalled ingests: dead workers (stale heartbeat) and lost messages (long pending)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from knowledge.ingest.maintenance import requeue_stalled_versions, stalled_versions
from knowledge.ingest.registration import register_file
from knowledge.models import DocumentVersion, Source


@pytest.fixture
def version(db, settings) -> DocumentVersion:
    settings.INGEST_STALE_SECONDS = 60
    source = Source.objects.create(name="Specs")
    return register_file(source, "a.md", b"# A\n\nText.\n", enqueue=False).version


def set_fields(version: DocumentVersion, **fields) -> None:
    DocumentVersion.objects.filter(pk=version.pk).update(**fields)


def ago(seconds: int):
    return timezone.now() - timedelta(seconds=seconds)


def test_active_version_whose_heartbeat_stopped_is_stalled(version):
    set_fields(version, status="embedding", heartbeat_at=ago(30))
    assert version.pk not in stalled_versions()  # a live worker beats more often than that
    set_fields(version, heartbeat_at=ago(61))
    assert version.pk in stalled_versions()
    assert version.pk in requeue_stalled_versions()
    # Still stalled: the heartbeat is left old, which is what lets the next run claim it.
    assert version.pk in stalled_versions()


def test_version_pending_for_long_is_requeued_once_per_period(version):
    assert version.pk not in stalled_versions()  # just queued
    set_fields(version, created_at=ago(3600))
    assert version.pk in stalled_versions()  # its message was probably lost
    assert version.pk in requeue_stalled_versions()
    assert version.pk not in requeue_stalled_versions()  # not flooded into the queue again
    set_fields(version, heartbeat_at=ago(361))
    assert version.pk in requeue_stalled_versions()  # a period later: once more


def test_ready_and_failed_versions_are_never_stalled(version):
    for status in ("ready", "failed"):
        set_fields(version, status=status, created_at=ago(3600), heartbeat_at=ago(3600))
        assert version.pk not in stalled_versions()
