"""Word .docx -> ParsedDocument.

The body XML is walked in reading order (paragraphs, tables, content controls); headings come
from Word's outline levels and heading styles (docx_styles), never from numbers typed into the
text, and section numbers are counted from that heading tree. Text boxes (stamps, side notes)
become blocks of their own right after the paragraph or table that anchors them.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import Path
from typing import Any

import docx
from django.conf import settings
from docx.document import Document as WordDocument
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.coreprops import CoreProperties
from docx.opc.exceptions import OpcError
from lxml import etree

from knowledge.parsing.base import (
    Block,
    HeadingTracker,
    ParsedDocument,
    ParseError,
    check_time_budget,
    clean_text,
    detect_language,
    looks_like_test_case,
    strip_typed_number,
)
from knowledge.parsing.docx_styles import StyleSheet
from knowledge.parsing.docx_tables import read_table
from knowledge.parsing.docx_testcases import group_test_case_sections, table_meta
from knowledge.parsing.docx_xml import P, block_items, paragraph_text, textboxes
from knowledge.parsing.safezip import read_package

NOT_VALID = "The file is not a valid Word document (it may be truncated or damaged)"
NOT_DOCX = "The file is a ZIP archive but not a Word document (.docx)"
ENCRYPTED = "The Word document is password-protected; save a copy without a password and upload it"
OLD_DOC = "The file is an old-format Word document (.doc); save it as .docx and upload it again"
NO_TEXT = "The document contains no text"

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# An encrypted .docx is an OLE compound file holding an "EncryptedPackage" stream; OLE stores
# stream names in UTF-16LE. A plain .doc is OLE too, but has no such stream.
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")
# Everything python-docx, zipfile and lxml raise on damaged bytes. Caught only around opening
# the package, so a bug in our own walk still surfaces as itself.
_UNREADABLE = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    KeyError,
    ValueError,
    NotImplementedError,  # a zip compression method zipfile does not support
    RuntimeError,  # a zip with password-protected members
    OpcError,
    etree.LxmlError,
)
_CAPTION_MAX = 200  # a paragraph longer than this right above a table is prose, not its caption


class DocxParser:
    """Parses Word 2007+ documents (.docx); see the module docstring for what becomes a block."""

    def parse(self, data: bytes, *, filename: str) -> ParsedDocument:
        """Blocks of the document in reading order; ParseError for unreadable or empty files."""
        document = _open(data)
        builder = _BlockBuilder(StyleSheet(_styles_element(document)))
        builder.read(document.element.body)
        blocks = group_test_case_sections(builder.finish())
        if not any(block.text for block in blocks):
            raise ParseError(NO_TEXT)
        core = _core_properties(document)
        title = clean_text(_core_value(core, "title") or "")
        return ParsedDocument(
            title=title or builder.title or Path(filename).stem or filename,
            blocks=blocks,
            language=detect_language("\n".join(block.text for block in blocks)),
            metadata=_metadata(core),
        )


def _open(data: bytes) -> WordDocument:
    """The python-docx Document, or ParseError saying in plain words why there is none."""
    if data.startswith(_OLE_MAGIC):
        raise ParseError(ENCRYPTED if _ENCRYPTED_STREAM in data else OLD_DOC)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ParseError(NOT_VALID) from exc
    names = {member.filename for member in members}
    if "[Content_Types].xml" not in names or not any(n.startswith("word/") for n in names):
        raise ParseError(NOT_DOCX)
    # python-docx unpacks every part whole: it gets the parts read within the byte budget.
    package = read_package(
        data,
        part_limit=settings.ZIP_PART_MB * 2**20,
        total_limit=settings.ZIP_TOTAL_MB * 2**20,
        noun="Word document",
    )
    try:
        document = docx.Document(io.BytesIO(package))
        body = document.element.body
    except _UNREADABLE as exc:
        raise ParseError(NOT_VALID) from exc
    if body is None:
        raise ParseError(NOT_VALID)
    return document


def _styles_element(document: WordDocument) -> etree._Element | None:
    """styles.xml as XML, without python-docx's habit of adding a default part when absent."""
    try:
        part = document.part.part_related_by(RT.STYLES)
    except KeyError:
        return None
    return part.element


def _core_properties(document: WordDocument) -> CoreProperties | None:
    """Core properties, or None: python-docx would invent defaults ("python-docx", now) for a
    package that has none, and those must not show up as the author and dates."""
    package = document.part.package
    if not any(rel.reltype == RT.CORE_PROPERTIES for rel in package.rels.values()):
        return None
    return package.core_properties


