"""A chunk's text cut into units: sentences, list items and table rows (each with its
table's header), each under the sub-heading of the chunk it stands in.

The units are what e5 reads one by one (the chunk's second vectors, ``knowledge.ingest.
second``), what the answer check compares with the question, and what an extractive answer
quotes. A chunk of a wiki page often holds several short sections ("### Summary", a bold label
line): a unit keeps that heading, so a quoted sentence can say what it is about and its vector
knows it too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from knowledge.tables import markdown_cells
from knowledge.text import matching
from knowledge.text.words import POINTING_BACK

# The version of the rules below: raised whenever they cut a text (or choose what the model
# reads of it) differently, so that the second vectors made for the old cutting are made again
# (``knowledge.ingest.second``).
CUTTING = 3

# A sentence ends at . ! ? … before a capital letter, a quote or a bracket: "6–8 ч. на стенде",
# "т.е. долго" and "версия 2.3" go on.
_SENTENCE = re.compile(r"(?<=[.!?…])\s+(?=[A-ZА-ЯЁ«\"“(\[*])")
_STRAIGHT_QUOTE = re.compile(r'(?<!\d)"')
QUOTATION = 300  # characters a sentence may grow to while a quotation in it is open
_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s+(?P<hash>.+?)\s*#*\s*$|\*\*(?P<bold>[^*]{2,120})\*\*:?\s*$)"
)
_ROW = re.compile(r"^\s*\|.*\|\s*$")
_RULE = re.compile(r"^[\s|:-]+$")
_ITEM = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|https?://\S+|www\.\S+")


@dataclass(frozen=True)
class Unit:
    """One quotable piece of a passage, in its order there."""

    order: int
    text: str  # a sentence, an item, or a table row under its header rows
    heading: str  # the sub-heading above it inside the passage ("" for none)
    table: bool = False
    caption: str = ""  # a table row: the line above the table (its caption), if any
    head: tuple[str, ...] = ()  # a table row: its table's header row(s) and rule
    row: str = ""  # a table row: the row itself
    captions: bool = False  # a line right above a table: its caption, said with its rows
    items: int = 0  # a list item: the number of its list in the text (0: not an item)

    @property
    def words(self) -> list[str]:
        return list(_words(self.text))

    def lemmas(self) -> frozenset[str]:
        """The unit's lemmas and words as written, casefolded (``matching.lemmas``)."""
        return matching.text_lemmas(_LINK.sub(" ", self.text))

    @property
    def embed_text(self) -> str:
        """What the model reads: the sentence under its sub-heading; a row under its header
        row (its caption, if any, first)."""
        if self.table:
            head = self.head[-1] if self.head and not _RULE.match(self.head[-1]) else ""
            head = head or (self.head[0] if self.head else "")
            return "\n".join(x for x in (self.caption, head, self.row) if x)
        return f"{self.heading}: {self.text}" if self.heading else self.text

    @property
    def points_back(self) -> bool:
        """A sentence that leans on the one before it ("… с этими тремя фильтрами"): a
        demonstrative (``POINTING_BACK``) among its words."""
        return not self.table and bool(self.lemmas() & POINTING_BACK)

    @property
    def asks(self) -> bool:
        """A question the document itself asks ("Кто пишет критерии приемки?"): what follows
        it answers it."""
        return not self.table and self.text.rstrip().endswith("?")


# A passage is cut and its units' words read several times an answer (the quote under each
# source, the extractive answer, the answer check): each text once per process, while it is
# among the recent ones (benchmarks/stages.py).
_KEPT = 4096


@lru_cache(maxsize=_KEPT)
def _words(text: str) -> tuple[str, ...]:
    return tuple(matching.WORD.findall(_LINK.sub(" ", text)))


def units(text: str) -> list[Unit]:
    """``text`` cut into units, in order (see the module docstring)."""
    return list(_units(text))


