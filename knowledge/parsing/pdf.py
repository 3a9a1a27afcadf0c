"""PDF -> ParsedDocument with PyMuPDF.

Each page gives paragraphs (MuPDF's text blocks, lines joined, hyphenation undone) and, on pages
that look tabular, tables (pdf_tables); the text a table covers is not repeated as paragraphs.
Running headers and footers that repeat on most pages are dropped. Headings come from the PDF
outline when there is one, matched to the line that carries them on their target page; without
an outline, from type size and weight (pdf_text). Every block carries its 1-based page.

Scanned pages (no text layer, or a garbage one) are recognised with Tesseract (``scan``,
``ocr``, ``ocr_layout``) and then go through the same steps; the document's metadata keeps
what was recognised and how (``metadata["ocr"]``), and their blocks ``meta["ocr"]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymupdf
from django.conf import settings

from knowledge.parsing.base import (
    Block,
    HeadingTracker,
    ParsedDocument,
    ParseError,
    check_time_budget,
    clean_text,
    detect_language,
    paused_time_budget,
    strip_typed_number,
)
from knowledge.parsing.ocr import OcrOptions, OcrUnavailable, Progress
from knowledge.parsing.ocr_layout import page_layout, snap_sizes
from knowledge.parsing.pdf_meta import document_metadata, usable_title
from knowledge.parsing.pdf_tables import PageTable, find_page_tables, looks_tabular
from knowledge.parsing.pdf_text import (
    Line,
    as_list_item,
    drop_running_lines,
    is_bullet,
    join_lines,
    mark_typeset_headings,
    match_outline,
    page_lines,
    running_lines,
    starts_item,
)
from knowledge.parsing.scan import IMAGE, Recognised, page_needs_ocr, recognise_pages

NOT_VALID = "The file is not a valid PDF (it may be truncated or damaged)"
ENCRYPTED = "The PDF is password-protected"
NO_TEXT_LAYER = (
    "The PDF has no text layer (it looks like a scan) and OCR is switched off here (KB_OCR)"
)
NOTHING_RECOGNISED = "No text was recognised on the scanned pages"
NOTHING_IN_IMAGE = "No text was recognised in the image"
NO_PAGES = "The PDF has no pages"
TOO_MANY_PAGES = (
    "The PDF has {pages} pages; at most {limit} are read (KB_PDF_MAX_PAGES): split it, or ask "
    "the administrators to raise the limit"
)
NO_TEXT = "The PDF contains no text"

# Everything PyMuPDF raises on damaged bytes (FileDataError is a RuntimeError; MuPDF's own
# errors derive from FzErrorBase). Caught around opening and per page only, so a bug in our
# own code still surfaces as itself.
_UNREADABLE = (RuntimeError, ValueError, pymupdf.mupdf.FzErrorBase)
# Text, dict and word extraction share one text page; images are left out of it because the
# dict output would otherwise carry every image's bytes.
_TEXT_FLAGS = pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_IMAGES


@dataclass
class _Page:
    number: int  # 1-based
    height: float
    lines: list[Line] = field(default_factory=list)
    tables: list[PageTable] = field(default_factory=list)
    extra_headings: list[tuple[float, int, str]] = field(default_factory=list)  # y, level, title
    unreadable: bool = False
    ocr: str = ""  # why it was recognised (scan.NO_TEXT, GARBAGE, IMAGE), "" if it was not
    ocr_failed: bool = False  # it needed recognising and Tesseract could not read it

    @property
    def text(self) -> str:
        cells = [c for t in self.tables for row in [t.table.header, *t.table.rows] for c in row]
        return "\n".join([ln.text for ln in self.lines] + cells)


class PdfParser:
    """Parses PDF files with a text layer; see the module docstring for what becomes a block.

    ``tables``: how tables are found (pdf_tables.find_page_tables): "auto" (ruling first, the
    layout model where ruling leaves the numbers out), "layout", "lines", or "" for none.
    ``ocr``: how scanned pages are recognised (None: they are not); ``progress(done, total)``
    is called after each recognised page; ``scanned``: every page is a scan (an image file).
    """

    def __init__(
        self,
        *,
        tables: str = "auto",
        ocr: OcrOptions | None = None,
        progress: Progress | None = None,
        scanned: bool = False,
    ) -> None:
        if tables not in ("auto", "layout", "lines", ""):
            raise ValueError(f"Unknown table strategy {tables!r}")
        self.tables = tables
        self.ocr = ocr
        self.progress = progress
        self.scanned = scanned

    def parse(self, data: bytes, *, filename: str) -> ParsedDocument:
        """Blocks of the document in reading order; ParseError for unreadable or empty files."""
        doc = _open(data)
        try:
            pages = [self._read_page(page) for page in doc]  # each checks the time budget
            # Recognition has its own time limit (KB_OCR_TIME_LIMIT_SECONDS): the ingest's
            # budget does not run while Tesseract reads pages.
            with paused_time_budget():
                recognised, ocr_warnings = self._recognise(doc, pages)
            toc = _outline(doc)
            metadata = document_metadata(doc.metadata or {}, doc.page_count)
            warnings = _warnings(doc, pages) + ocr_warnings
            if not any(p.lines or p.tables for p in pages):
                raise ParseError(self._nothing(recognised) or _why_no_text(doc, pages))
        finally:
            doc.close()
        if recognised and self.ocr is not None:
            metadata["ocr"] = recognised.record(self.ocr)
        furniture = running_lines([(p.lines, p.height) for p in pages])
        for page in pages:
            page.lines = drop_running_lines(page.lines, page.height, furniture)
        if toc:
            _place_outline(toc, pages)
        else:
            mark_typeset_headings([p.lines for p in pages])
        title = usable_title(metadata.get("title", "")) or _cover_title(pages[0])
        blocks = _assemble(pages)
        for block in blocks:
            if block.page and pages[block.page - 1].ocr:
                block.meta["ocr"] = True
        first_heading = next((b.text for b in blocks if b.kind == "heading"), "")
        return ParsedDocument(
            title=title or first_heading or Path(filename).stem or filename,
            blocks=blocks,
            language=detect_language("\n".join(b.text for b in blocks)),
            metadata=metadata,
            warnings=warnings,
        )

    def _recognise(
        self, doc: pymupdf.Document, pages: list[_Page]
    ) -> tuple[Recognised | None, list[str]]:
        """Recognise the scanned pages in place (their lines and tables replaced); the outcome
        and warnings. Without Tesseract, a document that is all scans fails with what to
        install; one with some text keeps it, with a warning naming the pages not read."""
        reasons = {}
        for page in pages:
            if page.unreadable:
                continue
            reason = IMAGE if self.scanned else page_needs_ocr(doc[page.number - 1], page.text)
            if reason:
                reasons[page.number] = reason
        if not reasons or self.ocr is None:
            return None, []
        try:
            recognised = recognise_pages(doc, reasons, self.ocr, self.progress)
        except OcrUnavailable as exc:
            if any(p.lines or p.tables for p in pages if p.number not in reasons):
                return None, [f"Scanned pages not recognised ({_page_list(list(reasons))}): {exc}"]
            what = "The file is an image" if self.scanned else "The PDF is a scan"
            raise OcrUnavailable(f"{what} and needs OCR, but {_lower_first(str(exc))}") from None
        for number, result in recognised.pages.items():
            page = pages[number - 1]
            page.lines, page.tables = page_layout(result)
            page.ocr = reasons[number]
        snap_sizes([pages[n - 1].lines for n in recognised.pages])
        for number in recognised.failed:
            page = pages[number - 1]
            page.lines, page.tables, page.ocr_failed = [], [], True
        warnings = []
        if recognised.failed:
            shown = "; ".join(f"{n}: {e}" for n, e in list(recognised.failed.items())[:5])
            warnings.append(f"Scanned pages that could not be recognised: {shown}")
        return recognised, warnings

    def _nothing(self, recognised: Recognised | None) -> str:
        """Why a recognised document gave no text ("" when it was not recognised)."""
        if recognised is None:
            return ""
        if recognised.failed and not recognised.pages:
            return "The scan could not be recognised: " + next(iter(recognised.failed.values()))
        return NOTHING_IN_IMAGE if self.scanned else NOTHING_RECOGNISED

    def _read_page(self, page: pymupdf.Page) -> _Page:
        check_time_budget()
        result = _Page(number=page.number + 1, height=page.rect.height)
        try:
            textpage = page.get_textpage(flags=_TEXT_FLAGS)
            page_dict = page.get_text("dict", textpage=textpage)
            words = page.get_text("words", textpage=textpage)
        except _UNREADABLE:
            result.unreadable = True
            return result
        result.lines = page_lines(page_dict)
        if self.tables and looks_tabular(words):
            result.tables = find_page_tables(page, words, strategy=self.tables)
        # The text a table shows is in the table block; a line whose middle lies in a table's
        # area (its header lines above the grid included) is not a paragraph too.
        result.lines = [ln for ln in result.lines if not _in_table(ln, result.tables)]
        return result


def _open(data: bytes) -> pymupdf.Document:
    """The opened document, or ParseError saying in plain words why there is none."""
    if b"%PDF-" not in data[:1024]:  # the header may follow up to 1 KB of junk
        raise ParseError(NOT_VALID)
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except _UNREADABLE as exc:
        raise ParseError(NOT_VALID) from exc
    if doc.needs_pass:
        doc.close()
        raise ParseError(ENCRYPTED)
    # MuPDF quietly rebuilds a file whose end is missing and reads what is left; a file cut short
    # is refused instead of being indexed with pages missing.
    if doc.is_repaired and b"%%EOF" not in data[-2048:]:
        doc.close()
        raise ParseError(NOT_VALID)
    if doc.page_count == 0:
        doc.close()
        raise ParseError(NO_PAGES)
    if doc.page_count > settings.PDF_MAX_PAGES:
        # Every page is read in turn (a 3,000-page file took 9 minutes): refused before any.
        pages = doc.page_count
        doc.close()
        raise ParseError(TOO_MANY_PAGES.format(pages=pages, limit=settings.PDF_MAX_PAGES))
    return doc


def _outline(doc: pymupdf.Document) -> list[tuple[int, str, int, float | None]]:
    """Outline entries as (level, title, 1-based page, y on that page or None)."""
    try:
        toc = doc.get_toc(simple=False)
    except _UNREADABLE:
        return []
    entries = []
    for level, title, page, dest in toc:
        point = dest.get("to") if isinstance(dest, dict) else None
        y = point.y if point is not None and point.y == point.y else None  # NaN: no target
        title = clean_text(title or "")
        if title and page >= 1:
            entries.append((level, title, page, y))
    return entries


def _place_outline(toc: list[tuple[int, str, int, float | None]], pages: list[_Page]) -> None:
    """Make the line carrying each outline entry a heading; an entry no line carries (its
    title differs from the printed text) becomes a heading of its own at its target."""
    for level, title, number, y in toc:
        if number > len(pages):
            continue
        page = pages[number - 1]
        line = match_outline(page.lines, title, y)
        if line is None:
            page.extra_headings.append((y or 0.0, level, title))
        else:
            line.heading, line.text = level, title


def _in_table(line: Line, tables: list[PageTable]) -> bool:
    middle = pymupdf.Point((line.rect.x0 + line.rect.x1) / 2, (line.rect.y0 + line.rect.y1) / 2)
    return any(middle in table.bbox for table in tables)


def _assemble(pages: list[_Page]) -> list[Block]:
    """Blocks in reading order: paragraphs of consecutive lines of one MuPDF block, headings
    and tables where they stand on the page."""
    tracker = HeadingTracker()
    blocks: list[Block] = []

    def add(kind: str, text: str, page: int, **extra: Any) -> None:
        blocks.append(Block(kind, text, list(tracker.path), tracker.section, page=page, **extra))

    def flush(para: list[Line], page: int) -> None:
        text = clean_text(join_lines([ln.text for ln in para]))
        para.clear()
        if not text:
            return
        if not is_bullet(text):
            add("text", text, page)
        elif blocks and blocks[-1].kind == "list" and blocks[-1].page == page:
            blocks[-1].text += "\n" + as_list_item(text)
        else:
            add("list", as_list_item(text), page)

    for page in pages:
        para: list[Line] = []
        for item in _page_items(page):
            if isinstance(item, Line) and not item.heading:
                if para and (item.block != para[-1].block or starts_item(item.text)):
                    flush(para, page.number)
                para.append(item)
                continue
            flush(para, page.number)
            if isinstance(item, PageTable):
                if item.caption:
                    add("text", clean_text("\n".join(item.caption)), page.number)
                add("table", item.table.to_markdown(), page.number, table=item.table)
            else:
                level, title = (item.heading, item.text) if isinstance(item, Line) else item
                title = strip_typed_number(title)
                section, path = tracker.open(level, title)
                blocks.append(Block("heading", title, path, section, level, page=page.number))
        flush(para, page.number)
    return blocks


def _page_items(page: _Page) -> list[Line | PageTable | tuple[int, str]]:
    """Lines in MuPDF's order, with tables and outline-only headings slotted in by position."""
    keyed: list[tuple[float, int, Line | PageTable | tuple[int, str]]] = [
        (i, 2, line) for i, line in enumerate(page.lines)
    ]

    def slot(y: float) -> float:
        after = [i for i, line in enumerate(page.lines) if line.rect.y0 >= y - 1]
        return (after[0] if after else len(page.lines)) - 0.5

    keyed += [(slot(y), 0, (level, title)) for y, level, title in page.extra_headings]
    keyed += [(slot(t.bbox.y0), 1, t) for t in page.tables]
    return [item for *_, item in sorted(keyed, key=lambda k: (k[0], k[1]))]