def _core_value(core: CoreProperties | None, key: str) -> Any:
    """One core property, None when absent or damaged: python-docx raises TypeError on an empty
    date, and a damaged property is no reason to refuse a readable document."""
    try:
        return getattr(core, key) if core is not None else None
    except (TypeError, ValueError):
        return None


def _metadata(core: CoreProperties | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    for key in ("created", "modified"):
        value = _core_value(core, key)
        if value is not None:
            metadata[key] = value.isoformat()
    for key in ("author", "last_modified_by"):
        value = clean_text(_core_value(core, key) or "")
        if value:
            metadata[key] = value
    revision = _core_value(core, "revision")
    if revision:
        metadata["revision"] = revision
    return metadata


class _BlockBuilder:
    """Turns body elements into blocks, keeping the heading tree and the list being built."""

    def __init__(self, styles: StyleSheet) -> None:
        self.styles = styles
        self.tracker = HeadingTracker()
        self.blocks: list[Block] = []
        self.title = ""  # text of the first Title-style paragraph
        self._list_items: list[tuple[int, str]] = []
        self._caption = ""  # the short paragraph just above, a table's caption if one follows

    def read(self, body: etree._Element) -> None:
        for element, origin in block_items(body):
            check_time_budget()
            if element.tag == P:
                self._paragraph(element, origin)
            else:
                self._table(element)
            # All text boxes anchored in one paragraph or table make one block: they are
            # usually the parts of one drawing (the stamp of a GOST page is five boxes).
            self._textbox("\n".join(textboxes(element)))

    def finish(self) -> list[Block]:
        self._close_list()
        return self.blocks

    def _paragraph(self, p: etree._Element, origin: str) -> None:
        text = clean_text(paragraph_text(p))
        if not text:
            return  # empty paragraphs are spacing; they neither emit nor end a list
        role = self.styles.role(p)
        if role.kind == "heading":
            self._heading(role.level, text)
        elif role.kind == "list":
            # Consecutive items (empty paragraphs between them included) make one list block.
            self._list_items.append((role.level, text))
            self._caption = ""
        else:
            meta = {"origin": origin} if origin else {}
            if role.kind == "title":
                self.title = self.title or text
                meta["role"] = "title"
            self._emit(Block("text", text, meta=meta))
            self._caption = text if len(text) <= _CAPTION_MAX else ""

    def _heading(self, level: int, text: str) -> None:
        self._close_list()
        title = strip_typed_number(text)
        section, path = self.tracker.open(level, title)
        self.blocks.append(Block("heading", title, heading_path=path, section=section, level=level))
        self._caption = ""

    def _table(self, tbl: etree._Element) -> None:
        table = read_table(tbl)
        if table is None:
            return
        caption = self._caption
        block = Block("table", table.to_markdown(), table=table)
        if looks_like_test_case(table.header, caption):
            block.kind = "test_case"
            labels = [caption, " ".join(dict.fromkeys(c for c in table.header if c))]
            block.meta = table_meta(labels, self.tracker.path, self.tracker.section)
        self._emit(block)

    def _textbox(self, text: str) -> None:
        text = clean_text(text)
        if text:
            self._emit(Block("text", text, meta={"origin": "textbox"}))

    def _emit(self, block: Block) -> None:
        """Append a non-heading block in the current section; it ends any list being built."""
        self._close_list()
        block.heading_path = self.tracker.path
        block.section = self.tracker.section
        self.blocks.append(block)
        self._caption = ""

    def _close_list(self) -> None:
        if not self._list_items:
            return
        items, self._list_items = self._list_items, []
        self.blocks.append(
            Block(
                "list",
                _list_markdown(items),
                heading_path=self.tracker.path,
                section=self.tracker.section,
            )
        )


def _list_markdown(items: list[tuple[int, str]]) -> str:
    """ "- item" lines, nested two spaces per level. A level never jumps by more than one, and
    the shallowest item sits at the margin, so the result stays a list in any Markdown reader
    (four leading spaces would turn it into a code block)."""
    base = min(level for level, _ in items)
    lines: list[str] = []
    depth = -1
    for level, text in items:
        depth = min(level - base, depth + 1)
        indent = "  " * depth
        lines.append(indent + "- " + text.replace("\n", "\n" + indent + "  "))
    return "\n".join(lines)
