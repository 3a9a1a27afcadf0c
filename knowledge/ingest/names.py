"""What a file's path and name say: a document path that stays inside its source, a version
label and date ("2021-03-06", "v2.3"), a title. Plain text in and out."""

from __future__ import annotations

import re
from datetime import date
from pathlib import PurePosixPath

_DATE_IN_NAME = re.compile(r"(?<!\d)(\d{4})[-_.](\d{2})[-_.](\d{2})(?!\d)")
_VERSION_IN_NAME = re.compile(
    r"(?<![A-Za-z0-9])[vV](?:er(?:sion)?)?[ _.-]?(\d+(?:\.\d+){0,3})(?![\d.])"
)


def safe_path(path: str) -> str:
    """A document path with no way out of its source: no '..', no absolute root, '/' only."""
    parts = [p for p in re.split(r"[\\/]+", path) if p not in ("", ".", "..")]
    cleaned = "/".join(re.sub(r"[\x00-\x1f]", "", p).strip() for p in parts)
    return cleaned[:1000] or "untitled"


def label_from_name(filename: str) -> tuple[str, date | None]:
    """A version label from a file name: a date (2021-03-06) or a version number (v2.3)."""
    stem = PurePosixPath(filename).stem
    found = _DATE_IN_NAME.search(stem)
    if found:
        try:
            day = date(int(found[1]), int(found[2]), int(found[3]))
        except ValueError:
            day = None
        if day is not None:
            # Two versions can share a date: keep a short tag after it ("2021-03-17 5e1f0a9").
            tail = re.sub(r"^[\s_.-]+", "", stem[found.end() :])
            tag = tail if 0 < len(tail) <= 12 and re.fullmatch(r"[\w.-]+", tail) else ""
            return (f"{day.isoformat()} {tag}".strip(), day)
    found = _VERSION_IN_NAME.search(stem)
    if found:
        return f"v{found[1]}", None
    return "", None


def title_from_path(path: str) -> str:
    stem = PurePosixPath(path).stem
    return re.sub(r"[_]+", " ", stem).strip() or path
