"""The document viewer's model: a version's parsed blocks as HTML pieces with anchors.

Every section gets an anchor (``s-2.1``), every block one (``b-12``), every chunk one at its first
block (``chunk-345``), every table row one (``b-12-r3``); the chunk an answer cited is highlighted
(for a table split into several chunks, or a checklist item, only that chunk's rows).

A page recognised with OCR is marked at its first block (its confidence, whether it is under the
threshold) and shown beside its text as an image (``page_image``, drawn from the stored file).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.template.defaultfilters import linebreaksbr
from django.utils.html import escape

from knowledge.models import Chunk, DocumentVersion
from knowledge.parsing.base import Block, ParsedDocument
from portal.markdown import render_markdown

PAGE_IMAGE_WIDTHS = (240, 1200)  # the thumbnail beside the text, the page opened on its own
MAX_PAGE_PIXELS = 4_000_000


@dataclass
class RecognisedPage:
    number: int
    confidence: float | None
    poor: bool  # under the confidence threshold


@dataclass
class ViewBlock:
    index: int
    kind: str
    html: str
    level: int = 0
    section: str = ""
    chunk_ids: list[int] = field(default_factory=list)
    highlight: bool = False
    page: int | None = None
    recognised: RecognisedPage | None = None  # set on the first block of a recognised page


@dataclass
class DocumentView:
    blocks: list[ViewBlock]
    outline: list[ViewBlock]  # the heading blocks, for the table of contents
    highlight_chunk: int | None
    warnings: list[str]


def build_view(version: DocumentVersion | None, highlight_chunk: int | None = None) -> DocumentView:
    if version is None or not version.parsed:
        return DocumentView([], [], None, [])
    parsed = ParsedDocument.from_dict(version.parsed)
    chunks = list(
        # Row units are search aids: the page shows their table, anchored by its own chunks.
        Chunk.objects.filter(version=version)
        .exclude(block_type=Chunk.BlockType.ROW)
        .values("pk", "block_start", "block_end", "meta")
    )
    starts: dict[int, list[int]] = {}
    for chunk in chunks:
        starts.setdefault(chunk["block_start"], []).append(chunk["pk"])
    target = next((c for c in chunks if c["pk"] == highlight_chunk), None)
    if target is None and highlight_chunk is not None:
        # A cited checklist item (a row unit): its own rows are highlighted in its table.
        target = (
            Chunk.objects.filter(
                version=version, pk=highlight_chunk, block_type=Chunk.BlockType.ROW
            )
            .values("pk", "block_start", "block_end", "meta")
            .first()
        )
    markdown_source = version.format == "markdown"
    marks = _recognised_pages(version)
    blocks = []
    for index, block in enumerate(parsed.blocks):
        lit = target is not None and target["block_start"] <= index <= target["block_end"]
        rows = (target or {}).get("meta", {}).get("table_rows") if lit else None
        blocks.append(
            ViewBlock(
                index=index,
                kind=block.kind,
                html=_html(index, block, markdown_source, rows),
                level=block.level,
                section=block.section,
                chunk_ids=starts.get(index, []),
                highlight=lit,
                page=block.page,
                recognised=marks.pop(block.page, None) if block.page else None,
            )
        )
    outline = [b for b in blocks if b.kind == "heading"]
    return DocumentView(blocks, outline, target["pk"] if target else None, parsed.warnings)


def _recognised_pages(version: DocumentVersion) -> dict[int, RecognisedPage]:
    poor = set(version.poorly_recognised_pages)
    return {
        number: RecognisedPage(number, entry.get("confidence"), number in poor)
        for number, entry in version.recognised_pages.items()
    }


def page_image(version: DocumentVersion, number: int, width: int) -> bytes:
    """Page ``number`` of the version's stored file (a PDF or an image) as a PNG ``width``
    pixels wide (at most 4 megapixels). LookupError when the file has no such page."""
    import pymupdf

    from knowledge.ingest.storage import read_blob

    with pymupdf.open(stream=read_blob(version.file.name)) as document:
        if not 1 <= number <= document.page_count:
            raise LookupError(number)
        page = document[number - 1]
        zoom = width / max(1.0, page.rect.width)
        zoom = min(zoom, (MAX_PAGE_PIXELS / max(1.0, abs(page.rect))) ** 0.5)
        return page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False).tobytes("png")


def _html(index: int, block: Block, markdown_source: bool, highlight_rows: list[int] | None) -> str:
    if block.kind == "heading":
        return escape(block.text)
    if block.table is not None:
        return _table_html(index, block, highlight_rows)
    if block.kind in ("list", "code") or markdown_source:
        return render_markdown(block.text)
    return f"<p>{linebreaksbr(block.text)}</p>"


def _table_html(index: int, block: Block, highlight_rows: list[int] | None) -> str:
    table = block.table
    assert table is not None
    first, last = (highlight_rows or [0, -1])[:2]
    head = "".join(f"<th>{linebreaksbr(c)}</th>" for c in table.header)
    body = []
    for number, row in enumerate(table.rows, start=1):
        mark = ' class="highlight"' if highlight_rows and first <= number <= last else ""
        cells = "".join(f"<td>{linebreaksbr(c)}</td>" for c in row)
        body.append(f'<tr id="b-{index}-r{number}"{mark}>{cells}</tr>')
    caption = ""
    if block.kind == "test_case" and block.meta.get("function"):
        caption = f"<caption>Test case: {escape(block.meta['function'])}</caption>"
    elif block.meta.get("caption"):
        caption = f"<caption>{escape(block.meta['caption'])}</caption>"
    return f'<table class="doc-table">{caption}<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
