"""Checklists in workbooks: every row an item, under the section it belongs to.

A checklist sheet is a test_case table (a status column, steps and expected results, or a check
column beside an expected-result or status column). It names the section of each row in a
section column ("Раздел", "Модуль", "Section", ...; a blank or merged cell continues the section
above), or in a title row of its own (one value across the row, usually merged). Each run of
rows of one section becomes a level-2 heading over a table of just those rows, so that a row is
found and cited with its sheet, its section and its own row number (``row_start + i``).
"""

from __future__ import annotations

import re

from knowledge.parsing.base import Block, Table

_SECTION_HEADER = re.compile(
    r"^\s*(раздел|подраздел|секци|модул|област|блок|групп|категори|функциональн|компонент|"
    r"экран|section|module|area|feature|component|group|category|screen)",
    re.I,
)
# The column holding the check itself; "Проверил" (who checked) is not one.
_CHECK_HEADER = re.compile(
    r"(^|\s)(проверк[аи]|что провер|чек|check(s|point)?\b|шаг|действи|сценари|step|action)", re.I
)
_RESULT_HEADER = re.compile(r"(ожидаем|expected|статус|status|результат|result)", re.I)
_NUMBER = re.compile(r"^[#№]?\s*\d+(?:[.,]\d+)*\.?$")


def looks_like_checklist(header: list[str]) -> bool:
    """A check column beside an expected-result or status column ("Проверка | Ожидаемый
    результат"), even before anyone has filled the statuses in."""
    check = _column(header, _CHECK_HEADER)
    return check is not None and any(
        _RESULT_HEADER.search(cell) for i, cell in enumerate(header) if i != check
    )


def checklist_blocks(block: Block) -> list[Block]:
    """The checklist table ``block`` as tables of one section each, each after a level-2
    heading naming its section; the block itself (marked) when it names no sections."""
    table = block.table
    assert table is not None and block.row_start is not None
    section_column = _column(table.header, _SECTION_HEADER)
    check_column = _column(table.header, _CHECK_HEADER, skip=section_column)
    groups: list[tuple[str, list[tuple[int, list[str]]]]] = []
    current, pending_title = "", False
    for offset, cells in enumerate(table.rows):
        number = block.row_start + offset
        title = _title_row(cells, check_column, section_column)
        if title:
            # Two title rows in a row: a section and its subsection.
            current = f"{current} — {title}" if pending_title and current else title
            pending_title = True
            continue
        pending_title = False
        if section_column is not None:
            if cells[section_column]:
                current = cells[section_column]
            else:  # a blank cell continues the section above, and says so in the row
                cells = [*cells[:section_column], current, *cells[section_column + 1 :]]
        last = groups[-1] if groups else None
        if last is None or last[0] != current or last[1][-1][0] != number - 1:
            groups.append((current, []))
        groups[-1][1].append((number, cells))
    meta = {**block.meta, "checklist": True}
    if not any(section for section, _ in groups):
        block.meta = meta
        return [block]
    blocks: list[Block] = []
    for section, rows in groups:
        if section:
            blocks.append(Block(kind="heading", text=section, level=2, row_start=rows[0][0]))
        piece = Table(header=list(table.header), rows=[cells for _, cells in rows])
        blocks.append(
            Block(
                kind=block.kind,
                text=piece.to_markdown(),
                row_start=rows[0][0],
                row_end=rows[-1][0],
                table=piece,
                meta={**meta, **({"checklist_section": section} if section else {})},
            )
        )
    return blocks


def _column(header: list[str], pattern: re.Pattern[str], skip: int | None = None) -> int | None:
    return next(
        (i for i, cell in enumerate(header) if i != skip and pattern.search(cell or "")), None
    )


def _title_row(cells: list[str], check_column: int | None, section_column: int | None) -> str:
    """The section title a row holds alone: one value merged across the row, or typed alone in
    the first or the section column (a check, or an expected result continued from the row
    above, with nothing else filled in is part of an item)."""
    filled = [(i, c) for i, c in enumerate(cells) if c]
    if not filled or len({c for _, c in filled}) != 1 or _NUMBER.match(filled[0][1]):
        return ""
    index, value = filled[0]
    if len(filled) > 1:
        return value
    if index == check_column or len(cells) < 2:
        return ""
    return value if index in (0, section_column) else ""
