"""Reading Markdown pipe tables back out of chunk texts and raw Markdown files (test helpers).

Kept apart from the code under test on purpose: the tests count and compare tables with this
independent reader instead of the parser's own table code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from knowledge.parsing.base import ParsedDocument, md_cell

_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


@dataclass
class PipeTable:
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)


def cells(line: str) -> list[str]:
    """A pipe-table line's cells, stripped, without the padding empty cells at the end."""
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    found = [c.strip() for c in _UNESCAPED_PIPE.split(line)]
    while found and not found[-1]:
        found.pop()
    return found


def tables_in_chunk(text: str) -> list[PipeTable]:
    """The pipe tables in a chunk's text (as the chunker writes them: every line starts with |)."""
    lines = text.split("\n")
    tables: list[PipeTable] = []
    i = 0
    while i < len(lines) - 1:
        if lines[i].startswith("|") and _DELIMITER.match(lines[i + 1]) and "-" in lines[i + 1]:
            table = PipeTable(cells(lines[i]))
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                table.rows.append(cells(lines[i]))
                i += 1
            tables.append(table)
        else:
            i += 1
    return tables


def count_pipe_tables(markdown: str) -> list[int]:
    """Body-row counts of the GitHub-style pipe tables of a raw Markdown page, in order.

    A table is a line with a pipe followed by a delimiter line (``| --- | :-: |``) outside code
    fences; it goes on until a blank line or a line without a pipe. A row made of dashes inside
    a table (``| - | - |``) is a row, not the start of another table.
    """
    lines = markdown.replace("\r\n", "\n").split("\n")
    counts: list[int] = []
    fence = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if m := _FENCE.match(line):
            marker = m.group(1)
            if not fence:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = ""
            i += 1
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if not fence and "|" in line and "|" in nxt and "-" in nxt and _DELIMITER.match(nxt):
            rows = 0
            i += 2
            while i < len(lines) and lines[i].strip() and "|" in lines[i]:
                rows += 1
                i += 1
            counts.append(rows)
            continue
        i += 1
    return counts


def assert_tables_whole(parsed: ParsedDocument, chunks: list[dict]) -> int:
    """Every table block is in chunks as Markdown with its header; each row whole, exactly once.

    Returns the number of table blocks checked.
    """
    checked = 0
    for index, block in enumerate(parsed.blocks):
        if block.kind not in ("table", "test_case") or block.table is None:
            continue
        pieces = [c for c in chunks if c["block_start"] == index and c["block_type"] == block.kind]
        assert pieces, f"table block {index} is in no chunk"
        header = cells("| " + " | ".join(md_cell(c) for c in block.table.header) + " |")
        rows_seen: list[list[str]] = []
        for piece in pieces:
            assert piece["block_end"] == index
            tables = tables_in_chunk(piece["text"])
            assert len(tables) == 1, piece["text"][:300]
            assert tables[0].header == header  # the header row, repeated in every piece
            rows_seen += tables[0].rows
        expected = [
            cells("| " + " | ".join(md_cell(c) for c in row) + " |") for row in block.table.rows
        ]
        assert rows_seen == expected  # no row lost, cut, repeated or reordered
        checked += 1
    return checked
