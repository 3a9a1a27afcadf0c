"""The comparison of two parsed documents: sections aligned, blocks inside them diffed.

``compare_documents(old, new)`` is the engine's one entry point. Inside a pair of matched
sections, blocks are aligned by their normalised text (difflib); a changed stretch pairs each
old block with its most similar new block of a compatible kind (>= 0.4) and diffs the pair word
by word, or row by row for tables; the rest is added or removed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import cached_property

from knowledge.parsing.base import Block, ParsedDocument
from knowledge.versions.align import SectionMatch, align_sections
from knowledge.versions.sections import (
    Section,
    bag_similarity,
    block_text,
    content_bag,
    split_sections,
)
from knowledge.versions.summary import MAX_LISTED, ChangeSummary
from knowledge.versions.tables import TableDiff, diff_tables
from knowledge.versions.words import WordDiff, count_words, diff_words, normalise_text

BLOCK_THRESHOLD = 0.4


@dataclass
class BlockDiff:
    status: str  # same, added, removed, changed
    old: Block | None
    new: Block | None
    words: WordDiff | None = None  # text, list and code blocks
    table: TableDiff | None = None  # two tables

    @property
    def kind(self) -> str:
        return (self.new or self.old).kind  # type: ignore[union-attr]

    @cached_property
    def words_added(self) -> int:
        if self.status == "added":
            return count_words(block_text(self.new))  # type: ignore[arg-type]
        if self.table is not None:
            return self.table.words_added
        return self.words.added if self.words else 0

    @cached_property
    def words_removed(self) -> int:
        if self.status == "removed":
            return count_words(block_text(self.old))  # type: ignore[arg-type]
        if self.table is not None:
            return self.table.words_removed
        return self.words.removed if self.words else 0


@dataclass
class SectionDiff:
    match: SectionMatch
    blocks: list[BlockDiff] = field(default_factory=list)
    title: WordDiff | None = None  # the heading, when renamed
    anchor: str = ""  # id for deep links, unique in the comparison (set by compare_documents)

    @property
    def old(self) -> Section | None:
        return self.match.old

    @property
    def new(self) -> Section | None:
        return self.match.new

    @property
    def section(self) -> Section:
        return self.match.new or self.match.old  # type: ignore[return-value]

    @property
    def status(self) -> str:
        """same, changed, added or removed (a moved or renamed section can be "same" inside)."""
        if self.old is None:
            return "added"
        if self.new is None:
            return "removed"
        if self.match.renamed or any(b.status != "same" for b in self.blocks):
            return "changed"
        return "same"

    @property
    def moved(self) -> bool:
        return self.match.moved

    @property
    def renamed(self) -> bool:
        return self.match.renamed

    @property
    def renumbered(self) -> bool:
        return bool(self.old and self.new and self.old.number != self.new.number)

    @property
    def base_anchor(self) -> str:
        """sec-3-2 (by the new numbering), sec-old-3-2 for a removed section, sec-0 a preamble."""
        section = self.section
        slug = section.number.replace(".", "-") or "0"
        return f"sec-old-{slug}" if self.new is None else f"sec-{slug}"

    @property
    def label(self) -> str:
        return self.section.label

    @cached_property
    def words_added(self) -> int:
        title = self.title.added if self.title else 0
        return title + sum(b.words_added for b in self.blocks)

    @cached_property
    def words_removed(self) -> int:
        title = self.title.removed if self.title else 0
        return title + sum(b.words_removed for b in self.blocks)

    @property
    def changed_blocks(self) -> list[BlockDiff]:
        return [b for b in self.blocks if b.status != "same"]


@dataclass
class DocumentDiff:
    sections: list[SectionDiff]
    old_title: str = ""
    new_title: str = ""

    @cached_property
    def summary(self) -> ChangeSummary:
        return summarise(self)

    @property
    def changed_sections(self) -> list[SectionDiff]:
        return [s for s in self.sections if s.status != "same" or s.moved]


def summarise(diff: DocumentDiff) -> ChangeSummary:
    """The diff's counts and the first changed sections' labels, as stored and shown."""
    summary = ChangeSummary()
    for section in diff.sections:
        status = section.status
        if status == "added":
            summary.sections_added += 1
        elif status == "removed":
            summary.sections_removed += 1
        elif status == "changed":
            summary.sections_changed += 1
        summary.sections_moved += section.moved
        summary.sections_renamed += section.renamed
        summary.words_added += section.words_added
        summary.words_removed += section.words_removed
        for block in section.blocks:
            if block.table is not None:
                summary.rows_added += block.table.count("added")
                summary.rows_removed += block.table.count("removed")
                summary.rows_changed += block.table.count("changed")
        if (status != "same" or section.moved) and len(summary.changed) < MAX_LISTED:
            summary.changed.append(section.label)
    return summary


def compare_documents(old: ParsedDocument, new: ParsedDocument) -> DocumentDiff:
    """Align the two documents by section and diff every pair; numbers rows for deep links."""
    matches = align_sections(split_sections(old), split_sections(new))
    sections = [_diff_section(m) for m in matches]
    anchor = 0
    for section in sections:
        for block in section.blocks:
            if block.table is not None:
                for row in block.table.rows:
                    anchor += 1
                    row.anchor = anchor
    _unique_anchors(sections)
    return DocumentDiff(sections, old.title, new.title)


def _unique_anchors(sections: list[SectionDiff]) -> None:
    # Two sections can share a number (a preamble and a heading-less stretch, or a source
    # with duplicate numbering); suffix the later ones so each anchor names one section.
    seen: dict[str, int] = {}
    for section in sections:
        base = section.base_anchor
        seen[base] = seen.get(base, 0) + 1
        section.anchor = base if seen[base] == 1 else f"{base}-{seen[base]}"


def _diff_section(match: SectionMatch) -> SectionDiff:
    if match.old is None:
        return SectionDiff(match, [BlockDiff("added", None, b) for b in match.new.blocks])  # type: ignore[union-attr]
    if match.new is None:
        return SectionDiff(match, [BlockDiff("removed", b, None) for b in match.old.blocks])
    title = diff_words(match.old.title, match.new.title) if match.renamed else None
    return SectionDiff(match, diff_blocks(match.old.blocks, match.new.blocks), title)


def _key(block: Block) -> str:
    return ("table:" if block.table is not None else "text:") + normalise_text(block_text(block))


def diff_blocks(old: list[Block], new: list[Block]) -> list[BlockDiff]:
    """Blocks of one section pair: equal runs kept, changed stretches paired by similarity."""
    keys_old, keys_new = [_key(b) for b in old], [_key(b) for b in new]
    if keys_old == keys_new:
        return [BlockDiff("same", a, b) for a, b in zip(old, new, strict=True)]
    matcher = SequenceMatcher(None, keys_old, keys_new, autojunk=False)
    out: list[BlockDiff] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out += [
                BlockDiff("same", old[i], new[j])
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            ]
        else:
            out += _pair_stretch(old[i1:i2], new[j1:j2])
    return out


def _bag(block: Block) -> Counter[str]:
    return content_bag(normalise_text(block_text(block)))


def _compatible(a: Block, b: Block) -> bool:
    return (a.table is None) == (b.table is None)


def _pair_stretch(old: list[Block], new: list[Block]) -> list[BlockDiff]:
    # Bags of words, not difflib, score the candidates: a rewritten section can hold a hundred
    # paragraphs on each side, and this stays linear in their words.
    if len(old) == 1 and len(new) == 1 and _compatible(old[0], new[0]):
        return [_changed(old[0], new[0])]  # one paragraph replaced by one: an edit
    bags_new = [_bag(b) for b in new]
    out: list[BlockDiff] = []
    next_new = 0
    for a in old:
        bag_a = _bag(a)
        best, best_score = None, BLOCK_THRESHOLD
        for k in range(next_new, len(new)):
            b = new[k]
            if not _compatible(a, b):
                continue
            score = bag_similarity(bag_a, bags_new[k])
            if score >= best_score and (best is None or score > best_score):
                best, best_score = k, score
        if best is None:
            out.append(BlockDiff("removed", a, None))
            continue
        out += [BlockDiff("added", None, b) for b in new[next_new:best]]
        out.append(_changed(a, new[best]))
        next_new = best + 1
    out += [BlockDiff("added", None, b) for b in new[next_new:]]
    return out


def _changed(a: Block, b: Block) -> BlockDiff:
    if a.table is not None and b.table is not None:
        table = diff_tables(a.table, b.table)
        return BlockDiff("changed" if table.changed else "same", a, b, table=table)
    words = diff_words(block_text(a), block_text(b))
    return BlockDiff("changed" if words.changed else "same", a, b, words=words)
