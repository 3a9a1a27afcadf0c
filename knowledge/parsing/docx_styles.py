"""What a Word paragraph is -- heading, title, list item or text -- from its style chain.

Word decides a heading's level by its outline level (w:outlineLvl), set on the paragraph or on
a style it inherits from (w:basedOn). Built-in heading styles carry one; styles made by other
programs or copied between documents sometimes carry only a name ("Heading 2", "Заголовок 2") or
an id ("2" in Russian Word, "Heading2"), so names and ids are the fallback. Outline level 9 means
"body text", which is how "TOC Heading" (based on Heading 1) stops being a heading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from knowledge.parsing.docx_xml import w, w_val

_HEADING_WORDS = "heading|заголовок|überschrift|titre|título|titolo|kop|nagłówek|rubrik"
_HEADING_NAME = re.compile(rf"^(?:(?:{_HEADING_WORDS})\s*)?([1-9])$", re.I)
_TITLE_NAME = re.compile(r"^(?:title|название|заголовок|titel|titre|título|titolo)$", re.I)
# Named list styles number their paragraphs through the style's own w:numPr; the name is the
# fallback when a copied style lost it. "List Paragraph" is not among them: without numbering it
# is merely an indented paragraph, and Word draws no bullet for it.
_LIST_NAME = re.compile(
    r"^(?:list (?:bullet|number)|маркированный список|нумерованный список)(?: ([2-9]))?$", re.I
)
_MAX_CHAIN = 20  # basedOn chains are short; the limit only guards against a cycle

BODY_TEXT = 0  # heading level meaning "explicitly not a heading"
P_PR, P_STYLE, OUTLINE_LVL, NUM_PR = w("pPr"), w("pStyle"), w("outlineLvl"), w("numPr")
NUM_ID, ILVL = w("numId"), w("ilvl")


@dataclass(frozen=True)
class Role:
    """How one paragraph reads: kind is heading, title, list or text; level is the heading
    level (1 = top) or the list nesting level (0 = top)."""

    kind: str
    level: int = 0


@dataclass(frozen=True)
class _Style:
    name: str
    based_on: str
    outline: int | None  # w:outlineLvl as stored: 0-8 are levels 1-9, 9 is body text
    num_id: str | None
    ilvl: int | None


class StyleSheet:
    """The paragraph styles of one document, and the role they give to a paragraph."""

    def __init__(self, styles: etree._Element | None) -> None:
        self._styles: dict[str, _Style] = {}
        self._default = ""
        for style in [] if styles is None else styles.iterchildren(w("style")):
            if style.get(w("type")) != "paragraph":
                continue
            style_id = style.get(w("styleId"), "")
            self._styles[style_id] = _read_style(style)
            if style.get(w("default")) in ("1", "true", "on"):
                self._default = style_id
        # What a style implies depends on its whole chain; documents reuse a handful of styles
        # over thousands of paragraphs, so each style's answer is worked out once.
        self._levels: dict[str, int] = {}
        self._numbering: dict[str, tuple[str | None, int | None, int | None]] = {}

    def role(self, p: etree._Element) -> Role:
        """Heading (by outline level or style), title, list item (by numbering) or text."""
        ppr = p.find(P_PR)
        style_id = w_val(ppr.find(P_STYLE) if ppr is not None else None) or self._default
        direct_outline = _int(ppr.find(OUTLINE_LVL) if ppr is not None else None)
        level = self._heading_level(style_id) if direct_outline is None else direct_outline + 1
        if level and level <= 9:
            return Role("heading", level)
        style = self._styles.get(style_id)
        if _TITLE_NAME.match(style.name if style else "") or _TITLE_NAME.match(style_id):
            return Role("title")
        ilvl = self._list_level(ppr, style_id)
        return Role("text") if ilvl is None else Role("list", ilvl)

    def _heading_level(self, style_id: str) -> int:
        """Level 1-9 from the first style in the chain that says anything, else BODY_TEXT."""
        if style_id not in self._levels:
            self._levels[style_id] = self._chain_heading_level(style_id)
        return self._levels[style_id]

    def _chain_heading_level(self, style_id: str) -> int:
        for style_id_, style in self._chain(style_id):
            if style is not None and style.outline is not None:
                return style.outline + 1 if style.outline < 9 else BODY_TEXT
            match = _HEADING_NAME.match(style.name if style else "") or _HEADING_NAME.match(
                style_id_
            )
            if match:
                return int(match.group(1))
        return BODY_TEXT

    def _list_level(self, ppr: etree._Element | None, style_id: str) -> int | None:
        """The list nesting level when the paragraph is numbered, else None."""
        if style_id not in self._numbering:
            self._numbering[style_id] = self._chain_numbering(style_id)
        num_id, ilvl, named_level = self._numbering[style_id]
        numpr = ppr.find(NUM_PR) if ppr is not None else None
        if numpr is not None:  # the paragraph's own numbering overrides its style's
            num_id = w_val(numpr.find(NUM_ID)) or num_id
            direct_ilvl = _int(numpr.find(ILVL))
            ilvl = ilvl if direct_ilvl is None else direct_ilvl
        if num_id == "0":  # how Word switches numbering off for a paragraph whose style has it
            return None
        if num_id is None:
            return named_level
        # "List Bullet 2" numbers through a definition of its own at level 0; its name says
        # how deep it sits, which an explicit w:ilvl still overrides.
        return ilvl if ilvl is not None else named_level or 0

    def _chain_numbering(self, style_id: str) -> tuple[str | None, int | None, int | None]:
        """numId and ilvl inherited through the chain, and the level a list style's name gives."""
        num_id: str | None = None
        ilvl: int | None = None
        named_level: int | None = None
        for _id, style in self._chain(style_id):
            if style is None:
                continue
            num_id = num_id or style.num_id
            ilvl = style.ilvl if ilvl is None else ilvl
            match = _LIST_NAME.match(style.name)
            if match and named_level is None:
                named_level = int(match.group(1) or 1) - 1
        return num_id, ilvl, named_level

    def _chain(self, style_id: str) -> list[tuple[str, _Style | None]]:
        chain: list[tuple[str, _Style | None]] = []
        seen: set[str] = set()
        while style_id and style_id not in seen and len(chain) < _MAX_CHAIN:
            seen.add(style_id)
            style = self._styles.get(style_id)
            chain.append((style_id, style))
            style_id = style.based_on if style else ""
        return chain


def _read_style(style: etree._Element) -> _Style:
    ppr = style.find(P_PR)
    numpr = ppr.find(NUM_PR) if ppr is not None else None
    return _Style(
        name=w_val(style.find(w("name"))),
        based_on=w_val(style.find(w("basedOn"))),
        outline=_int(ppr.find(OUTLINE_LVL) if ppr is not None else None),
        num_id=(w_val(numpr.find(NUM_ID)) or None) if numpr is not None else None,
        ilvl=_int(numpr.find(ILVL)) if numpr is not None else None,
    )


def _int(element: etree._Element | None) -> int | None:
    value = w_val(element)
    return int(value) if value.isascii() and value.isdigit() else None
