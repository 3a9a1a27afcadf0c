"""Building parsed documents for the diff tests, and reading the real version histories."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from knowledge.parsing.base import Block, HeadingTracker, ParsedDocument, Table
from knowledge.parsing.registry import parse_document

ROOT = Path(__file__).resolve().parents[3]
CORPUS = Path(os.environ.get("KB_DEMO_CORPUS", ROOT.parent / "shared" / "corpus"))
HSE = CORPUS / "versions" / "hse_app_ru"
TOS = CORPUS / "versions" / "github_tos_en"


def doc(*items: tuple, title: str = "Doc") -> ParsedDocument:
    """A document from ("h", level, title), ("text", str), ("list", str), ("table", Table)."""
    tracker = HeadingTracker()
    blocks: list[Block] = []
    for item in items:
        if item[0] == "h":
            number, path = tracker.open(item[1], item[2])
            blocks.append(Block("heading", item[2], list(path), number, level=item[1]))
        elif isinstance(item[1], Table):
            table = item[1]
            blocks.append(
                Block(item[0], table.to_markdown(), tracker.path, tracker.section, table=table)
            )
        else:
            blocks.append(Block(item[0], item[1], tracker.path, tracker.section))
    return ParsedDocument(title, blocks)


def order(folder: Path, prefix: str = "") -> list[str]:
    lines = (folder / "ORDER.txt").read_text(encoding="utf-8").splitlines()
    names = [x.strip() for x in lines if x.strip() and not x.startswith("#")]
    return [n for n in names if n.startswith(prefix)]


@cache
def parsed(folder: Path, name: str) -> ParsedDocument:
    return parse_document((folder / name).read_bytes(), name)
