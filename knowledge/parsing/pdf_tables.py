"""Tables of one PDF page: PyMuPDF finds the grid, we fill it from the page's words.

``page.find_tables()`` is good at finding where a table is and where its cells are, but its own
cell text loses spaces and splits numbers ("Totalnetsales", "82959\\n,") on the SEC filings we
ingest, and its grid often starts below the column headers, which sit above the first ruled line.
So we keep only the geometry, fill each cell from the same words as the rest of the page, recover
the header lines above the grid, and leave the clean-up of the grid to pdf_grid. What is left with
one column or no data row is not a table and goes back to plain text.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

import pymupdf

from knowledge.parsing.base import Table
from knowledge.parsing.pdf_grid import Grid, clean_grid, is_value

# A word as PyMuPDF returns it: x0, y0, x1, y1, text, block number, line number, word number.
Word = tuple[float, float, float, float, str, int, int, int]

_FOOTNOTE = re.compile(r"^\(\d\)$")  # "(1)" after a header is a note mark, not a number
AUTO_COVERAGE = 0.6  # "auto" calls the layout model when ruled tables hold fewer of the numbers
SHREDDED = 3  # this many one- or two-row grids on a page: the ruling cut a table into rows
HEADER_BAND = 90.0  # points above a grid searched for its column headers
HEADER_GAP = 18.0  # a larger vertical gap between lines ends the header band


@dataclass
class PageTable:
    """A table found on a page and the page area it covers (its text is not repeated)."""

    bbox: pymupdf.Rect
    table: Table
    caption: list[str] = field(default_factory=list)  # title lines the grid included


def looks_tabular(words: list[Word]) -> bool:
    """Whether a page has a column of right-aligned numbers, the cheap sign of a table.

    find_tables costs 0.2-1 s a page against a few ms for the text, so it only runs on pages
    where at least three numbers on different lines end at the same x (prose rarely does).
    """
    columns: dict[int, set[int]] = defaultdict(set)
    for _x0, y0, x1, y1, text, *_ in words:
        if is_value(text):
            columns[round(x1 / 3)].add(round((y0 + y1) / 6))
    return any(len(rows | columns.get(key + 1, set())) >= 3 for key, rows in columns.items())


def find_page_tables(page: pymupdf.Page, words: list[Word], *, strategy: str) -> list[PageTable]:
    """The usable tables of a page, each with the area whose text it replaces.

    ``strategy``: "lines" finds tables by their ruling only; "layout" lets PyMuPDF's layout model
    confirm and complete them (it also finds unruled tables, at about four times the cost);
    "auto" tries the ruling first and calls the layout model only when the tables found leave
    most of the page's numbers outside (ruled EDGAR filings never need it, Intel's do).
    """
    if strategy == "layout":
        return _detect(page, words, use_layout=True)[0]
    tables, shredded = _detect(page, words, use_layout=False)
    covered = _coverage(tables, words)
    if strategy != "auto" or (covered >= AUTO_COVERAGE and not shredded):
        return tables
    by_layout, _ = _detect(page, words, use_layout=True)
    # Whole tables beat row-by-row pieces even if they hold a few numbers less.
    needed = 0.8 * covered if shredded else covered + 0.01
    return by_layout if _coverage(by_layout, words) >= needed else tables


def _detect(
    page: pymupdf.Page, words: list[Word], *, use_layout: bool
) -> tuple[list[PageTable], bool]:
    """Tables found on a page, and whether the ruling shredded them into one-row pieces (some
    writers rule every row of a statement on its own)."""
    found = page.find_tables(use_layout=use_layout)
    if found is None:  # PyMuPDF swallows its own errors and returns None
        return [], False
    grids = found.tables
    shredded = sum(1 for tab in grids if tab.row_count <= 2) >= SHREDDED
    tables = []
    for tab in grids:
        # The header search above a grid stops at the grid above it.
        above = [o.bbox[3] for o in grids if o is not tab and o.bbox[3] <= tab.bbox[1] + 1]
        table = _build(tab, words, ceiling=max(above, default=0.0))
        if table is not None:
            tables.append(table)
    return tables, shredded


def _coverage(tables: list[PageTable], words: list[Word]) -> float:
    """The share of the page's numbers that lie inside ``tables``."""
    numbers = [w for w in words if is_value(w[4])]
    if not numbers:
        return 1.0
    inside = sum(1 for w in numbers if any(_centre_in(w, t.bbox) for t in tables))
    return inside / len(numbers)


