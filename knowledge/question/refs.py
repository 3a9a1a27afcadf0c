"""What a version reference names (``VersionRef``), and one reference a person wrote read
alone (``parse_ref``: the version pages, ``services.resolve_versions``).

Pure Python: "2021-03-17", "17.03.2021", "17 марта 2021", "6 March 2021", "March 6, 2021",
"17 марта" (no year), "v2.3", "#3", "5e1f0a9", "previous", "next", "latest", "предыдущая",
"последняя", "первая". The references of a whole question are read by
``knowledge.question.mentions``, and resolved against a document's versions by
``knowledge.question.resolving``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

PREVIOUS, NEXT, LATEST, FIRST = "previous", "next", "latest", "first"

_RELATIVE = [
    (PREVIOUS, re.compile(r"^(previous|prev|prior|preceding|предыдущ|прошл|прежн|предпоследн)")),
    (NEXT, re.compile(r"^(next|following|следующ|последующ)")),
    (
        LATEST,
        re.compile(r"^(latest|last|newest|current|most recent|последн|текущ|нове|свеж|актуальн)"),
    ),
    (
        FIRST,
        re.compile(r"^(first|oldest|earliest|original|initial|перв|исходн|самая ранн|старейш)"),
    ),
]

MONTHS = {
    "январ": 1, "феврал": 2, "март": 3, "апрел": 4, "ма": 5, "июн": 6, "июл": 7, "август": 8,
    "сентябр": 9, "октябр": 10, "ноябр": 11, "декабр": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
    "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip

_ISO = re.compile(r"^(\d{4})[-_./](\d{1,2})[-_./](\d{1,2})$")
_DMY = re.compile(r"^(\d{1,2})[./](\d{1,2})[./](\d{4})$")
_DAY_MONTH = re.compile(
    r"^(\d{1,2})(?:-?(?:го|е|th|st|nd|rd))?\s+([^\W\d_]+)\.?(?:\s+(\d{4}))?(?:\s*(?:г|года|year)\.?)?$"
)
_MONTH_DAY = re.compile(r"^([^\W\d_]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?(?:\s+(\d{4}))?$")
_NUMBER = re.compile(r"^(?:#|№\s*|no\.?\s*)(\d+)$")
_LABEL_PREFIX = re.compile(
    r"^(?:version|versions|версия|версии|версией|вер\.?|ред\.?|редакция)\s+", re.I
)


@dataclass(frozen=True)
class VersionRef:
    """What a reference names: a relative word, a date (year may be unknown), a version number
    (#3) or a label text; an ordinal within a day or within the whole history; a step from
    the version the rest names."""

    relative: str = ""  # latest | first (of the history) | previous | next (of another one)
    day: date | None = None
    month_day: tuple[int, int] | None = None  # a date without its year
    number: int | None = None
    label: str = ""
    # The n-th version (1-based; -1 the last, -2 the one before it) of the day named, of the
    # day of another reference of the question (``same_day``), or, with neither, of the history.
    ordinal: int = 0
    same_day: bool = False  # "четвёртой правки того же дня" after a commit id: that commit's day
    step: int = 0  # +1 the version right after the one the rest names, -1 the one right before


def month_number(word: str) -> int | None:
    word = word.casefold()
    if word.startswith("ма") and not word.startswith(("мар", "may")):
        return 5 if word in ("мая", "май", "мае", "маю", "маем") else None
    for stem, month in MONTHS.items():
        if stem != "ма" and word.startswith(stem):
            return month
    return None


def _date(year: int | None, month: int, day: int) -> tuple[date | None, tuple[int, int] | None]:
    try:
        if year is None:
            date(2000, month, day)  # leap year: 29 February is a valid month-day
            return None, (month, day)
        return date(year, month, day), None
    except ValueError:
        return None, None


def parse_ref(ref: str | date) -> VersionRef:
    """Classify one reference; an unreadable one becomes a label to match as text."""
    if isinstance(ref, date):
        return VersionRef(day=ref)
    text = " ".join(str(ref).split()).strip().strip("«»\"'").strip()
    low = _LABEL_PREFIX.sub("", re.sub(r"^(?:the|a)\s+", "", text.casefold()))
    for word, pattern in _RELATIVE:
        if pattern.match(low):
            return VersionRef(relative=word)
    found = _ISO.match(low)
    if found:
        day, _ = _date(int(found[1]), int(found[2]), int(found[3]))
        if day:
            return VersionRef(day=day)
    found = _DMY.match(low)
    if found:
        day, _ = _date(int(found[3]), int(found[2]), int(found[1]))
        if day:
            return VersionRef(day=day)
    for pattern, day_group, month_group in ((_DAY_MONTH, 1, 2), (_MONTH_DAY, 2, 1)):
        found = pattern.match(low)
        month = month_number(found[month_group]) if found else None
        if found and month:
            year = int(found[3]) if found[3] else None
            day, month_day = _date(year, month, int(found[day_group]))
            if day or month_day:
                return VersionRef(day=day, month_day=month_day)
    found = _NUMBER.match(low)
    if found:
        return VersionRef(number=int(found[1]))
    return VersionRef(label=_LABEL_PREFIX.sub("", text))


def label_matches(label: str, wanted: str) -> bool:
    """A label names the wanted text: equal ignoring case and a leading v ("2.3" = "v2.3"), or
    one of its words is the wanted tag ("5e1f0a9" in "2021-03-17 5e1f0a9")."""
    a, b = label.casefold().strip(), wanted.casefold().strip()
    if not a or not b:
        return False
    if a == b or a.lstrip("v") == b.lstrip("v"):
        return True
    return len(b) >= 4 and b in a.split()
