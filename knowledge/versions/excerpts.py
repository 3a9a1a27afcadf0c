"""A comparison as plain text (Markdown) for answers: the changed sections, each with short
before/after excerpts around its first changes, and a Markdown link to the comparison page (pure
Python)."""

from __future__ import annotations

from knowledge.versions.diff import BlockDiff, DocumentDiff, SectionDiff
from knowledge.versions.sections import block_text
from knowledge.versions.words import EQUAL, WordDiff

EXCERPT = 160  # characters of each before/after excerpt
CONTEXT = 40  # unchanged characters kept before a change
BLOCKS_PER_SECTION = 2
STATUS_WORDS = {"added": "added", "removed": "removed", "changed": "changed", "same": "unchanged"}
# The fixed words of the text, in the language of the question that asked for it.
WORDS = {
    "en": {
        "head": "Changes in «{document}» from version {old} to version {new}: {summary}.",
        "same": "«{document}», version {old} → version {new}: {none}. The two versions have the "
        "same text; only their formatting differs.",
        "none": "No text changes",
        "comparison": "[Open the comparison of the versions]({url})",
        "more_sections": "- … and {rest} more changed sections (see the comparison)",
        "more_paragraphs": "  - … {count} more changed paragraphs",
        "added": "added",
        "removed": "removed",
        "changed": "changed",
        "same_status": "unchanged",
        "before": "before",
        "after": "after",
        "renamed": "renamed from «{title}»",
        "moved": "moved from {where}",
        "preamble": "the preamble",
        "header": "table header changed",
        "row": "table row {number} {status}",
    },
    "ru": {
        "head": "Изменения в «{document}» от версии {old} к версии {new}: {summary}.",
        "same": "«{document}», версия {old} → версия {new}: текст не изменился. Текст двух версий "
        "одинаков, различается только оформление.",
        "none": "текст не изменился",
        "comparison": "[Открыть сравнение версий]({url})",
        "more_sections": "- … и ещё разделов с изменениями: {rest} (см. сравнение)",
        "more_paragraphs": "  - … ещё изменённых абзацев: {count}",
        "added": "добавлен",
        "removed": "удалён",
        "changed": "изменён",
        "same_status": "без изменений",
        "before": "было",
        "after": "стало",
        "renamed": "переименован, было «{title}»",
        "moved": "перенесён из {where}",
        "preamble": "начала документа",
        "header": "изменена шапка таблицы",
        "row": "строка таблицы {number}: {status}",
    },
}


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


def _block_lines(block: BlockDiff, w: dict[str, str]) -> list[str]:
    if block.status == "added":
        return [f"  - {w['added']}: «{_clip(block_text(block.new))}»"]  # type: ignore[arg-type]
    if block.status == "removed":
        return [f"  - {w['removed']}: «{_clip(block_text(block.old))}»"]  # type: ignore[arg-type]
    if block.table is not None:
        return _table_lines(block, w)
    if block.words is None:
        return []
    before, after = _around_change(block.words)
    return [f"  - {w['before']}: «{before}»", f"  - {w['after']}: «{after}»"]


def _table_lines(block: BlockDiff, w: dict[str, str]) -> list[str]:
    table = block.table
    assert table is not None
    lines = []
    if table.header_changed:
        lines.append(f"  - {w['header']}")
    for row in table.rows:
        if row.status == "same":
            continue
        number = row.new_number or row.old_number
        if row.status == "changed":
            cells = [c for c in row.cells if c.changed]
            change = "; ".join(
                "«{}» → «{}»".format(*_around_change(c.words, 70)) for c in cells[:2]
            )
            lines.append(f"  - {w['row'].format(number=number, status=w['changed'])}: {change}")
        else:
            cells = [c.new if row.status == "added" else c.old for c in row.cells]
            head = w["row"].format(number=number, status=w[row.status])
            lines.append(f"  - {head}: «{_clip(' | '.join(filter(None, cells)), 100)}»")
        if len(lines) >= 4:
            break
    return lines


def section_lines(section: SectionDiff, language: str = "en") -> list[str]:
    """One item for a changed section: its name, what happened, and excerpts."""
    w = WORDS.get(language, WORDS["en"])
    status = w["same_status"] if section.status == "same" else w[section.status]
    notes = []
    if section.renamed and section.old is not None:
        notes.append(w["renamed"].format(title=section.old.title))
    if section.moved and section.old is not None:
        notes.append(w["moved"].format(where=section.old.number or w["preamble"]))
    label = section.label
    if language == "ru" and label == "Preamble":
        label = "Начало документа"
    head = f"- **{label}**: {status}"
    if notes:
        head += " (" + ", ".join(notes) + ")"
    lines = [head]
    changed = section.changed_blocks
    for block in changed[:BLOCKS_PER_SECTION]:
        lines += _block_lines(block, w)
    if len(changed) > BLOCKS_PER_SECTION:
        lines.append(w["more_paragraphs"].format(count=len(changed) - BLOCKS_PER_SECTION))
    return lines


def changes_text(
    diff: DocumentDiff,
    *,
    document: str,
    old_label: str,
    new_label: str,
    url: str,
    max_chars: int,
    language: str = "en",
) -> str:
    """The whole comparison as Markdown, cut to ``max_chars`` at a section boundary; its own
    words in ``language`` ("ru" or "en")."""
    w = WORDS.get(language, WORDS["en"])
    summary = diff.summary
    footer = w["comparison"].format(url=url)
    if not summary.text_changed:
        same = w["same"].format(document=document, old=old_label, new=new_label, none=w["none"])
        return f"{same}\n\n{footer}"[:max_chars]
    head = w["head"].format(
        document=document, old=old_label, new=new_label, summary=summary.as_text(language)
    )
    parts = [head]
    used = len(head) + len(footer) + 3
    # The numbered sections first: a preamble (title page, contents) is mostly noise.
    sections = sorted(diff.changed_sections, key=lambda s: s.section.is_preamble)
    for index, section in enumerate(sections):
        text = "\n".join(section_lines(section, language))
        tail = w["more_sections"].format(rest=len(sections) - index)
        if used + len(text) + 1 + len(tail) + 1 > max_chars:
            parts.append(tail)
            break
        parts.append(text)
        used += len(text) + 1
    # A paragraph of its own: right under the list it would continue its last item.
    return ("\n".join(parts) + "\n\n" + footer)[:max_chars]
