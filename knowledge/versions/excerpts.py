"""A comparison as plain text (Markdown) for answers: the changed sections, each with short
before/after excerpts around its first changes (pure Python)."""

from __future__ import annotations

from knowledge.versions.diff import BlockDiff, DocumentDiff, SectionDiff
from knowledge.versions.sections import block_text
from knowledge.versions.summary import NO_TEXT_CHANGES
from knowledge.versions.words import EQUAL, WordDiff

EXCERPT = 160  # characters of each before/after excerpt
CONTEXT = 40  # unchanged characters kept before a change
BLOCKS_PER_SECTION = 2
STATUS_WORDS = {"added": "added", "removed": "removed", "changed": "changed", "same": "unchanged"}


def _clip(text: str, limit: int = EXCERPT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _around_change(words: WordDiff, limit: int = EXCERPT) -> tuple[str, str]:
    """Before and after texts starting a little before the first change."""
    lead = ""
    for tag, text in words.ops:
        if tag != EQUAL:
            break
        lead += text
    start = max(0, len(lead) - CONTEXT)
    prefix = "…" if start else ""
    before = words.old_text()[start:]
    after = words.new_text()[start:]
    return prefix + _clip(before, limit), prefix + _clip(after, limit)


def _block_lines(block: BlockDiff) -> list[str]:
    if block.status == "added":
        return [f"  - added: «{_clip(block_text(block.new))}»"]  # type: ignore[arg-type]
    if block.status == "removed":
        return [f"  - removed: «{_clip(block_text(block.old))}»"]  # type: ignore[arg-type]
    if block.table is not None:
        return _table_lines(block)
    if block.words is None:
        return []
    before, after = _around_change(block.words)
    return [f"  - before: «{before}»", f"  - after: «{after}»"]


def _table_lines(block: BlockDiff) -> list[str]:
    table = block.table
    assert table is not None
    lines = []
    if table.header_changed:
        lines.append("  - table header changed")
    for row in table.rows:
        if row.status == "same":
            continue
        number = row.new_number or row.old_number
        if row.status == "changed":
            cells = [c for c in row.cells if c.changed]
            change = "; ".join(
                "«{}» → «{}»".format(*_around_change(c.words, 70)) for c in cells[:2]
            )
            lines.append(f"  - table row {number} changed: {change}")
        else:
            cells = [c.new if row.status == "added" else c.old for c in row.cells]
            lines.append(
                f"  - table row {number} {row.status}: «{_clip(' | '.join(filter(None, cells)), 100)}»"
            )
        if len(lines) >= 4:
            break
    return lines


def section_lines(section: SectionDiff) -> list[str]:
    """One item for a changed section: its name, what happened, and excerpts."""
    status = STATUS_WORDS[section.status]
    notes = []
    if section.renamed and section.old is not None:
        notes.append(f"renamed from «{section.old.title}»")
    if section.moved and section.old is not None:
        notes.append(f"moved from {section.old.number or 'the preamble'}")
    head = f"- **{section.label}**: {status}"
    if notes:
        head += " (" + ", ".join(notes) + ")"
    lines = [head]
    changed = section.changed_blocks
    for block in changed[:BLOCKS_PER_SECTION]:
        lines += _block_lines(block)
    if len(changed) > BLOCKS_PER_SECTION:
        lines.append(f"  - … {len(changed) - BLOCKS_PER_SECTION} more changed paragraphs")
    return lines


def changes_text(
    diff: DocumentDiff, *, document: str, old_label: str, new_label: str, url: str, max_chars: int
) -> str:
    """The whole comparison as Markdown, cut to ``max_chars`` at a section boundary."""
    summary = diff.summary
    head = f"Changes in «{document}» from version {old_label} to version {new_label}: {summary.as_text()}."
    if not summary.text_changed:
        text = (
            f"«{document}», version {old_label} → version {new_label}: {NO_TEXT_CHANGES}. "
            f"The two versions have the same text; only their formatting differs.\n"
            f"Comparison: {url}"
        )
        return text[:max_chars]
    footer = f"Comparison: {url}"
    parts = [head]
    used = len(head) + len(footer) + 2
    # The numbered sections first: a preamble (title page, contents) is mostly noise.
    sections = sorted(diff.changed_sections, key=lambda s: s.section.is_preamble)
    for index, section in enumerate(sections):
        text = "\n".join(section_lines(section))
        rest = len(sections) - index
        tail = f"- … and {rest} more changed sections (see the comparison)"
        if used + len(text) + 1 + len(tail) + 1 > max_chars:
            parts.append(tail)
            break
        parts.append(text)
        used += len(text) + 1
    parts.append(footer)
    return "\n".join(parts)[:max_chars]