def _build(tab: pymupdf.table.Table, words: list[Word], *, ceiling: float) -> PageTable | None:
    bbox = pymupdf.Rect(tab.bbox)
    columns = _column_ranges(tab)
    if len(columns) < 2:
        return None
    inside = [w for w in words if _centre_in(w, bbox)]
    grid: Grid = [
        [None if cell is None else _cell_text(pymupdf.Rect(cell), inside) for cell in row.cells]
        for row in tab.rows
    ]
    grid = [row + [None] * (len(columns) - len(row)) for row in grid]
    start, end = _header_rows(grid)
    caption = [row[0] for row in grid[:start] if row[0]]
    grid, n_header = grid[start:], end - start
    if n_header == 0 and not caption:
        band = header_band(words, bbox, columns, ceiling)
        grid = band.header + band.data + grid
        n_header = len(band.header)
        caption = band.notes
        bbox |= band.covered
    cleaned = clean_grid(grid, n_header)
    if cleaned is None:
        return None
    return PageTable(bbox=bbox, table=cleaned, caption=caption)


def _column_ranges(tab: pymupdf.table.Table) -> list[tuple[float, float]]:
    """Each grid column's x-range: from its left edge to the next column's left edge.

    Right edges are no use: a cell spanning the row ("ASSETS:") ends where the table ends.
    """
    lefts: dict[int, float] = {}
    right = tab.bbox[2]
    for row in tab.rows:
        for j, cell in enumerate(row.cells):
            if cell is not None:
                lefts[j] = min(lefts.get(j, cell[0]), cell[0])
    edges: list[float] = []
    for j in range(max(lefts, default=-1) + 1):  # a column no cell starts in: zero width
        edges.append(lefts.get(j, edges[-1] if edges else tab.bbox[0]))
    return [(x0, edges[i + 1] if i + 1 < len(edges) else right) for i, x0 in enumerate(edges)]


def _centre_in(word: Word, rect: pymupdf.Rect) -> bool:
    cx, cy = (word[0] + word[2]) / 2, (word[1] + word[3]) / 2
    return rect.x0 - 1 <= cx <= rect.x1 + 1 and rect.y0 - 1 <= cy <= rect.y1 + 1


def _cell_text(cell: pymupdf.Rect, words: list[Word]) -> str:
    hits = sorted((w for w in words if _centre_in(w, cell)), key=lambda w: (w[5], w[6], w[0]))
    return " ".join(w[4] for w in hits)


def _header_rows(grid: Grid) -> tuple[int, int]:
    """Where the column headers of a grid start and end (rows ``start:end``).

    Headers are the rows with text beyond the label column above the first row of numbers
    ("Three Months Ended", "June 25, 2022"); label-only rows above them are the table's title
    and caption, which the layout model includes in the grid; label-only rows below them
    ("Net sales:") are data. A table without numbers has its first many-celled row as header.
    """
    first_data = next(
        (i for i, row in enumerate(grid) if any(_has_value(c) for c in row[1:])), len(grid)
    )
    wide = [i for i, row in enumerate(grid[:first_data]) if any(row[1:])]
    if not wide:
        return 0, 0
    if first_data == len(grid):
        return wide[0], wide[0] + 1
    return wide[0], wide[-1] + 1


def _has_value(cell: str | None) -> bool:
    return bool(cell) and any(is_value(word) for word in cell.split())


@dataclass
class HeaderBand:
    """What the lines above a grid turned out to be."""

    header: Grid = field(default_factory=list)  # column header rows, top first
    data: Grid = field(default_factory=list)  # data rows the ruling missed, top first
    notes: list[str] = field(default_factory=list)  # "(In millions)" lines among the headers
    covered: pymupdf.Rect = field(default_factory=pymupdf.Rect)  # the area they take up


