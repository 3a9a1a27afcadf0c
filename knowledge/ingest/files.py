"""Walking folders for documents (CLI, drop folder, demo knowledge base)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat as stat_mode
from collections import Counter
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from django.conf import settings

from knowledge.ingest.registration import IMAGE_SUFFIXES, SUPPORTED_SUFFIXES
from knowledge.parsing.detect import API_EXTENSIONS, looks_like_openapi

SKIPPED_NAMES: set[str] = set()


def _through_link(path: Path, root: Path) -> bool:
    """Is the path, or a folder on its way from ``root``, a symbolic link?"""
    current = path
    while current != root and current != current.parent:
        if current.is_symlink():
            return True
        current = current.parent
    return False


HARD_LINK = (
    "The file is a hard link to a file outside this folder (it has other names elsewhere); "
    "it was not read"
)


def _names_inside(files: list[Path]) -> Counter[tuple[int, int]]:
    """How many names each file (device, inode) has among ``files``."""
    found: Counter[tuple[int, int]] = Counter()
    for path in files:
        with contextlib.suppress(OSError):
            stat = path.lstat()
            found[(stat.st_dev, stat.st_ino)] += 1
    return found


def _hard_link_to_outside(path: Path, names_inside: Counter[tuple[int, int]]) -> bool:
    """The rule for hard links: a file with more names (links) than it has inside the folder
    scanned has a name outside it, and what is outside is not the folder's to index (a link to
    the portal's secret key, say). A file linked twice inside the folder is still read; once
    its outside name is gone, the file is read too."""
    try:
        stat = path.lstat()
    except OSError:
        return True
    return stat.st_nlink > names_inside.get((stat.st_dev, stat.st_ino), 0)


def iter_document_files(
    root: Path, *, images: bool = True, identities: dict[str, tuple[int, int]] | None = None
) -> Iterator[tuple[Path, str, str]]:
    """(path, path relative to root, problem) for every candidate file, sorted; images (scans)
    too unless ``images`` is False (a synced folder, whose pictures illustrate its pages).
    ``identities``, when given, gets each candidate's (device, inode) as the listing saw it, for
    ``read_listed_file`` to read that file and no other.

    ``problem`` is a plain-words reason to refuse the file before reading it (too big, a hard
    link to a file outside the folder), or "".
    Hidden files, files of unsupported types and tables of contents are not candidates, nor, in
    a folder, JSON and YAML files that are no API description (package.json, mkdocs.yml): a
    file named on its own is always one, and is told what it is not.
    """
    limit = settings.MAX_UPLOAD_MB * 1024 * 1024
    suffixes = SUPPORTED_SUFFIXES | IMAGE_SUFFIXES if images else SUPPORTED_SUFFIXES
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    base = root.resolve()
    names_inside = _names_inside(files) if root.is_dir() else {}
    for path in files:
        # A symbolic link (or a path through one) could point anywhere, the secret key
        # included: only regular files inside the folder scanned are candidates.
        if root.is_dir() and (_through_link(path, root) or not path.resolve().is_relative_to(base)):
            continue
        if root.is_dir() and _hard_link_to_outside(path, names_inside):
            relative = path.relative_to(root).as_posix()
            yield path, relative, HARD_LINK
            continue
        relative = path.name if root.is_file() else path.relative_to(root).as_posix()
        if any(part.startswith(".") for part in Path(relative).parts):
            continue
        if identities is not None:
            with contextlib.suppress(OSError):
                seen = path.lstat()
                identities[relative] = (seen.st_dev, seen.st_ino)
        if path.suffix.lower() not in suffixes or path.name in SKIPPED_NAMES:
            continue
        size = path.stat().st_size
        suffix = path.suffix.lower()
        if (
            root.is_dir()
            and suffix in API_EXTENSIONS
            and size <= limit
            and not looks_like_openapi(path.read_bytes(), suffix)
        ):
            continue
        problem = ""
        if size > limit:
            problem = (
                f"The file is {size / 1024 / 1024:.0f} MB; the limit is {settings.MAX_UPLOAD_MB} MB"
            )
        yield path, relative, problem


class FileRefused(Exception):
    """A listed file that is not read after all; the message says why in plain words."""


SWAPPED = (
    "The file was replaced (by a link or another file) after the folder was listed; it was not "
    "read, the next scan looks at it again"
)
# Opened without following a symbolic link; without blocking on a FIFO swapped in for a file.
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_OPEN_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def read_listed_file(
    root: Path, relative: str, identity: tuple[int, int] | None, *, limit: int
) -> bytes:
    """The bytes of the file ``iter_document_files`` listed as ``relative`` under ``root``,
    opened once and read from that one descriptor: every folder on the way and the file itself
    opened without following a symbolic link (``O_NOFOLLOW``), then checked on the open file
    (``fstat``): a regular file, the very one the listing saw (``identity``), at most ``limit``
    bytes. Checking a name and reading it again by name would follow a link swapped in
    between (to the portal's secret key, say). Raises ``FileRefused``."""
    parts = PurePosixPath(relative).parts
    if not parts or any(part in ("", ".", "..") for part in parts):
        raise FileRefused(SWAPPED)
    try:
        folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise FileRefused(f"The folder cannot be read ({exc.strerror})") from None
    try:
        for part in parts[:-1]:
            inner = os.open(part, _OPEN_FOLDER, dir_fd=folder)
            os.close(folder)
            folder = inner
        descriptor = os.open(parts[-1], _OPEN_FILE, dir_fd=folder)
    except OSError as exc:
        # ELOOP: a link where the listing saw a file; ENOTDIR: a link where it saw a folder.
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT, errno.ENXIO):
            raise FileRefused(SWAPPED) from None
        raise FileRefused(f"The file cannot be read ({exc.strerror})") from None
    finally:
        os.close(folder)
    with os.fdopen(descriptor, "rb") as handle:
        found = os.fstat(handle.fileno())
        if not stat_mode.S_ISREG(found.st_mode):
            raise FileRefused(SWAPPED)
        if identity is not None and (found.st_dev, found.st_ino) != identity:
            raise FileRefused(SWAPPED)
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(f"The file is over {limit / 1024 / 1024:.0f} MB")
    return data
