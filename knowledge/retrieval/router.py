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
_MONTHS = {
    "январ": 1,
    "феврал": 2,
    "март": 3,
    "апрел": 4,
    "ма": 5,
    "июн": 6,
    "июл": 7,
    "август": 8,
    "сентябр": 9,
    "октябр": 10,
    "ноябр": 11,
    "декабр": 12,
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "may": 5,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DMY_DATE = re.compile(r"\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b")
_WORD_DATE = re.compile(
    r"\b(\d{1,2})\s+(январ\w*|феврал\w*|март\w*|апрел\w*|ма[яй]\w*|июн\w*|июл\w*|август\w*|"
    r"сентябр\w*|октябр\w*|ноябр\w*|декабр\w*|january|february|march|april|may|june|july|"
    r"august|september|october|november|december)(?:\s+(\d{4}))?",
    re.IGNORECASE,
)
_VERSION_LABEL = re.compile(r"\b(?:верси[яиюей]\w*|version|ver\.?|v)\s*(\d+(?:\.\d+){0,3})\b", re.I)


@dataclass
class Routed:
    """What the router read from a question."""

    text: str  # the words left for ranking
    filters: Filters
    dates: list[date] = field(default_factory=list)
    version_labels: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _month(word: str) -> int | None:
    lowered = word.lower()
    for prefix, number in sorted(_MONTHS.items(), key=lambda kv: -len(kv[0])):
        if lowered.startswith(prefix):
            return number
    return None


def read_dates(text: str, default_year: int | None = None) -> list[date]:
    """Dates named in a question: 2019-05-04, 04.05.2019, "4 мая 2019", "4 и 14 мая 2019"."""
    found: list[tuple[int, date]] = []
    for m in _ISO_DATE.finditer(text):
        found.append((m.start(), _safe_date(int(m[1]), int(m[2]), int(m[3]))))
    for m in _DMY_DATE.finditer(text):
        found.append((m.start(), _safe_date(int(m[3]), int(m[2]), int(m[1]))))
    for m in _WORD_DATE.finditer(text):
        month = _month(m[2])
        year = int(m[3]) if m[3] else _year_after(text, m.end()) or default_year
        if month and year:
            found.append((m.start(), _safe_date(year, month, int(m[1]))))
            # "между 4 и 14 мая": a bare day before "и" shares the month.
            before = text[: m.start()]
            bare = re.search(r"\b(\d{1,2})\s+(?:и|and|по|-|–)\s*$", before)
            if bare:
                found.append((bare.start(), _safe_date(year, month, int(bare[1]))))
    return [d for _, d in sorted(found, key=lambda item: item[0]) if d is not None]


def _year_after(text: str, position: int) -> int | None:
    match = re.search(r"\b(\d{4})\b", text[position:])
    return int(match[1]) if match else None


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


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
            filters.block_types.extend(k for k in kinds if k not in filters.block_types)
            # The filter says it now; left in, the words would only favour chunks naming them.
            text = pattern.sub(" ", text)
            notes.append("block types " + ", ".join(kinds))
            break  # the most specific type named wins
    for name, source_id in (source_names or {}).items():
        if len(name) >= 3 and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", question, re.I):
            filters.source_ids.append(source_id)
            notes.append(f"source {name}")
    labels = [m[1] for m in _VERSION_LABEL.finditer(question)]
    dates = read_dates(question)
    leftover = re.sub(r"\s+", " ", text).strip(" ,.;:?!")
    return Routed(
        text=leftover or "", filters=filters, dates=dates, version_labels=labels, notes=notes
    )