@lru_cache(maxsize=_KEPT // 4)
def _units(text: str) -> tuple[Unit, ...]:
    return tuple(_cut(text))


def _cut(text: str) -> list[Unit]:
    out: list[Unit] = []
    heading = ""
    head: list[str] = []
    rows = 0
    last_text = ""
    outside = ""  # the heading the table stands under (its title rows head only its rows)
    lists, in_list = 0, False  # the lists met so far; whether the last text line was an item
    for line in text.split("\n"):
        if _ROW.match(line):
            in_list = False
            if not head:
                head, rows, outside = [line], 0, heading
            elif len(head) == 1 and _RULE.match(line):
                head.append(line)
            elif not _RULE.match(line):
                if rows == 0 and out and not out[-1].table and out[-1].text == last_text:
                    out[-1] = replace(out[-1], captions=True)
                if len(head) == 1:
                    head.append(_rule_for(head[0]))
                if rows == 0 and len(head) == 2 and _title_row(head[0]):
                    # A title row across the table ("| Поля | | |"): the column names are the
                    # next row, part of the header.
                    head.append(line)
                    continue
                if _title_row(line):
                    # A title row inside the table ("| Методы | | |"): a heading of the rows
                    # below it, not a row of its own; the row after it names their columns.
                    heading = next(c for c in markdown_cells(line) if c)
                    head = [line, head[1] if len(head) > 1 else _rule_for(line)]
                    rows = -1
                    continue
                if rows == -1 and len(head) == 2 and _title_row(head[0]):
                    head.append(line)  # the column names under a title row
                    rows = 0
                    continue
                rows = max(rows, 0) + 1
                out.append(
                    Unit(len(out), "\n".join([*head, line]), heading, table=True,
                         caption=last_text, head=tuple(head), row=line)
                )  # fmt: skip
            continue
        if head:
            head, heading = [], outside
        found = _HEADING.match(line)
        if found:
            in_list = False
            heading = (found["hash"] or found["bold"] or "").strip()
            continue
        stripped = _ITEM.sub("", line).strip()
        if not stripped:
            continue
        if _ITEM.match(line):
            lists += 0 if in_list else 1
            in_list = True
        else:
            in_list = False
        last_text = stripped
        for sentence in split_sentences(stripped):
            out.append(Unit(len(out), sentence, heading, items=lists * in_list))
    return out


def split_sentences(text: str) -> list[str]:
    """The sentences of a line: cut at ``_SENTENCE``, except inside a quotation ("по формуле
    “Что? Где? Когда?”" is one sentence: its question marks are the quotation's), up to
    ``QUOTATION`` characters (a quote never closed does not swallow the line)."""
    out: list[str] = []
    for piece in _SENTENCE.split(text):
        piece = piece.strip()
        if not piece:
            continue
        if out and _open_quote(out[-1]) and len(out[-1]) + len(piece) < QUOTATION:
            out[-1] += " " + piece
        else:
            out.append(piece)
    return out


def _open_quote(text: str) -> bool:
    """A quotation opened in ``text`` is not closed in it: “…, «…, or an odd number of \"
    (an inch mark after a figure, 5\", is not a quote)."""
    return (
        text.count("“") > text.count("”")
        or text.count("«") > text.count("»")
        or len(_STRAIGHT_QUOTE.findall(text)) % 2 == 1
    )


def _title_row(row: str) -> bool:
    """A Markdown row with one filled cell of three or more (a merged title row)."""
    cells = markdown_cells(row)
    return len(cells) >= 3 and sum(1 for c in cells if c) == 1


def _rule_for(header: str) -> str:
    return "|" + " --- |" * max(1, header.strip().strip("|").count("|") + 1)


def quotable(unit: Unit) -> bool:
    """Worth quoting alone: a row; a text of three words or more outside links, or of fewer
    with a figure ("Листов 26"), that is not a list of links."""
    if unit.table:
        return True
    words = len(unit.words)
    enough = words >= 3 or (words >= 1 and any(ch.isdigit() for ch in unit.text))
    return enough and not is_link_only(unit.text)


_SHORT_WORD = re.compile(r"\w{3,}", re.UNICODE)


def is_link_only(text: str) -> bool:
    """A text that is mostly links (a list of sources, videos, further reading): searchable,
    never quoted as an answer."""
    links = _LINK.findall(text)
    if not links:
        return False
    words_left = _SHORT_WORD.findall(_LINK.sub(" ", text))
    words_in_links = sum(len(_SHORT_WORD.findall(label)) for label in links)
    return len(words_left) <= max(3, words_in_links // 2)
