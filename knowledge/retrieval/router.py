"""The query router: filters read from the question, applied in SQL before ranking.

"тест-кейсы из раздела 2.1" -> block types (test_case, table), section 2.1, and the words
left for ranking. Section references, block types, source names and version labels or dates
are recognised in Russian and English; explicit filter parameters take precedence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from knowledge.question import Question
from knowledge.question.mentions import read_dates
from knowledge.retrieval.types import Filters
from knowledge.text.words import LIST_WORDS, is_stop

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


def _about_notion(reading: Question) -> bool:
    """A question about the notion itself ("что такое тест-кейс", "how to write test cases",
    "чем отличается ...", "зачем ..."): answered from prose, so naming a block type there is not
    a filter."""
    return reading.kind in ("definition", "procedure", "reason") or reading.focus.asks == "чем"


def _list_request(reading: Question) -> bool:
    return any(t.text.casefold() in LIST_WORDS for t in reading.tokens) or any(
        w in LIST_WORDS for w in reading.text.casefold().split()
    )


def _has_words(text: str) -> bool:
    """Words left besides function words and punctuation."""
    return any(not is_stop(w) for w in re.findall(r"\w{2,}", text.casefold()))


@dataclass
class Routed:
    """What the router read from a question."""

    text: str  # the words left for ranking
    filters: Filters
    dates: list[date] = field(default_factory=list)
    version_labels: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def route(reading: Question, *, source_names: dict[str, int] | None = None) -> Routed:
    """Read filters from a question (its reading: ``knowledge.question``); ``source_names``
    maps lower-cased source names to ids."""
    question = text = reading.text
    filters = Filters()
    notes: list[str] = []
    for m in _SECTION.finditer(question):
        filters.sections.append(m[1].rstrip("."))
    if filters.sections:
        text = _SECTION.sub(" ", text)
        notes.append("section " + ", ".join(filters.sections))
    for pattern, kinds in _BLOCK_TYPES:
        if pattern.search(text) and not _about_notion(reading):
            rest = pattern.sub(" ", text)
            if not (filters.sections or _list_request(reading) or _has_words(rest)):
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
    # The reading's version references; an ordinal within a day, or the version after or
    # before the one named, needs the document's order, which the chat's version answers
    # resolve.
    found = [m.ref for m in reading.versions if not m.ref.step]
    labels = [r.label for r in found if r.label]
    dates = [r.day for r in found if r.day and not r.ordinal]
    leftover = re.sub(r"\s+", " ", text).strip(" ,.;:?!")
    return Routed(
        text=leftover or "", filters=filters, dates=dates, version_labels=labels, notes=notes
    )