def _cover_title(page: _Page) -> str:
    """The heading set in the largest type on the first page ("Apple Inc." on a 10-Q cover)."""
    headings = [line for line in page.lines if line.heading]
    return max(headings, key=lambda line: line.size).text if headings else ""


def _warnings(doc: pymupdf.Document, pages: list[_Page]) -> list[str]:
    warnings = []
    if doc.is_repaired:
        warnings.append("The PDF was damaged and has been repaired; some content may be missing")
    unreadable = [p.number for p in pages if p.unreadable]
    if unreadable:
        warnings.append(f"Pages that could not be read: {_page_list(unreadable)}")
    blank = [
        p.number
        for p in pages
        if not (p.unreadable or p.ocr_failed or p.ocr) and not p.lines and not p.tables
    ]
    if blank and len(blank) < len(pages):
        warnings.append(f"Pages without text (scans or blank pages): {_page_list(blank)}")
    return warnings


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _page_list(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:20])
    return shown + (f" and {len(numbers) - 20} more" if len(numbers) > 20 else "")


def _why_no_text(doc: pymupdf.Document, pages: list[_Page]) -> str:
    """Why a document gave no text: damaged, a scan (pictures, no text), or nothing at all."""
    if all(p.unreadable for p in pages):
        return NOT_VALID
    try:
        pictures = any(page.get_images() or page.get_drawings() for page in doc)
    except _UNREADABLE:
        return NOT_VALID
    return NO_TEXT_LAYER if pictures else NO_TEXT
