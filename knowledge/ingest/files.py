"""Walking folders for documents (CLI, drop folder, demo knowledge base)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

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


def iter_document_files(root: Path, *, images: bool = True) -> Iterator[tuple[Path, str, str]]:
    """(path, path relative to root, problem) for every candidate file, sorted; images (scans)
    too unless ``images`` is False (a synced folder, whose pictures illustrate its pages).

    ``problem`` is a plain-words reason to refuse the file before reading it (too big), or "".
    Hidden files, files of unsupported types and tables of contents are not candidates, nor, in
    a folder, JSON and YAML files that are no API description (package.json, mkdocs.yml): a
    file named on its own is always one, and is told what it is not.
    """
    limit = settings.MAX_UPLOAD_MB * 1024 * 1024
    suffixes = SUPPORTED_SUFFIXES | IMAGE_SUFFIXES if images else SUPPORTED_SUFFIXES
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    base = root.resolve()
    for path in files:
        # A symbolic link (or a path through one) could point anywhere, the secret key
        # included: only regular files inside the folder scanned are candidates.
        if root.is_dir() and (_through_link(path, root) or not path.resolve().is_relative_to(base)):
            continue
        relative = path.name if root.is_file() else path.relative_to(root).as_posix()
        if any(part.startswith(".") for part in Path(relative).parts):
            continue
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
