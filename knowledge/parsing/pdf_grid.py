"""Cleaning a table grid read off a PDF page into a Table with one header row.

Grids ruled for print split a logical column into several: a "$" column, the number, padding
between periods; a header spanning several columns fills each of them. Here "$" and "%" cells
join their numbers, columns that hold no data go (their header text to the neighbour the
numbers sit under), and neighbours that never both hold a value under one header merge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowledge.parsing.base import Table

Grid = list[list[str | None]]  # None marks a slot covered by a merged cell

# "1,234", "(10)", "$5.2", "12 %", "—" (nil); not "25," as in "June 25,".
_NUMBER = re.compile(r"^\(?[$€£]?\(?[-–—]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?\)?%?\)?$|^[-–—]$")
_YEAR = re.compile(r"^(19|20)\d\d$")
_CURRENCY = {"$", "€", "£"}
_CURRENCY_GAP = re.compile(r"^([$€£])\s+(?=[\d(])")
_TRAILERS = {"%", ")", "%)"}


def is_value(text: str) -> bool:
    """A number as financial tables print it ("1,234", "(10)", "$5.2", "12%", "—"), not a year."""
    text = text.strip()
    return bool(_NUMBER.match(text)) and not _YEAR.match(text)


def clean_grid(grid: Grid, n_header: int) -> Table | None:
    """A Table from a raw grid whose first ``n_header`` rows are column headers, or None.

    None means the grid is not worth a table: fewer than two columns, no row of data, or a
    single row under no header.
    """
    width = max((len(row) for row in grid), default=0)
    grid = [row + [None] * (width - len(row)) for row in grid]
    heads = [_fill_right([c if c is None else _tidy(c) for c in row]) for row in grid[:n_header]]
    body = [_join_symbols([_tidy(c) for c in row]) for row in grid[n_header:]]
    columns = [_Column([h[j] for h in heads], [r[j] for r in body]) for j in range(width)]
    columns = _merge_columns(columns)
    rows = [list(r) for r in zip(*(c.body for c in columns), strict=True)] if columns else []
    rows = [row for row in rows if any(row)]
    header = [" ".join(dict.fromkeys(filter(None, c.head))) for c in columns]
    if len(columns) < 2 or not any(sum(1 for c in row if c) >= 2 for row in rows):
        return None
    if len(rows) < 2 and not any(header):  # a boxed line of text ("Note 1 | Basis of ...")
        return None
    return Table(header=header, rows=rows)


@dataclass
class _Column:
    head: list[str]  # one text per header row
    body: list[str]


def _complementary(left: _Column, right: _Column) -> bool:
    """One logical column split in two: never both filled in a row, no different headers."""
    heads = zip(left.head, right.head, strict=True)
    if any(a and b and a != b for a, b in heads):
        return False
    return not any(a and b for a, b in zip(left.body, right.body, strict=True))


def _merge_heads(left: list[str], right: list[str]) -> list[str]:
    """Header cells of two merged columns, row by row; a header spanning both stays single."""
    return [
        a if b in ("", a) else b if not a else f"{a} {b}" for a, b in zip(left, right, strict=True)
    ]


def _tidy(cell: str | None) -> str:
    """Whitespace collapsed (non-breaking spaces too) and "$ 19,192" written "$19,192"."""
    return _CURRENCY_GAP.sub(r"\1", " ".join((cell or "").split()))


def _fill_right(row: list[str | None]) -> list[str]:
    """A header cell spanning several columns (None slots) names each of them."""
    out, last = [], ""
    for cell in row:
        last = last if cell is None else cell
        out.append(last)
    return out


def _join_symbols(row: list[str]) -> list[str]:
    """Put "$" cells before the next number and "%" or ")" cells after the previous one."""
    row = list(row)
    for j, cell in enumerate(row):
        if cell in _CURRENCY:
            nxt = next((k for k in range(j + 1, len(row)) if row[k]), None)
            if nxt is not None and is_value(row[nxt]):
                row[nxt], row[j] = cell + row[nxt], ""
        elif cell in _TRAILERS:
            prev = next((k for k in range(j - 1, 0, -1) if row[k]), None)
            if prev is not None:
                row[prev], row[j] = row[prev] + cell, ""
    return row


def _merge_columns(columns: list[_Column]) -> list[_Column]:
    """Drop columns with no data and merge neighbours that never both hold a value in a row.

    Grids ruled for print split one logical column into several ("$", number, padding); a pair
    of columns that are never filled in the same row, under the same header, is one column. A
    dropped column's header text goes to its right-hand neighbour (numbers are right-aligned
    under their header).
    """
    columns = list(columns)
    j = 0
    while j < len(columns):
        column = columns[j]
        left = columns[j - 1] if j > 0 else None
        if not any(column.body):
            # Header text that only repeats the left neighbour's is a spanning header's
            # copy (see _fill_right); anything else moves to the right-hand neighbour.
            own = [h if not left or h != left.head[i] else "" for i, h in enumerate(column.head)]
            if j + 1 < len(columns):
                columns[j + 1].head = _merge_heads(own, columns[j + 1].head)
            elif left:
                left.head = _merge_heads(left.head, own)
            del columns[j]
            continue
        if left and _complementary(left, column):
            left.head = _merge_heads(left.head, column.head)
            left.body = [a or b for a, b in zip(left.body, column.body, strict=True)]
            del columns[j]
            continue
        j += 1
    return columns
