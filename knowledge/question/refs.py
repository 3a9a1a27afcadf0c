"""Reading a version reference a person wrote: a date, a label, or a relative word.

Pure Python: "2021-03-17", "17.03.2021", "17 марта 2021", "6 March 2021", "March 6, 2021",
"17 марта" (no year), "v2.3", "#3", "5e1f0a9", "previous", "latest", "предыдущая",
"последняя", "первая".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Protocol, TypeVar

PREVIOUS, LATEST, FIRST = "previous", "latest", "first"

_RELATIVE = [
    (PREVIOUS, re.compile(r"^(previous|prev|prior|preceding|предыдущ|прошл|прежн|предпоследн)")),
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
    """What a reference names: one of a relative word, a date (year may be unknown), a version
    number (#3), or a label text."""

    relative: str = ""
    day: date | None = None
    month_day: tuple[int, int] | None = None  # a date without its year
    number: int | None = None
    label: str = ""
    ordinal: int = 0  # with a date: the n-th version of that day (1-based; -1 the last)


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


class Versioned(Protocol):
    """What resolving needs of a version (a DocumentVersion has it)."""

    number: int
    label: str
    label_date: date | None


V = TypeVar("V", bound=Versioned)


def resolve(
    found_refs: Sequence[VersionRef], versions: Sequence[V], *, exact: bool = False
) -> list[V]:
    """The versions (oldest first in ``versions``) the references name, in the order given,
    each once; see ``services.resolve_versions`` for the rules. ``exact``: a date names only a
    version of that very day ("the versions of 6 and 17 March" compares two versions), not the
    one in force then ("what did it say on 17 March")."""
    found: list[V | None] = [_absolute(r, versions, exact=exact) for r in found_refs]
    for index, ref in enumerate(found_refs):
        if ref.relative == LATEST:
            found[index] = versions[-1] if versions else None
        elif ref.relative == FIRST:
            found[index] = versions[0] if versions else None
    for index, ref in enumerate(found_refs):
        if ref.relative == PREVIOUS:
            others = [v for k, v in enumerate(found) if k != index and v is not None]
            anchor = others[0] if others else (versions[-1] if versions else None)
            found[index] = _before(anchor, versions)
    result: list[V] = []
    for version in found:
        if version is not None and version not in result:
            result.append(version)
    return result


def _absolute(ref: VersionRef, versions: Sequence[V], *, exact: bool = False) -> V | None:
    if ref.number is not None:
        return next((v for v in versions if v.number == ref.number), None)
    if ref.day is not None:
        # Dates tie (two versions of 2021-03-17): the later in the order is that day's version,
        # unless an ordinal says which; a day no version carries names the one in force then.
        same_day = [v for v in versions if v.label_date == ref.day]
        if ref.ordinal:
            return _nth(same_day, ref.ordinal)
        before = [] if exact else [v for v in versions if v.label_date and v.label_date <= ref.day]
        return (same_day or before or [None])[-1]
    if ref.month_day is not None:
        same = [
            v
            for v in versions
            if v.label_date and (v.label_date.month, v.label_date.day) == ref.month_day
        ]
        if ref.ordinal:
            return _nth(same, ref.ordinal)
        return same[-1] if same else None
    if ref.label:
        matches = [v for v in versions if label_matches(v.label, ref.label)]
        return matches[-1] if matches else None
    return None


def _nth(versions: Sequence[V], ordinal: int) -> V | None:
    """The ordinal-th of one day's versions (1-based; -1 the last), or None past the end."""
    index = ordinal - 1 if ordinal > 0 else len(versions) + ordinal
    return versions[index] if 0 <= index < len(versions) else None


def _before(anchor: V | None, versions: Sequence[V]) -> V | None:
    if anchor is None:
        return None
    earlier = [v for v in versions if v.number < anchor.number]
    return earlier[-1] if earlier else None
