"""The dates a question writes (pure Python): "2021-03-17", "17.03.2021", "17 марта 2021",
"6 March 2021", "March 6, 2021", "6 и 17 марта 2021" (a bare day shares the month), "17 марта"
(the year from another date in the question, else none)."""

from __future__ import annotations

import re
from datetime import date

from knowledge.question.refs import VersionRef, month_number

_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DMY = re.compile(r"\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b")
_MONTH_WORDS = (
    r"январ\w*|феврал\w*|март\w*|апрел\w*|ма[яйе]|июн\w*|июл\w*|август\w*|сентябр\w*|"
    r"октябр\w*|ноябр\w*|декабр\w*|january|february|march|april|may|june|july|august|"
    r"september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}})(?:-?(?:го|е|th|st|nd|rd))?\s+({_MONTH_WORDS})\b\.?(?:\s+(\d{{4}}))?", re.I
)
_MONTH_DAY = re.compile(
    rf"\b({_MONTH_WORDS})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b,?(?:\s+(\d{{4}}))?", re.I
)
_BARE_DAY = re.compile(r"\b(\d{1,2})\s+(?:и|and|по|-|–)\s*$", re.I)
_YEAR = re.compile(r"\b(19\d{2}|20\d{2})\b")


def date_mentions(text: str) -> list[tuple[int, int, VersionRef]]:
    """(start, end, ref) of every date, in order; a year left out is taken from another date."""
    found: list[tuple[int, int, int | None, int, int]] = []  # start, end, year, month, day
    for m in _ISO.finditer(text):
        found.append((m.start(), m.end(), int(m[1]), int(m[2]), int(m[3])))
    for m in _DMY.finditer(text):
        found.append((m.start(), m.end(), int(m[3]), int(m[2]), int(m[1])))
    taken = [(s, e) for s, e, *_ in found]
    for pattern, day_group, month_group in ((_DAY_MONTH, 1, 2), (_MONTH_DAY, 2, 1)):
        for m in pattern.finditer(text):
            if any(s <= m.start() < e for s, e in taken):
                continue
            month = month_number(m[month_group])
            if not month:
                continue
            year = int(m[3]) if m[3] else None
            found.append((m.start(), m.end(), year, month, int(m[day_group])))
            taken.append((m.start(), m.end()))
            bare = _BARE_DAY.search(text[: m.start()])
            if bare:  # "между 6 и 17 марта": the bare day shares the month and year
                found.append((bare.start(), bare.end(), year, month, int(bare[1])))
    years = [y for _, _, y, _, _ in found if y]
    fallback = years[0] if years else (int(_YEAR.search(text)[1]) if _YEAR.search(text) else None)
    out = []
    for start, end, year, month, day in found:
        ref = _as_ref(year or fallback, month, day)
        if ref is not None:
            out.append((start, end, ref))
    return sorted(out, key=lambda item: item[0])


def _as_ref(year: int | None, month: int, day: int) -> VersionRef | None:
    try:
        if year is None:
            date(2000, month, day)  # a leap year: 29 February is a valid month-day
            return VersionRef(month_day=(month, day))
        return VersionRef(day=date(year, month, day))
    except ValueError:
        return None


def read_dates(text: str, default_year: int | None = None) -> list[date]:
    """The dates a question names, in order; a date without a year takes ``default_year``
    (or is left out without one)."""
    out = []
    for _, _, ref in date_mentions(text):
        if ref.day:
            out.append(ref.day)
        elif ref.month_day and default_year:
            out.append(date(default_year, *ref.month_day))
    return out
