"""Excel workbooks (.xlsx): one section per sheet, each block of filled rows a table.

A sheet becomes a heading (level 1) followed by its tables. The header row is the first row
with two or more filled cells; the rows under it, up to the next empty row, are one table
block, and each later run of rows separated by empty rows is a block of its own. In a table
block ``rows[i]`` is spreadsheet row ``row_start + i``, so a chunk of rows can still cite its
row numbers. Checklists (a column of Pass/Fail values, or check and expected-result columns)
and test-case sheets (step and expected-result columns) become "test_case" blocks, split by the
checklist's sections into level-2 headings (``xlsx_checklists``).
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING
from xml.etree import ElementTree

import openpyxl
from django.conf import settings
from openpyxl.utils.cell import range_boundaries
from openpyxl.utils.exceptions import InvalidFileException

from knowledge.parsing.base import (
    Block,
    HeadingTracker,
    ParsedDocument,
    ParseError,
    Table,
    check_time_budget,
    detect_language,
    looks_like_test_case,
)
from knowledge.parsing.safezip import read_package
from knowledge.parsing.text import NO_TEXT, title_from_filename
from knowledge.parsing.xlsx_checklists import checklist_blocks, looks_like_checklist

if TYPE_CHECKING:
    from openpyxl.worksheet._read_only import ReadOnlyWorksheet

NOT_A_WORKBOOK = "The file is not a valid Excel workbook (it may be truncated or damaged)"
PASSWORD_PROTECTED = "The workbook is password-protected"
OLD_FORMAT = "The file is an Excel 97-2003 workbook (.xls); save it as .xlsx and upload it again"
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# An encrypted .xlsx is an OLE container holding the real package in this stream.
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")
# What a damaged zip or XML part raises somewhere between zipfile, zlib, openpyxl and the parser.
_DAMAGED = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    KeyError,
    ValueError,
    TypeError,
    OSError,
    SyntaxError,  # ElementTree.ParseError and lxml's XMLSyntaxError
    InvalidFileException,
)
# The sheet's tags that matter to the scan (<c>, <f>, <v>, <mergeCell>, any namespace prefix),
# one at a time. Every quantifier stops at a byte the next part cannot start with, and a name
# or an attribute is only tried where one can begin, so each byte is looked at a bounded number
# of times: the whole scan is linear. (One pattern for a whole formula cell backtracked
# quadratically on a long attribute full of r='B2': 43 s for a file of 5.6 KB, in one C call
# that neither the time budget nor Celery's soft limit can interrupt.)
_TAG = re.compile(rb"<(/?)(?:[\w.-]++:)?+(c|f|v|mergeCell)(?=[\s/>])([^<>]*+)")
_ATTRIBUTE = re.compile(rb"""(?<![\w:.-])([\w:.-]++)\s*+=\s*+(?:"([^"]*+)"|'([^']*+)')""")
_CELL_REF = re.compile(rb"[A-Z]+[0-9]+")
_STATUS = re.compile(
    r"^(pass(ed)?|fail(ed)?|ok|blocked|skip(ped)?|not run|"
    r"(не )?пройден[оа]?|провален[оа]?|успешно|ошибка|заблокирован[оа]?|пропущен[оа]?)$",
    re.I,
)


@dataclass
class _Sheet:
    """The filled rows of one sheet (row number -> cell texts); bold rows that follow a gap."""

    name: str
    hidden: bool
    rows: dict[int, list[str]] = field(default_factory=dict)
    bold_rows: set[int] = field(default_factory=set)


class XlsxParser:
    """Parser for .xlsx workbooks (formulas read as the values Excel last saved)."""

    def parse(self, data: bytes, *, filename: str) -> ParsedDocument:
        """Parse every sheet of the workbook, hidden ones included (their blocks say so)."""
        if data.startswith(_OLE_MAGIC):
            raise ParseError(PASSWORD_PROTECTED if _ENCRYPTED_STREAM in data else OLD_FORMAT)
        warnings: list[str] = []
        # openpyxl and the sheet scan read parts whole: they get them read within the budget.
        data = read_package(
            data,
            part_limit=settings.ZIP_PART_MB * 2**20,
            total_limit=settings.ZIP_TOTAL_MB * 2**20,
            noun="Excel workbook",
        )
        try:
            workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                paths = _sheet_paths(archive)
                sheets = [_read_sheet(ws, archive, paths, warnings) for ws in workbook.worksheets]
            properties = workbook.properties
            workbook.close()
        except _DAMAGED as exc:
            raise ParseError(NOT_A_WORKBOOK) from exc
        blocks = _blocks(sheets)
        if not any(b.kind != "heading" for b in blocks):
            raise ParseError(NO_TEXT)
        metadata: dict[str, object] = {"filename": filename, "sheets": [s.name for s in sheets]}
        if hidden := [s.name for s in sheets if s.hidden]:
            metadata["hidden_sheets"] = hidden
        if properties.creator:
            metadata["author"] = properties.creator
        for key in ("created", "modified"):
            if value := getattr(properties, key):
                metadata[key] = value.isoformat()
        return ParsedDocument(
            title=(properties.title or "").strip() or title_from_filename(filename),
            blocks=blocks,
            language=detect_language("\n".join(b.text for b in blocks)),
            metadata=metadata,
            warnings=warnings,
        )


