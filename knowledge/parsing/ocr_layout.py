"""A recognised page (Tesseract's lines and words) as the PDF parser's page lines and tables.

Boxes come in the image's pixels and leave in PDF points, so that a recognised page goes
through the same steps as a page with a text layer (running headers, headings by type size,
paragraphs, reading order). Tesseract knows paragraphs but not tables, and on a scanned table
it often reads each column as a text area of its own. So here:

- the lines of different text areas that sit on one visual row are joined into that row when
  one of them is short (a table's column; two columns of prose both run long), left to right;
- a row is split into cells at wide gaps; a row whose cells end with a figure is tabular, and
  keeps its own line (never joined into a paragraph with the rows around it);
- a line whose strokes are much thicker than the page's body text is bold (a heading set bold at
  body size, found by ``pdf_text`` as on a text layer);
- two or more tabular rows in a run (label rows such as "Operating expenses:" between them) are
  a table: its columns are where the figures stand, its header the lines just above it over
  those columns (``pdf_tables.header_band``, as for a text layer), and ``pdf_grid`` cleans it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pymupdf

from knowledge.parsing.ocr import OcrLine, OcrPage
from knowledge.parsing.pdf_grid import Grid, clean_grid, is_value
from knowledge.parsing.pdf_tables import PageTable, Word, header_band, same_row
from knowledge.parsing.pdf_text import Line, body_size

SHORT_PIECE = 3  # words: a piece this short is a table column's, not a column of prose
CELL_GAP = 1.0  # a gap wider than this many row heights starts a new cell
BOLD_STROKE = 1.3  # strokes this many times the page's usual width are bold type
BODY_BAND = 0.15  # recognised type sizes this close to the body size are the body size
TABLE_GAP = 3.0  # row heights of empty space that end a table
_CURRENCY = {"$", "€", "£", "₽"}
_YEARISH = re.compile(r"^\d{2,4}$")


@dataclass
class _Cell:
    rect: pymupdf.Rect
    text: str

    @property
    def is_value(self) -> bool:
        words = self.text.split()
        return bool(words) and all(is_value(w) or w in _CURRENCY or w == "%" for w in words)


@dataclass
class _Row:
    words: list[tuple[pymupdf.Rect, str]]
    size: float  # type size in points
    paragraph: int
    blocks: set[int] = field(default_factory=set)
    stroke: float = 0.0  # mean stroke width in pixels
    bold: bool = False
    cells: list[_Cell] = field(default_factory=list)

    @property
    def rect(self) -> pymupdf.Rect:
        rect = pymupdf.Rect(self.words[0][0])
        for box, _ in self.words[1:]:
            rect |= box
        return rect

    @property
    def text(self) -> str:
        return " ".join(text for _, text in self.words)

    @property
    def tabular(self) -> bool:
        """Cells ending with a figure: "Net sales | 82,959 | 81,434"; not a row of years
        without a label ("2022 | 2021", a column header, "2021" read as "021" included)."""
        if len(self.cells) < 2 or not self.cells[-1].is_value:
            return False
        return not all(_YEARISH.match(c.text) for c in self.cells)

    @property
    def label_only(self) -> bool:
        """A one-cell row of a few words without figures: "Operating expenses:"."""
        return len(self.cells) == 1 and not self.cells[0].is_value and len(self.words) <= 12


def page_layout(page: OcrPage) -> tuple[list[Line], list[PageTable]]:
    """The page's text lines (outside tables) and tables, in PDF points."""
    rows = _rows(page, 72.0 / page.dpi)
    _mark_bold(rows)
    for row in rows:
        row.cells = _cells(row)
    tables: list[PageTable] = []
    covered: set[int] = set()
    words = _words(rows)
    for first, last in _table_runs(rows):
        # The header search above a table stops at the table above it.
        ceiling = max((t.bbox.y1 for t in tables), default=0.0)
        table = _table(rows, first, last, words, ceiling)
        if table is not None:
            tables.append(table)
            covered.update(range(first, last + 1))
    lines = []
    for index, row in enumerate(rows):
        if index in covered or any(_centre(row.rect) in t.bbox for t in tables):
            continue
        lines.append(_line(row, index))
    _mark_alone(lines)
    return lines, tables


