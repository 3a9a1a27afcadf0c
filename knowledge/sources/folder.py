"""A folder on the server, kept in sync like the drop folder: every sync lists it whole.

The cursor is a hash of the listing (path, size, modification time): when nothing moved, the
sync reads no file. Otherwise every file is offered and the registration's content hash keeps
unchanged ones from making a version; files gone leave search.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings

from knowledge.ingest.files import FileRefused, iter_document_files, read_listed_file
from knowledge.sources.base import ChangedItem, Changes, ItemVersion, SyncError


class FolderConnector:
    def __init__(self, source) -> None:
        self.root = Path(source.sync_url.strip()) / source.subpath.strip().strip("/")

    def changes(self, cursor: str) -> Changes:
        if not self.root.is_dir():
            raise SyncError(f"The folder {self.root} does not exist or cannot be read.")
        identities: dict[str, tuple[int, int]] = {}
        listing = list(iter_document_files(self.root, images=False, identities=identities))
        stamp = hashlib.sha256()
        for path, relative, _ in listing:
            stat = path.stat()
            stamp.update(f"{relative}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
        digest = stamp.hexdigest()
        where = f"{len(listing)} files"
        if digest == cursor:
            return Changes(cursor=digest, where=where)
        return Changes(
            cursor=digest,
            items=(
                ChangedItem(path=relative, versions=self._read(relative, identities.get(relative)))
                for path, relative, problem in listing
                if not problem
            ),
            complete=True,
            refused=[(relative, problem) for _, relative, problem in listing if problem],
            where=where,
        )

    def close(self) -> None:
        pass

    def _read(self, relative: str, identity: tuple[int, int] | None) -> Iterator[ItemVersion]:
        """The listed file, opened once (``read_listed_file``); nothing when it was swapped
        since the listing (its document keeps what it had until the next sync)."""
        limit = settings.MAX_UPLOAD_MB * 1024 * 1024
        try:
            yield ItemVersion(data=read_listed_file(self.root, relative, identity, limit=limit))
        except FileRefused:
            return
