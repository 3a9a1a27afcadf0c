"""The query router: filters read from the question, applied in SQL before ranking.

"тест-кейсы из раздела 2.1" -> block types (test_case, table), section 2.1, and the words
left for ranking. Section references, block types, source names and version labels or dates
are recognised in Russian and English; explicit filter parameters take precedence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from knowledge.retrieval.types import Filters
from knowledge.versions.mentions import find_refs, read_dates

__all__ = ["Routed", "read_dates", "route"]

_SECTION = re.compile(
    r"(?:(?:в|из|по|для|of|in|from)\s+)?"
    r"(?:раздел[аеуыо]?м?|подраздел[аеуыо]?м?|пункт[аеуыо]?м?|п\.|пп\.|глав[аеуыо]й?|"
    r"section|clause|chapter|§)\s*(\d+(?:\.\d+)*)\.?",
    re.IGNORECASE,
)
_BLOCK_TYPES: list[tuple[re.Pattern[str], list[str]]] = [
    (
        re.compile(
            r"\b(?:тест[- ]?кейс\w*|тестов\w* случа\w*|тестов\w* сценари\w*|test[- ]?cases?)\b",
            re.I,
        ),
        ["test_case", "table"],
    ),
    (re.compile(r"\b(?:таблиц\w*|tables?)\b", re.I), ["table"]),
    (
        re.compile(
            r"\b(?:пример\w* кода|code (?:samples?|examples?|snippets?)|листинг\w*)\b", re.I
        ),
        ["code"],
    ),
]
# A question about the notion itself ("что такое тест-кейс", "how to write test cases") is
# answered from prose, so naming a block type there is not a filter.
_ABOUT_NOTION = re.compile(
    r"(?:\bчто (?:так\w*|значит|означает)|\bкак\w*(?:\s+\w+)? (?:писать|написать|составить|составлять|"
    r"оформить|оформлять|создать|создавать|вести)|\bзачем\b|\bчем отлича\w*|\bопредели\w*|"
    r"\bwhat (?:is|are|does)\b|\bhow (?:to|do|does|should|can)\b|\bwhy\b|\bdefin\w*)",
    re.IGNORECASE,
)


_LIST_REQUEST = re.compile(
    r"\b(?:покажи\w*|перечисл\w*|список|выведи|вывести|все|всё|всех|list|show|all|every)\b",
    re.IGNORECASE,
)
_FILLER = re.compile(r"\b(?:мне|дай|найди|какие|есть|the|me|what|are|there|find|give|a|an)\b", re.I)


def _has_words(text: str) -> bool:
    """Words left besides fillers and punctuation."""
    return bool(re.search(r"\w{2,}", _FILLER.sub(" ", text)))


@dataclass
class Routed:
    """What the router read from a question."""

    text: str  # the words left for ranking
    filters: Filters
    dates: list[date] = field(default_factory=list)
    version_labels: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def route(question: str, *, source_names: dict[str, int] | None = None) -> Routed:
    """Read filters from ``question``; ``source_names`` maps lower-cased source names to ids."""
    text = question
    filters = Filters()
    notes: list[str] = []
    for m in _SECTION.finditer(question):
        filters.sections.append(m[1].rstrip("."))
    if filters.sections:
        text = _SECTION.sub(" ", text)
        notes.append("section " + ", ".join(filters.sections))
    for pattern, kinds in _BLOCK_TYPES:
        if pattern.search(text) and not _ABOUT_NOTION.search(question):
            rest = pattern.sub(" ", text)
            if not (filters.sections or _LIST_REQUEST.search(question) or _has_words(rest)):
                # "тест-кейс" alone is a topic to search, not a request to list every test
                # case: browsing needs a list request or a section ("тест-кейсы раздела 5").
                break
            filters.block_types.extend(k for k in kinds if k not in filters.block_types)
            # The filter says it now; left in, the words would only favour chunks naming them.
            text = rest
            notes.append("block types " + ", ".join(kinds))
            break  # the most specific type named wins
    for name, source_id in (source_names or {}).items():
        if len(name) >= 3 and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", question, re.I):
            filters.source_ids.append(source_id)
            notes.append(f"source {name}")
    # One reader of version references (knowledge.versions.mentions); an ordinal within a day
    # needs the document's order, which the chat's version answers resolve.
    found = [m.ref for m in find_refs(question)]
    labels = [r.label for r in found if r.label]
    dates = [r.day for r in found if r.day and not r.ordinal]
    leftover = re.sub(r"\s+", " ", text).strip(" ,.;:?!")
    return Routed(
        text=leftover or "", filters=filters, dates=dates, version_labels=labels, notes=notes
    )