def snap_sizes(pages: list[list[Line]]) -> None:
    """Tesseract's type-size estimate wanders by a tenth from line to line (7 pt, 7.5 pt): sizes
    within 15 % of the recognised pages' body size become the body size, so that only type
    clearly larger is read as larger (and a bold line at body size is a heading, as on a text
    layer)."""
    body = body_size(pages)
    for lines in pages:
        for line in lines:
            if abs(line.size - body) <= BODY_BAND * body:
                line.size = body


def _rows(page: OcrPage, scale: float) -> list[_Row]:
    """Tesseract's lines in points, a table's columns joined into their visual rows."""
    rows: list[_Row] = []
    for line in page.lines:
        row = _row(line, scale)
        mate = next((r for r in rows if _row_mates(r, row)), None)
        if mate is None:
            rows.append(row)
            continue
        mate.words = sorted(mate.words + row.words, key=lambda w: w[0].x0)
        mate.blocks |= row.blocks
        mate.size = max(mate.size, row.size)
    return rows


def _row(line: OcrLine, scale: float) -> _Row:
    words = [(pymupdf.Rect(*(v * scale for v in w.box)), w.text) for w in line.words]
    # Type size to the half point: Tesseract's estimate wanders a little from line to line.
    size = round(line.size * scale * 2) / 2 if line.size else round(_height(words) * 2) / 2
    return _Row(
        words=words, size=size, paragraph=line.paragraph, blocks={line.block}, stroke=line.stroke
    )


def _mark_bold(rows: list[_Row]) -> None:
    """Rows whose strokes are ``BOLD_STROKE`` times the page's usual (the median weighted by
    the characters of each row) are bold."""
    weighted = sorted((row.stroke, len(row.text)) for row in rows if row.stroke)
    total = sum(n for _, n in weighted)
    if not total:
        return
    seen, usual = 0, 0.0
    for stroke, n in weighted:
        seen += n
        if seen >= total / 2:
            usual = stroke
            break
    for row in rows:
        row.bold = usual > 0 and row.stroke >= BOLD_STROKE * usual


def _height(words: list[tuple[pymupdf.Rect, str]]) -> float:
    return max((box.height for box, _ in words), default=0.0)


def _row_mates(row: _Row, other: _Row) -> bool:
    """Pieces of one visual row from different text areas, one of them a table's short cell."""
    if row.blocks & other.blocks:
        return False
    a, b = row.rect, other.rect
    if not same_row(a, b) or min(a.x1, b.x1) > max(a.x0, b.x0):
        return False
    return min(len(row.words), len(other.words)) <= SHORT_PIECE


def _cells(row: _Row) -> list[_Cell]:
    """The row's words grouped at wide gaps (wider than the row is high)."""
    height = max(1.0, _height(row.words))
    cells: list[_Cell] = []
    for box, text in row.words:
        if cells and box.x0 - cells[-1].rect.x1 <= CELL_GAP * height:
            cells[-1].rect |= box
            cells[-1].text += " " + text
        else:
            cells.append(_Cell(pymupdf.Rect(box), text))
    return cells


def _table_runs(rows: list[_Row]) -> list[tuple[int, int]]:
    """(first, last) row indexes of each run of two or more tabular rows, label rows inside
    the run included, ended by any other row or a wide vertical gap."""
    runs: list[tuple[int, int]] = []
    first = last = None
    tabular = 0
    for index, row in enumerate(rows):
        gap_ok = last is not None and _gap(rows[last], row) <= TABLE_GAP * max(1.0, row.size)
        if row.tabular or (row.label_only and first is not None and gap_ok):
            if first is None or not gap_ok:
                if first is not None and tabular >= 2:
                    runs.append((first, _last_tabular(rows, first, last)))
                first, tabular = index, 0
            last = index
            tabular += row.tabular
            continue
        if first is not None and tabular >= 2:
            runs.append((first, _last_tabular(rows, first, last)))
        first = last = None
        tabular = 0
    if first is not None and tabular >= 2:
        runs.append((first, _last_tabular(rows, first, last)))
    return runs


