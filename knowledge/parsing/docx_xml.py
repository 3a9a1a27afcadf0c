"""WordprocessingML text below the level python-docx reaches.

python-docx's ``Paragraph.text`` leaves out text boxes, inline content controls and maths, and its
``Document.paragraphs`` skips block-level content controls (where Word keeps a table of contents).
These helpers walk the XML instead, so that every visible piece of text is read exactly once.
"""

from __future__ import annotations

from collections.abc import Iterator

from lxml import etree

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MC_NS = "http://schemas.openxmlformats.org/markup-compatibility/2006"
M_NS = "http://schemas.openxmlformats.org/officeDocument/2006/math"
NAMESPACES = {"w": W_NS, "mc": MC_NS}


def w(tag: str) -> str:
    """Clark notation for a tag in the WordprocessingML namespace: w("p") -> "{...}p"."""
    return f"{{{W_NS}}}{tag}"


def w_val(element: etree._Element | None, default: str = "") -> str:
    """The w:val attribute of an element (``default`` when the element or attribute is absent)."""
    if element is None:
        return default
    return element.get(w("val"), default)


P, TBL, TR, TC = w("p"), w("tbl"), w("tr"), w("tc")
SDT, SDT_PR, SDT_CONTENT, CUSTOM_XML = w("sdt"), w("sdtPr"), w("sdtContent"), w("customXml")
TXBX_CONTENT = w("txbxContent")

_TEXT = {w("t"), f"{{{M_NS}}}t"}
_TABS = {w("tab"), w("ptab")}
_BREAKS = {w("br"), w("cr")}
_NO_BREAK_HYPHEN = w("noBreakHyphen")
ALTERNATE_CONTENT, CHOICE = f"{{{MC_NS}}}AlternateContent", f"{{{MC_NS}}}Choice"
# Subtrees whose text is not part of the paragraph's visible text: properties, deleted and
# moved-away revisions, and text boxes (emitted as blocks of their own).
_SKIP = {w("pPr"), w("rPr"), w("del"), w("moveFrom"), w("instrText"), SDT_PR, TXBX_CONTENT}

# mc:AlternateContent holds the same content several times (a drawing and its VML fallback, a
# Word 2010 checkbox and a plain symbol); a reader shows exactly one, the first mc:Choice.
_TEXTBOXES = etree.XPath(
    ".//w:txbxContent[not(ancestor::mc:Fallback[preceding-sibling::mc:Choice])"
    " and not(ancestor::mc:Choice[preceding-sibling::mc:Choice])]",
    namespaces=NAMESPACES,
)


def is_placeholder(sdt: etree._Element) -> bool:
    """A content control still showing its prompt ("Click here to enter text") has no content."""
    props = sdt.find(SDT_PR)
    return props is not None and props.find(w("showingPlcHdr")) is not None


def paragraph_text(p: etree._Element) -> str:
    """The visible text of a paragraph, tabs and line breaks kept, text boxes left out."""
    parts: list[str] = []
    _collect(p, parts)
    return "".join(parts)


def _collect(element: etree._Element, parts: list[str]) -> None:
    for child in element:
        tag = child.tag
        if tag in _TEXT:
            parts.append(child.text or "")
        elif tag in _TABS:
            parts.append("\t")
        elif tag in _BREAKS:
            parts.append("\n")
        elif tag == _NO_BREAK_HYPHEN:
            parts.append("-")
        elif tag in _SKIP or (tag == SDT and is_placeholder(child)):
            continue
        elif tag == ALTERNATE_CONTENT:
            _collect(_shown_alternative(child), parts)
        elif len(child):
            _collect(child, parts)


def _shown_alternative(alternate: etree._Element) -> etree._Element:
    """The first mc:Choice of an mc:AlternateContent, else its mc:Fallback (or nothing)."""
    choice = alternate.find(CHOICE)
    if choice is None:
        choice = alternate.find(f"{{{MC_NS}}}Fallback")
    return alternate if choice is None else choice


def block_items(
    container: etree._Element, origin: str = ""
) -> Iterator[tuple[etree._Element, str]]:
    """Paragraphs and tables of a body, cell or text box in reading order, with their origin.

    Block-level content controls and custom XML are opened, not skipped: Word keeps its table of
    contents and many template fields inside them. ``origin`` is "" for plain content, "toc" for
    a table-of-contents control and "content_control" for any other.
    """
    for child in container:
        tag = child.tag
        if tag in (P, TBL):
            yield child, origin
        elif tag == SDT and not is_placeholder(child):
            content = child.find(SDT_CONTENT)
            if content is not None:
                yield from block_items(content, origin or _sdt_origin(child))
        elif tag == CUSTOM_XML:
            yield from block_items(child, origin)


def _sdt_origin(sdt: etree._Element) -> str:
    gallery = sdt.find(f"{SDT_PR}/{w('docPartObj')}/{w('docPartGallery')}")
    return "toc" if w_val(gallery) == "Table of Contents" else "content_control"


def children(element: etree._Element, tag: str) -> Iterator[etree._Element]:
    """Children with ``tag``, looking through content controls and custom XML wrapped around them
    (Word allows both around table rows and cells)."""
    for child in element:
        if child.tag == tag:
            yield child
        elif child.tag == SDT:
            content = child.find(SDT_CONTENT)
            if content is not None:
                yield from children(content, tag)
        elif child.tag == CUSTOM_XML:
            yield from children(child, tag)


def container_text(container: etree._Element) -> str:
    """All text of a cell or text box: paragraphs one per line, nested tables one row per line."""
    lines: list[str] = []
    for item, _origin in block_items(container):
        lines.append(paragraph_text(item) if item.tag == P else flat_table_text(item))
    return "\n".join(lines)


def flat_table_text(tbl: etree._Element) -> str:
    """A table flattened to text, cells joined by " | ": how a table nested in a cell is kept."""
    rows = []
    for tr in children(tbl, TR):
        cells = [" ".join(container_text(tc).split()) for tc in children(tr, TC)]
        if any(cells):
            rows.append(" | ".join(c for c in cells if c))
    return "\n".join(rows)


def textboxes(element: etree._Element) -> list[str]:
    """Texts of the text boxes (drawing or VML shapes) anchored anywhere inside ``element``."""
    return [container_text(box) for box in _TEXTBOXES(element)]
