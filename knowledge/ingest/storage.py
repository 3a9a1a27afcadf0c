"""Version files, stored once per content hash (two versions with the same bytes share a file)."""

from __future__ import annotations

import hashlib

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def blob_name(sha256: str) -> str:
    return f"blobs/{sha256[:2]}/{sha256}"


def store_blob(data: bytes, sha256: str | None = None) -> str:
    """Save ``data`` under its hash unless it is already there; returns the storage name."""
    digest = sha256 or sha256_of(data)
    name = blob_name(digest)
    if not default_storage.exists(name):
        saved = default_storage.save(name, ContentFile(data))
        if saved != name:  # a concurrent writer won the race: keep one copy
            default_storage.delete(saved)
    return name


def read_blob(name: str) -> bytes:
    with default_storage.open(name, "rb") as handle:
        return handle.read()
