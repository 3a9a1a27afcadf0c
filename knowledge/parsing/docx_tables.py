"""Word tables to ``Table(header, rows)`` on the table's column grid.

Merged cells are laid out so that every row reads on its own: a vertical merge (w:vMerge) repeats
the text of the cell above in each row it covers, because a row split off by the chunker must
still say which group it belongs to. A horizontal merge (w:gridSpan, legacy w:hMerge) keeps its
text in its first column and leaves the columns it covers blank, so the text is not repeated
along the row. Tables nested in a cell are flattened into that cell's text.
"""

from __future__ import annotations

from lxml import etree

from knowledge.parsing.base import Table, clean_text
from knowledge.parsing.docx_xml import TC, TR, children, container_text, w, w_val

_OFF = ("0", "false", "off")
TR_PR, TC_PR, TBL_HEADER = w("trPr"), w("tcPr"), w("tblHeader")
V_MERGE, H_MERGE, GRID_SPAN, GRID_BEFORE = w("vMerge"), w("hMerge"), w("gridSpan"), w("gridBefore")
_MAX_COLUMNS = 64


def read_table(tbl: etree._Element) -> Table | None:
    """The table with its header row(s) apart, or None when every cell is empty.

    The header is the run of rows marked "repeat as header row" (w:tblHeader) at the top of the
    table, joined column by column when there are several; without that mark, the first row.
    Rows with no text at all are dropped: they carry nothing and would only pad the chunks.
    """
    grid = [(cells, is_header) for cells, is_header in _grid(tbl) if any(cells)]
    if not grid:
        return None
    width = max(len(cells) for cells, _ in grid)
    rows = [cells + [""] * (width - len(cells)) for cells, _ in grid]
    header_count = 0
    while header_count < len(grid) and grid[header_count][1]:
        header_count += 1
    header_count = max(header_count, 1)
    return Table(header=_join_header(rows[:header_count]), rows=rows[header_count:])


def _grid(tbl: etree._Element) -> list[tuple[list[str], bool]]:
    """Each row's cell texts on the column grid, and whether the row is a marked header row."""
    result: list[tuple[list[str], bool]] = []
    above: list[str] = []
    for tr in children(tbl, TR):
        trpr = tr.find(TR_PR)
        cells = [""] * _int_val(trpr, GRID_BEFORE, 0)
        for tc in children(tr, TC):
            tcpr = tc.find(TC_PR)
            column = len(cells)
            cells.append(_cell_text(tc, tcpr, above, column))
            cells += [""] * (_int_val(tcpr, GRID_SPAN, 1) - 1)
        is_header = trpr is not None and w_val(trpr.find(TBL_HEADER), "x") not in _OFF
        result.append((cells, is_header))
        above = cells
    return result


def _cell_text(tc: etree._Element, tcpr: etree._Element | None, above: list[str], col: int) -> str:
    if tcpr is not None:
        vmerge = tcpr.find(V_MERGE)
        if vmerge is not None and w_val(vmerge, "continue") != "restart":
            return above[col] if col < len(above) else ""
        hmerge = tcpr.find(H_MERGE)
        if hmerge is not None and w_val(hmerge, "continue") != "restart":
            return ""
    return clean_text(container_text(tc))


def _join_header(rows: list[list[str]]) -> list[str]:
    """Several header rows become one: each column's distinct texts, top first, joined by " / "."""
    if len(rows) == 1:
        return rows[0]
    header = []
    for column in zip(*rows, strict=True):
        texts = list(dict.fromkeys(text for text in column if text))
        header.append(" / ".join(texts))
    return header


def _int_val(props: etree._Element | None, tag: str, default: int) -> int:
    """A count property (span, skipped columns), never below ``default``. Capped: Word's limit is
    63 columns, and a damaged file must not make us build rows millions of cells wide."""
    value = w_val(props.find(tag) if props is not None else None)
    return (
        min(max(int(value), default), _MAX_COLUMNS)
        if value.isascii() and value.isdigit()
        else default
    )
