"""A parsed document cut into sections: each heading opens one; blocks before the first heading
form the preamble (a title page, an introduction)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

from knowledge.parsing.base import Block, ParsedDocument
from knowledge.versions.words import normalise_text

# "2.1 ", "2.1. ", "IV. ", "A. ", "Б) ": numbering typed into a heading is not its title.
_TYPED_NUMBER = re.compile(r"^\s*(?:\d+(?:\.\d+)*[.)]?|[IVXLC]+\.|[A-ZА-ЯЁ][.)])\s+", re.I)
_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)
# Words that carry meaning for similarity: letters only, four or more (no numbers, and the
# short function words "и", "для", "the", "and" that make any two paragraphs look alike).
_CONTENT_WORDS = re.compile(r"[^\W\d_]{4,}", re.UNICODE)


def normalise_title(title: str) -> str:
    """A heading as alignment compares it: no typed number, case and punctuation folded."""
    stripped = _TYPED_NUMBER.sub("", title.strip()) or title
    return _NOT_WORD.sub(" ", stripped.casefold().replace("ё", "е")).strip()


def block_text(block: Block) -> str:
    """What a block says, for comparison: the table as Markdown, everything else its text."""
    if block.table is not None:
        return block.table.to_markdown()
    return block.text


@dataclass
class Section:
    index: int  # position among the document's sections
    number: str  # "2.1"; "" for the preamble
    title: str  # heading text; "" for the preamble
    level: int  # 0 for the preamble
    path: tuple[str, ...]
    blocks: list[Block] = field(default_factory=list)  # content, headings excluded

    @property
    def is_preamble(self) -> bool:
        return self.level == 0

    @cached_property
    def key_title(self) -> str:
        return normalise_title(self.title)

    @cached_property
    def key_path(self) -> tuple[str, ...]:
        return tuple(normalise_title(p) for p in self.path)

    @cached_property
    def body(self) -> str:
        return "\n".join(normalise_text(block_text(b)) for b in self.blocks)

    @cached_property
    def bag(self) -> Counter[str]:
        return content_bag(self.body)

    @property
    def label(self) -> str:
        """How a person names the section: "2.1 Scope", or "Preamble"."""
        if self.is_preamble:
            return "Preamble"
        return f"{self.number} {self.title}".strip()


def split_sections(document: ParsedDocument) -> list[Section]:
    """The document's sections in reading order; the preamble first when it has content."""
    sections = [Section(0, "", "", 0, ())]
    for block in document.blocks:
        if block.kind == "heading":
            path = tuple(block.heading_path) or (block.text,)
            sections.append(
                Section(len(sections), block.section, block.text, max(1, block.level), path)
            )
        else:
            sections[-1].blocks.append(block)
    if not sections[0].blocks:
        sections = sections[1:]
        for index, section in enumerate(sections):
            section.index = index
    return sections


def content_bag(text: str) -> Counter[str]:
    """The text's content words with their counts (case folded)."""
    return Counter(w.casefold() for w in _CONTENT_WORDS.findall(text))


def bag_similarity(a: Counter[str], b: Counter[str]) -> float:
    """Dice coefficient of two bags of words: 1 for the same words, 0 for none shared."""
    total = sum(a.values()) + sum(b.values())
    if total == 0:
        return 1.0
    return 2 * sum((a & b).values()) / total