def _sheet_paths(archive: zipfile.ZipFile) -> dict[str, str]:
    """Sheet name -> path of its XML part, from the workbook and its relationships."""
    rels = ElementTree.fromstring(archive.read("xl/_rels/workbook.xml.rels"))
    targets = {el.get("Id"): el.get("Target", "") for el in rels}
    paths = {}
    for el in ElementTree.fromstring(archive.read("xl/workbook.xml")).iter():
        if el.tag.rpartition("}")[2] != "sheet":
            continue
        rel_id = next((v for k, v in el.attrib.items() if k.rpartition("}")[2] == "id"), None)
        target = targets.get(rel_id, "")
        if target:
            joined = target.lstrip("/") if target.startswith("/") else f"xl/{target}"
            paths[el.get("name", "")] = posixpath.normpath(joined)
    return paths


def _scan_sheet_xml(archive: zipfile.ZipFile, path: str) -> tuple[list[str], list[str]]:
    """Merged ranges, and formula cells without a saved value, from the sheet's XML.

    Read-only openpyxl gives neither: it skips merges, and a formula with no saved value
    reads as an empty cell. A linear scan of the bytes' tags rather than an XML parser, because
    a second parse of a long sheet would double its reading time; the schema fixes what it
    relies on (a formula cell holds an <f>, its saved value a non-empty <v>).
    """
    xml = archive.read(path)
    merges: list[str] = []
    missing: list[str] = []
    cell = b""  # the reference of the <c> being read, "" outside one
    formula = value = False
    for number, tag in enumerate(_TAG.finditer(xml)):
        if number % 10000 == 0:
            check_time_budget()
        closing, name, rest = tag.groups()
        single = rest.endswith(b"/")
        if name == b"mergeCell" and not closing:
            if ref := _attribute(rest, b"ref"):
                merges.append(ref.decode(errors="replace"))
        elif name == b"c" and not closing:
            ref = _attribute(rest, b"r")
            cell = ref if not single and _CELL_REF.fullmatch(ref) else b""
            formula = value = False
        elif name == b"c":
            if cell and formula and not value:
                missing.append(cell.decode())
            cell = b""
        elif cell and name == b"f" and not closing:
            formula = True
        elif cell and name == b"v" and not closing and not single:
            end = tag.end()  # the ">" of <v>: its text follows, up to the next "<"
            value = value or xml[end + 1 : end + 2] not in (b"<", b"")
    return merges, missing


def _attribute(text: bytes, name: bytes) -> bytes:
    """An attribute's value in a tag's text (the part after its name), or b""."""
    for found in _ATTRIBUTE.finditer(text):
        if found.group(1).rpartition(b":")[2] == name:
            return found.group(2) if found.group(2) is not None else found.group(3)
    return b""


def _read_sheet(
    ws: ReadOnlyWorksheet, archive: zipfile.ZipFile, paths: dict[str, str], warnings: list[str]
) -> _Sheet:
    sheet = _Sheet(name=ws.title, hidden=ws.sheet_state != "visible")
    # Some writers store a wrong sheet size, which read-only mode would trust and cut rows.
    ws.reset_dimensions()
    previous = 0
    for number, row in enumerate(ws.iter_rows(min_row=1), start=1):
        if number % 1000 == 0:
            check_time_budget()
        cells = [format_value(c.value, getattr(c, "number_format", "General")) for c in row]
        if not any(cells):
            continue
        sheet.rows[number] = cells
        # Boldness only matters for the first row after empty rows (a possible new header).
        if number != previous + 1:
            filled = [c for c, text in zip(row, cells, strict=True) if text]
            if all(c.font is not None and c.font.b for c in filled):
                sheet.bold_rows.add(number)
        previous = number
    merges, missing = _scan_sheet_xml(archive, paths[ws.title]) if ws.title in paths else ([], [])
    for ref in merges:
        _fill_merge(sheet.rows, ref)
    sheet.rows = dict(sorted(sheet.rows.items()))  # a merge may have added rows at the end
    if missing:
        cells = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        warnings.append(
            f"Sheet “{ws.title}”: {len(missing)} formula cell(s) have no saved value ({cells}) "
            "and read as empty; open and save the workbook in Excel to keep their results."
        )
    return sheet


