"""Uploads when the files folder's disk is full, or Redis is down (benchmarks/faults.py).

A full disk answered the upload with a bare 500 and left the file's first bytes under the hash
of the whole: the same file uploaded again once there was room was taken as stored, and its
version read the cut copy. Redis down made the upload a 500 too, after the version was stored,
and its task was never sent: the version waited half an hour for the lost-message recovery.
"""

from __future__ import annotations

import hashlib
import html
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from knowledge.ingest.maintenance import NOT_QUEUED, requeue_stalled_versions, stalled_versions
from knowledge.models import DocumentVersion
from portal.embedded import redis_running, start_redis, stop_redis
from portal.services_layout import embedded_layout

PAGE = b"# Handbook\n\n" + b"A sentence of the handbook, written out in full. " * 2000  # ~100 KB


@pytest.fixture
def small_disk(tmp_path, settings) -> Iterator[Path]:
    """The files folder on a 1 MB tmpfs (root only: a real full disk, not a simulated one)."""
    folder = tmp_path / "files"
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    settings.MEDIA_ROOT = folder
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


def fill(folder: Path, keep: int) -> Path:
    filler = folder / "filler"
    with open(filler, "wb") as handle:
        handle.write(b"\0" * (shutil.disk_usage(folder).free - keep))
    return filler


def upload(client, data: bytes) -> str:
    """The Documents page the upload leads to, as text."""
    page = SimpleUploadedFile("handbook.md", data)
    response = client.post(
        "/documents/upload/", {"files": [page], "new_source": "Manuals"}, follow=True
    )
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def test_an_upload_on_a_full_disk_keeps_nothing_and_is_stored_whole_when_sent_again(
    client, alice, small_disk, django_capture_on_commit_callbacks
):
    client.force_login(alice)
    filler = fill(small_disk, keep=16 * 1024)
    page = upload(client, PAGE)
    assert "handbook.md: not saved, the server's disk is full; try again later." in page
    assert not DocumentVersion.objects.exists()
    assert not [p for p in (small_disk / "blobs").rglob("*") if p.is_file()]  # nothing cut short

    filler.unlink()
    with django_capture_on_commit_callbacks(execute=False):
        page = upload(client, PAGE)
    assert "1 new version queued: handbook.md" in page
    version = DocumentVersion.objects.get()
    with version.file.open("rb") as handle:
        assert (
            hashlib.sha256(handle.read()).hexdigest()
            == version.sha256
            == (hashlib.sha256(PAGE).hexdigest())
        )


@pytest.mark.skipif(bool(os.environ.get("REDIS_URL")), reason="stops the embedded Redis")
def test_an_upload_while_redis_is_down_is_stored_and_sent_by_the_next_recovery(
    client, alice, django_capture_on_commit_callbacks
):
    client.force_login(alice)
    layout = embedded_layout()
    stop_redis(layout)
    try:
        assert not redis_running(layout)
        with django_capture_on_commit_callbacks(execute=True):
            page = upload(client, b"# Notes\n\nWritten while the queue was down.\n")
        assert "1 new version queued: handbook.md" in page
    finally:
        start_redis(layout)
    version = DocumentVersion.objects.get()
    assert (version.status, version.stage) == ("pending", NOT_QUEUED)
    # The next recovery round sends it (not half an hour later, as a lost message).
    assert version.pk in stalled_versions()
    assert version.pk in requeue_stalled_versions()
    assert DocumentVersion.objects.get().stage == ""
    assert version.pk not in stalled_versions()  # sent once, not at every round