def _last_tabular(rows: list[_Row], first: int, last: int) -> int:
    while last > first and not rows[last].tabular:
        last -= 1
    return last


def _gap(above: _Row, below: _Row) -> float:
    return below.rect.y0 - above.rect.y1


def _table(
    rows: list[_Row], first: int, last: int, words: list[Word], ceiling: float
) -> PageTable | None:
    run = rows[first : last + 1]
    columns = _columns(run)
    if len(columns) < 2:
        return None
    bbox = pymupdf.Rect(run[0].rect)
    for row in run[1:]:
        bbox |= row.rect
    grid: Grid = []
    for index, row in enumerate(run):
        cells = _place(row, columns)
        follower = run[index + 1] if index + 1 < len(run) else None
        if row.label_only and follower is not None and _continues(follower):
            # A label wrapped onto the next line: "Total change in ... debt" / "securities".
            follower.cells[0].text = f"{row.text} {follower.cells[0].text}"
            continue
        grid.append(cells)
    above = [w for w in words if w[5] < first]  # the header band looks above the table only
    band = header_band(above, bbox, columns, ceiling)
    cleaned = clean_grid(band.header + band.data + grid, len(band.header))
    if cleaned is None:
        return None
    return PageTable(bbox=bbox | band.covered, table=cleaned, caption=band.notes)


def _continues(row: _Row) -> bool:
    """A tabular row whose label starts in lower case continues the label above it."""
    first = row.cells[0]
    return row.tabular and not first.is_value and first.text[:1].islower()


def _columns(run: list[_Row]) -> list[tuple[float, float]]:
    """Column ranges (left edge to the next column's left edge): the label column, then one
    per group of overlapping figure cells."""
    spans = sorted(
        (c.rect.x0, c.rect.x1) for row in run if row.tabular for c in row.cells[1:] if c.is_value
    )
    groups: list[list[float]] = []
    for x0, x1 in spans:
        if groups and x0 <= groups[-1][1] + 1:
            groups[-1][1] = max(groups[-1][1], x1)
        else:
            groups.append([x0, x1])
    left = min(row.rect.x0 for row in run)
    right = max(row.rect.x1 for row in run)
    edges = [left] + [g[0] for g in groups]
    return [(x0, edges[i + 1] if i + 1 < len(edges) else right) for i, x0 in enumerate(edges)]


def _place(row: _Row, columns: list[tuple[float, float]]) -> list[str | None]:
    """The row's cells in the columns under their middles; the first cell, unless a figure,
    is the row's label."""
    cells = [""] * len(columns)
    for index, cell in enumerate(row.cells):
        if index == 0 and not cell.is_value:
            column = 0
        else:
            middle = (cell.rect.x0 + cell.rect.x1) / 2
            column = max((j for j, (lo, _) in enumerate(columns) if lo <= middle), default=0)
        cells[column] = f"{cells[column]} {cell.text}".strip()
    return list(cells)


def _words(rows: list[_Row]) -> list[Word]:
    """Every row's cells as words for ``header_band``, which groups pieces by (block, line):
    here (row, cell), so a header's pieces over different columns stay apart."""
    out: list[Word] = []
    for r, row in enumerate(rows):
        for c, cell in enumerate(row.cells):
            x0, y0, x1, y1 = cell.rect
            out.append((x0, y0, x1, y1, cell.text, r, c, 0))
    return out


def _line(row: _Row, index: int) -> Line:
    # A tabular row outside a table keeps its own line: its own paragraph number.
    block = -(index + 1) if row.tabular or len(row.blocks) > 1 else row.paragraph
    return Line(row.rect, row.text, row.size, row.bold, block, False)


def _mark_alone(lines: list[Line]) -> None:
    counts: dict[int, int] = {}
    for line in lines:
        counts[line.block] = counts.get(line.block, 0) + 1
    for line in lines:
        line.alone = counts[line.block] == 1


def _centre(rect: pymupdf.Rect) -> pymupdf.Point:
    return pymupdf.Point((rect.x0 + rect.x1) / 2, (rect.y0 + rect.y1) / 2)
