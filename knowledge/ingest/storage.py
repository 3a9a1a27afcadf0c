"""Version files, stored once per content hash (two versions with the same bytes share a file)."""

from __future__ import annotations

import errno
import hashlib
import logging

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

logger = logging.getLogger(__name__)


class StorageFull(OSError):
    """The files folder's disk is full: nothing of the file was kept."""


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def blob_name(sha256: str) -> str:
    return f"blobs/{sha256[:2]}/{sha256}"


def store_blob(data: bytes, sha256: str | None = None) -> str:
    """Save ``data`` under its hash unless it is already there whole; returns the storage name.

    A write that fails (the disk full) removes what it wrote: a file cut short under the hash
    of the whole would otherwise be taken for it by the next upload of the same bytes, and that
    version would be read from the truncated copy. Beside a copy of the wrong size (an earlier
    failure, or another process writing it right now) a whole one is written under a name of
    its own. Raises ``StorageFull`` (an ``OSError``) when the disk is full.
    """
    digest = sha256 or sha256_of(data)
    name = blob_name(digest)
    if default_storage.exists(name) and default_storage.size(name) == len(data):
        return name
    target = default_storage.get_available_name(name)
    try:
        return default_storage.save(target, ContentFile(data))
    except OSError as exc:
        _remove_partial(target)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StorageFull(exc.errno, "the disk of the files folder is full") from exc
        raise


def _remove_partial(name: str) -> None:
    try:
        default_storage.delete(name)
    except OSError:
        logger.warning("could not remove the partly written %s", name, exc_info=True)


def read_blob(name: str) -> bytes:
    with default_storage.open(name, "rb") as handle:
        return handle.read()
