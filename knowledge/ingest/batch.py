"""Registering many files at once: folders, version series (ORDER.txt), the demo knowledge base."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from knowledge.ingest.files import iter_document_files
from knowledge.ingest.registration import Registration, register_file
from knowledge.models import Source

_DATED_TAIL = re.compile(r"[\s_.-]+\d{4}[-_.]\d{2}[-_.]\d{2}.*$")
_VERSION_TAIL = re.compile(r"[\s_.-]+[vV](?:er(?:sion)?)?[\s_.-]?\d+(?:\.\d+)*.*$")


@dataclass
class Planned:
    """One file to register: where it is, which document it belongs to, or why it is refused."""

    path: Path
    document_path: str
    problem: str = ""


def document_key(filename: str) -> str:
    """The document a versioned file name belongs to: "ПМИ_2021-03-06_c41d2b7.docx" -> "ПМИ.docx"."""
    path = Path(filename)
    stem = _DATED_TAIL.sub("", path.stem)
    stem = _VERSION_TAIL.sub("", stem).rstrip(" _.-") or path.stem
    return stem + path.suffix.lower()


def read_order_file(folder: Path) -> list[str]:
    """File names listed in ``ORDER.txt`` (oldest first); comments and blank lines ignored."""
    order = folder / "ORDER.txt"
    if not order.is_file():
        return []
    lines = order.read_text(encoding="utf-8", errors="replace").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def plan_files(
    paths: list[Path], *, as_versions: bool = False, document: str = ""
) -> list[Planned]:
    """What to register, in order.

    Without ``as_versions`` every file is its own document (path relative to the folder given).
    With it, files are versions: of ``document`` when named, else grouped by their name without
    the date or version tag; ordered by a folder's ORDER.txt when present (dates can tie and a
    date inside the text can lag the change, so the explicit order wins), else as given.
    """
    planned: list[Planned] = []
    for root in paths:
        candidates = list(iter_document_files(root))
        if as_versions:
            order = read_order_file(root) if root.is_dir() else []
            if order:
                rank = {name: i for i, name in enumerate(order)}
                candidates = [c for c in candidates if c[0].name in rank]
                candidates.sort(key=lambda c: rank[c[0].name])
        for path, relative, problem in candidates:
            if as_versions:
                target = document or document_key(path.name)
            else:
                target = relative if root.is_dir() else path.name
            planned.append(Planned(path, target, problem))
    return planned


def register_planned(
    source: Source, planned: Planned, *, via: str, added_by=None, enqueue: bool
) -> Registration:
    return register_file(
        source,
        planned.document_path,
        planned.path.read_bytes(),
        filename=planned.path.name,
        via=via,
        added_by=added_by,
        enqueue=enqueue,
    )