def _fill_merge(rows: dict[int, list[str]], ref: str) -> None:
    """Repeat a merged range's value in every cell of the range."""
    min_col, min_row, max_col, max_row = range_boundaries(ref)
    top = rows.get(min_row, [])
    value = top[min_col - 1] if len(top) >= min_col else ""
    if not value:
        return
    for number in range(min_row, max_row + 1):
        cells = rows.setdefault(number, [])
        cells += [""] * (max_col - len(cells))
        cells[min_col - 1 : max_col] = [value] * (max_col - min_col + 1)


def format_value(value: object, number_format: str = "General") -> str:
    """A cell value as people read it: ISO dates, 3 not 3.0, 12.5% for percent formats."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, datetime):
        if value.time() == time(0):
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="seconds" if value.second else "minutes")
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return str(value)
    if isinstance(value, int | float):
        if "%" in (number_format or ""):
            return _number(value * 100) + "%"
        return _number(value)
    return str(value).strip()


def _number(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    # 15 significant digits is Excel's own precision: 0.1+0.2 shows as 0.3.
    return format(value, ".15g") if isinstance(value, float) else str(value)


def _blocks(sheets: list[_Sheet]) -> list[Block]:
    tracker = HeadingTracker()
    blocks: list[Block] = []
    for sheet in sheets:
        if not sheet.rows:
            continue
        section, path = tracker.open(1, sheet.name)
        sheet_blocks = [Block(kind="heading", text=sheet.name, level=1), *_sheet_blocks(sheet)]
        for block in sheet_blocks:
            if block.kind == "heading" and block.level == 2:  # a checklist's section
                section, path = tracker.open(2, block.text)
            block.sheet, block.heading_path, block.section = sheet.name, list(path), section
            if sheet.hidden:
                block.meta["hidden"] = True
        blocks += sheet_blocks
    return blocks


def _regions(numbers: list[int]) -> list[list[int]]:
    """Row numbers split into runs of consecutive rows."""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return runs


def _sheet_blocks(sheet: _Sheet) -> list[Block]:
    """Text blocks for rows above the header, then one table block per run of rows."""
    numbers = list(sheet.rows)
    # Distinct values: a title merged across the columns fills many cells with one value.
    header_row = next((n for n in numbers if len(_distinct(sheet.rows[n])) >= 2), None)
    above = [n for n in numbers if header_row is None or n < header_row]
    blocks = [_text_block(sheet, run) for run in _regions(above)]
    if header_row is None:
        return blocks
    caption = " ".join([sheet.name, *(b.text for b in blocks)])
    header = sheet.rows[header_row]
    below = [n for n in numbers if n > header_row]
    if not below:
        return [*blocks, _text_block(sheet, [header_row])]
    for run in _regions(below):
        first = sheet.rows[run[0]]
        # A later run may start with its own header: the same one repeated, or a bold row.
        if run[0] != header_row + 1 and (first == header or run[0] in sheet.bold_rows):
            header_row, header = run[0], first
            run = run[1:]
            if not run:
                continue
        block = _table_block(sheet, header_row, header, run, caption)
        blocks += checklist_blocks(block) if block.kind == "test_case" else [block]
    return blocks


def _text_block(sheet: _Sheet, run: list[int]) -> Block:
    lines = [" | ".join(_distinct(sheet.rows[n])) for n in run]
    return Block(kind="text", text="\n".join(lines), row_start=run[0], row_end=run[-1])


def _distinct(cells: list[str]) -> list[str]:
    """Filled cells, a value repeated by a merge counted once."""
    return [c for i, c in enumerate(cells) if c and (i == 0 or c != cells[i - 1])]


def _table_block(
    sheet: _Sheet, header_row: int, header: list[str], run: list[int], caption: str
) -> Block:
    width = max(len(header), *(len(sheet.rows[n]) for n in run))
    grid = [_pad(header, width)] + [_pad(sheet.rows[n], width) for n in run]
    # Columns empty in every row (a gap, or a table that starts at column C) carry nothing.
    keep = [i for i in range(width) if any(row[i] for row in grid)]
    grid = [[row[i] for i in keep] for row in grid]
    table = Table(header=grid[0], rows=grid[1:])
    is_test = (
        looks_like_test_case(table.header, caption)
        or _has_status_column(table)
        or looks_like_checklist(table.header)
    )
    return Block(
        kind="test_case" if is_test else "table",
        text=table.to_markdown(),
        row_start=run[0],
        row_end=run[-1],
        table=table,
        meta={"header_row": header_row, **({"function": sheet.name} if is_test else {})},
    )


def _pad(cells: list[str], width: int) -> list[str]:
    return cells + [""] * (width - len(cells))


def _has_status_column(table: Table) -> bool:
    """A column whose filled cells are mostly Pass/Fail-like values: a checklist."""
    for i in range(len(table.header)):
        values = [row[i] for row in table.rows if row[i]]
        if values and sum(1 for v in values if _STATUS.match(v)) >= 0.6 * len(values):
            return True
    return False