def header_band(
    words: list[Word], bbox: pymupdf.Rect, columns: list[tuple[float, float]], ceiling: float
) -> HeaderBand:
    """Column headers printed above a grid, and data rows just above it that the ruling missed.

    We walk the text lines above the grid upwards. A line with words over the value columns and
    no numbers is a column header; a line with numbers, or a label alone, seen before any header
    ("Net sales:", "Net income $ 19,442") is a data row; a line wholly in parentheses is a note
    on units ("(In millions)"), kept for the caption; a line crossing from the label column
    into the values (a title, a paragraph), a large gap, or anything above the headers that is
    not a header ends the walk.
    """
    label_right = columns[1][0]
    band = HeaderBand(covered=pymupdf.Rect(bbox))
    bottom = bbox.y0
    for row in _lines_above(words, bbox, max(ceiling, bbox.y0 - HEADER_BAND)):
        if bottom - max(r.y1 for r, _ in row) > HEADER_GAP:
            break
        values = [t for r, t in row if r.x0 >= label_right - 2]
        numbers = any(
            is_value(word) and not _FOOTNOTE.match(word) for text in values for word in text.split()
        )
        if all(t.startswith("(") and t.endswith(")") for _, t in row) and not numbers:
            band.notes.insert(0, " ".join(t for _, t in row))
        elif any(r.x0 < label_right - 2 and r.x1 > label_right + 2 for r, _ in row):
            break
        elif values and not numbers:
            band.header.insert(0, _spread(row, columns))
        elif band.header:
            break
        else:
            band.data.insert(0, _place_words(words, row, columns))
        bottom = min(r.y0 for r, _ in row)
        for r, _ in row:
            band.covered |= r
    return band


def _lines_above(
    words: list[Word], bbox: pymupdf.Rect, top: float
) -> list[list[tuple[pymupdf.Rect, str]]]:
    """Text lines above ``bbox`` within its width, grouped into visual rows, nearest first."""
    pieces: dict[tuple[int, int], list[Word]] = defaultdict(list)
    for w in words:
        if w[3] <= bbox.y0 + 1 and w[1] >= top - 1 and bbox.x0 - 2 <= w[0] <= bbox.x1:
            pieces[(w[5], w[6])].append(w)
    lines = []
    for ws in pieces.values():
        rect = pymupdf.Rect(ws[0][:4])
        for w in ws[1:]:
            rect |= w[:4]
        lines.append((rect, " ".join(w[4] for w in sorted(ws, key=lambda w: w[0]))))
    rows: list[list[tuple[pymupdf.Rect, str]]] = []
    for rect, text in sorted(lines, key=lambda item: -item[0].y1):
        if rows and same_row(rows[-1][0][0], rect):
            rows[-1].append((rect, text))
        else:
            rows.append([(rect, text)])
    return rows


def _place_words(
    words: list[Word], row: list[tuple[pymupdf.Rect, str]], columns: list[tuple[float, float]]
) -> list[str]:
    """A data line's words, each in the column under its middle ("$ 31,583" is two cells)."""
    cells = [""] * len(columns)
    for w in sorted(words, key=lambda w: w[0]):
        if any(pymupdf.Rect(w[:4]) in rect + (-1, -1, 1, 1) for rect, _ in row):
            middle = (w[0] + w[2]) / 2
            j = max((j for j, (lo, _) in enumerate(columns) if lo <= middle), default=0)
            cells[j] = f"{cells[j]} {w[4]}".strip()
    return cells


def same_row(a: pymupdf.Rect, b: pymupdf.Rect) -> bool:
    """Two pieces of text sit on one line when they share half the height of the smaller."""
    overlap = min(a.y1, b.y1) - max(a.y0, b.y0)
    return overlap >= 0.5 * min(a.height, b.height)


def _spread(row: list[tuple[pymupdf.Rect, str]], columns: list[tuple[float, float]]) -> list[str]:
    """A header line's pieces put into every column they overlap (a spanning header repeats)."""
    cells = [""] * len(columns)
    for rect, text in sorted(row, key=lambda item: item[0].x0):
        overlaps = [
            j
            for j, (lo, hi) in enumerate(columns)
            if min(hi, rect.x1) - max(lo, rect.x0) > 0.3 * min(hi - lo, rect.width)
        ]
        for j in overlaps or [min(range(len(columns)), key=lambda j: abs(columns[j][1] - rect.x1))]:
            cells[j] = f"{cells[j]} {text}".strip()
    return cells
