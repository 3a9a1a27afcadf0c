"""Text lines of PDF pages: running headers and footers, headings, paragraphs.

MuPDF already groups the lines of a page into blocks that are, in practice, paragraphs; we keep
that grouping, join the lines of a block into one paragraph and undo line-end hyphenation.
Headings come from the document outline when it has one, otherwise (conservatively) from type:
a short standalone line set larger than the body text, or bold at body size.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass

import pymupdf

from knowledge.parsing.pdf_grid import is_value

_BOLD_FLAG = 16  # PyMuPDF span flag
_MARGIN = 0.1  # top and bottom tenth of a page: where running headers and footers live
FURNITURE_SHARE = 0.5  # a margin line repeated on at least this share of pages is furniture
_BIGGER = 1.15  # type this much larger than the body text marks a heading
_DIGITS = re.compile(r"\d+")
_NON_WORD = re.compile(r"[\W_]+")
_BULLETS = ("•", "·", "●", "▪", "◦", "■", "\uf0b7", "\uf0a7")  # last two: Symbol-font bullets
_HYPHENATED = re.compile(r"[A-Za-zА-Яа-яЁё]-$")


@dataclass
class Line:
    """One text line of a page, with what heading detection needs to know about its type."""

    rect: pymupdf.Rect
    text: str
    size: float  # font size of most of its characters
    bold: bool  # every visible character is bold
    block: int  # MuPDF block number on the page: lines of one block form a paragraph
    alone: bool  # the only line of its block
    heading: int = 0  # heading level once it is known to be a heading


def page_lines(page_dict: dict) -> list[Line]:
    """The non-blank text lines of a page from ``page.get_text("dict")``, in MuPDF's order."""
    lines = []
    for number, block in enumerate(page_dict["blocks"]):
        if block.get("type") != 0:
            continue
        block_lines = []
        for raw in block["lines"]:
            spans = [s for s in raw["spans"] if s["text"].strip()]
            if not spans:
                continue
            weights: Counter[float] = Counter()
            for span in spans:
                weights[round(span["size"], 1)] += len(span["text"].strip())
            text = re.sub(r"\s+", " ", "".join(s["text"] for s in raw["spans"])).strip()
            bold = all(s["flags"] & _BOLD_FLAG or "Bold" in s["font"] for s in spans)
            size = weights.most_common(1)[0][0]
            block_lines.append(Line(pymupdf.Rect(raw["bbox"]), text, size, bold, number, False))
        if len(block_lines) == 1:
            block_lines[0].alone = True
        lines += block_lines
    return lines


def edge_lines(lines: list[Line], page_height: float) -> list[Line]:
    """Where running headers and footers sit: the page margins, and the first and last line
    (filings converted from HTML print their footer well above the paper's margin)."""
    by_y = sorted(lines, key=lambda line: line.rect.y0)
    edges = by_y[:1] + by_y[-1:]
    top, bottom = page_height * _MARGIN, page_height * (1 - _MARGIN)
    edges += [line for line in lines if line.rect.y1 <= top or line.rect.y0 >= bottom]
    return list({id(line): line for line in edges}.values())


def furniture_key(line: Line) -> str:
    """A line's text with its numbers blanked out: page 4 and page 5 footers look the same."""
    return _DIGITS.sub("#", line.text.lower())


def running_lines(pages: list[tuple[list[Line], float]]) -> set[str]:
    """Edge lines that repeat on most pages: page numbers, "Apple Inc. | Q3 2022 Form 10-Q | 5".

    Only documents of three pages or more: on fewer, a repeat is no evidence.
    """
    if len(pages) < 3:
        return set()
    seen: Counter[str] = Counter()
    for lines, height in pages:
        seen.update({furniture_key(line) for line in edge_lines(lines, height)})
    return {key for key, n in seen.items() if n >= max(3, FURNITURE_SHARE * len(pages))}


def drop_running_lines(lines: list[Line], page_height: float, furniture: set[str]) -> list[Line]:
    """The page's lines without its running header and footer lines."""
    drop = {id(line) for line in edge_lines(lines, page_height) if furniture_key(line) in furniture}
    return [line for line in lines if id(line) not in drop]


def body_size(pages: list[list[Line]]) -> float:
    """The font size most characters of the document are set in."""
    sizes: Counter[float] = Counter()
    for lines in pages:
        for line in lines:
            sizes[line.size] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _norm(text: str) -> str:
    return _NON_WORD.sub(" ", text.lower()).strip()


def match_outline(lines: list[Line], title: str, y: float | None) -> Line | None:
    """The line of a page that carries an outline entry's title, nearest the entry's target."""
    wanted = _norm(title)
    if not wanted:
        return None
    found = []
    for line in lines:
        have = _norm(line.text)
        if not have or line.heading:
            continue
        short, long = sorted((have, wanted), key=len)
        if short in long and len(short) >= 0.6 * len(long):
            found.append(line)
    if not found:
        return None
    if y is None:
        return found[0]
    return min(found, key=lambda line: abs(line.rect.y0 - y))


def mark_typeset_headings(pages: list[list[Line]]) -> None:
    """Mark headings by type when there is no outline; levels from the sizes in use.

    Conservative on purpose: a heading stands alone in its block, is short, has letters, does
    not end like a sentence or a table label (":" ","), and is either clearly larger than the
    body text or bold at body size. Bold labels inside detected tables never get here.
    """
    body = body_size(pages)
    if not body:
        return
    candidates = [(n, ln) for n, lines in enumerate(pages) for ln in lines if _is_heading(ln, body)]
    pages_of: dict[float, set[int]] = defaultdict(set)
    for n, line in candidates:
        if line.size >= body * _BIGGER:
            pages_of[line.size].add(n)
    # A size is a heading level only when it recurs on several pages: the big type of a cover
    # page must not push every real heading a level down.
    sizes = sorted((size for size, seen in pages_of.items() if len(seen) >= 2), reverse=True)[:2]
    for _, line in candidates:
        if line.size in sizes:
            line.heading = sizes.index(line.size) + 1
        else:
            line.heading = 1 if line.size >= body * _BIGGER else len(sizes) + 1


def _is_heading(line: Line, body: float) -> bool:
    text = line.text
    if not line.alone or not 3 <= len(text) <= 120 or len(text.split()) > 16:
        return False
    if text[-1] in ":,;" or (text[-1] == "." and len(text.split()) > 3):
        return False
    if sum(ch.isalpha() for ch in text) < 3 or is_value(text) or text.startswith(_BULLETS):
        return False
    if text.startswith("("):  # "(Unaudited)", "(In millions)": notes, not titles
        return False
    return line.size >= body * _BIGGER or (line.bold and line.size >= body * 0.95)


def join_lines(texts: list[str]) -> str:
    """Lines of one paragraph as one string; "infor-" + "mation" -> "information"."""
    out = ""
    for text in texts:
        if not out:
            out = text
        elif _HYPHENATED.search(out) and text[:1].islower():
            out = out[:-1] + text
        else:
            out = f"{out} {text}"
    return out


def starts_item(text: str) -> bool:
    """A line that starts a list item (the bullet may be a line of its own)."""
    return text.startswith(_BULLETS)


def is_bullet(text: str) -> bool:
    """A paragraph that is a list item: a bullet and some text."""
    return starts_item(text) and len(text) > 2


def as_list_item(text: str) -> str:
    """ "• Item" -> "- Item" (Markdown)."""
    return "- " + text[1:].strip()
