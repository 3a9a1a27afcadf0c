"""The one reader of version references in a whole question (pure Python).

The router, the chat's version answers and the pages all read a question's versions here:

- commit shas ("5e1f0a9", "c41d2b7") and labels ("v2.3", "версия 2.3"): these win over words;
- dates: "2021-03-17", "17.03.2021", "17 марта 2021", "6 March 2021", "March 6, 2021", "6 и 17
  марта 2021" (a bare day shares the month), "17 марта" (the year from another date in the
  question);
- ordinals within one day: "первая/вторая/третья/последняя версия от 17 марта", "вторая правка
  того же дня", "the second 2023-12-27 version": each ordinal takes the date it introduces,
  else the nearest;
- relative words without a date: "предыдущая", "последняя", "первая", "previous", "latest".

Each reference comes with its position, so a pair reads in the order it was written. Besides
the references: whether the question asks what changed (``asks_changes``) and whether it says
"version", "revision" or "commit" at all (``names_version``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date

from knowledge.question.refs import FIRST, LATEST, PREVIOUS, VersionRef, month_number

_SHA = re.compile(r"(?<![\w/#.-])([0-9a-f]{7,40})(?![\w/-])", re.I)
_LABEL = re.compile(r"\b(?:верси[яиюей]\w*|version|ver\.?|v)\s*(\d+(?:\.\d+){0,3})\b", re.I)
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
_ORDINALS = [
    (1, r"перв\w*|first"),
    (2, r"втор\w*|second"),
    (3, r"трет\w*|third"),
    (4, r"четв[её]рт\w*|fourth"),
    (-1, r"последн\w*|last"),
]
_ORDINAL = re.compile(r"\b(" + "|".join(pattern for _, pattern in _ORDINALS) + r")\b", re.I)
_VERSION_WORD = re.compile(r"верси|редакц|version|revision|commit|коммит", re.I)
_CHANGE = re.compile(
    r"(изменил|изменени|разниц|различ|отлич|нового|поменял|правк|добавил|удалил|сравн|"
    r"changed|changes|difference|differ|compare|what'?s new|what is new|added|removed)",
    re.IGNORECASE,
)
_SHA_WORD = re.compile(r"\b(?:sha|hash|хеш|хэш|ревизи\w*)\b", re.I)
_SAME_DAY = re.compile(r"того же дня|тот же день|same day|that day", re.I)
_RELATIVE = [
    (PREVIOUS, re.compile(r"\b(предыдущ\w*|прошл\w*|прежн\w*|previous|prior)\b", re.I)),
    (
        LATEST,
        re.compile(r"\b(последн\w*|текущ\w*|актуальн\w*|свеж\w*|latest|newest|current)\b", re.I),
    ),
    (FIRST, re.compile(r"\b(перв\w* верси\w*|исходн\w*|first version|original)\b", re.I)),
]
_NEAR = 30  # characters between an ordinal and a version word for it to be about versions
# An ordinal and the date it introduces: "третьей редакцией от ", "first version of ", "second ".
_ATTACHED = re.compile(r"\w+\s+(?:\w+\s+)?(?:(?:от|of|from|dated)\s+)?", re.I)


@dataclass(frozen=True)
class Mention:
    """A version reference and where the question says it."""

    start: int
    ref: VersionRef
    text: str


def _date_mentions(text: str) -> list[tuple[int, int, VersionRef]]:
    """(start, end, ref) of every date; a year left out is taken from another date."""
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


def _ordinals(text: str) -> list[tuple[int, int]]:
    """(position, ordinal) of ordinal words that are about a version."""
    found = []
    for m in _ORDINAL.finditer(text):
        window = text[max(0, m.start() - _NEAR) : m.end() + _NEAR]
        if not _VERSION_WORD.search(window):
            continue
        word = m[1].casefold()
        for value, pattern in _ORDINALS:
            if re.fullmatch(pattern, word, re.I):
                found.append((m.start(), value))
                break
    return found


def find_refs(text: str) -> list[Mention]:
    """Every version reference of ``text`` in the order written (see the module docstring)."""
    mentions: list[Mention] = []
    shas = [m for m in _SHA.finditer(text) if _is_sha(text, m, _SHA.finditer(text))]
    for m in shas:
        mentions.append(Mention(m.start(), VersionRef(label=m[1].casefold()), m[1]))
    dates = _date_mentions(text)
    # "версии 0041435", "версии 6 марта": the number is the id or the date's day, not a label.
    spans = [(m.start(1), m.end(1)) for m in shas] + [(s, e) for s, e, _ in dates]
    for m in _LABEL.finditer(text):
        if not any(s <= m.start(1) < e for s, e in spans):
            mentions.append(Mention(m.start(), VersionRef(label=m[1]), m[0]))
    ordinals = _ordinals(text)
    claimed: set[int] = set()
    taken: set[int] = set()
    for position, ordinal in ordinals:
        nearest = _date_for(text, position, dates)
        if nearest is None:
            # No date of its own: "первая"/"последняя" are the first and the latest version.
            relative = {1: FIRST, -1: LATEST}.get(ordinal)
            if relative:
                mentions.append(Mention(position, VersionRef(relative=relative), ""))
                taken.add(position)
            continue
        claimed.add(nearest[0])
        taken.add(position)
        mentions.append(
            Mention(position, replace(nearest[2], ordinal=ordinal), text[position : nearest[1]])
        )
    for start, end, ref in dates:
        if start not in claimed:
            mentions.append(Mention(start, ref, text[start:end]))
    for word, pattern in _RELATIVE:
        for m in pattern.finditer(text):
            if m.start() not in taken:
                mentions.append(Mention(m.start(), VersionRef(relative=word), m[0]))
                taken.add(m.start())
    mentions.sort(key=lambda m: m.start)
    return _strongest(mentions)


def asks_changes(text: str) -> bool:
    """The question asks what changed, what differs or what is new (a version comparison)."""
    return bool(_CHANGE.search(text))


def names_version(text: str) -> bool:
    """The question says "version", "revision" or "commit" (a reference that finds no version
    of the document is then a version that does not exist, not some other figure)."""
    return bool(_VERSION_WORD.search(text))


def _is_sha(text: str, match: re.Match[str], others) -> bool:
    """A commit id: hex letters and digits; one of digits only ("0041435") when a version
    word stands near it or another id beside it has letters (a pair of commits)."""
    token = match[1]
    if any(c.isalpha() for c in token):
        return any(c.isdigit() for c in token)
    window = text[max(0, match.start() - _NEAR) : match.end() + _NEAR]
    if _VERSION_WORD.search(window) or _SHA_WORD.search(window):
        return True
    return any(m is not match and any(c.isalpha() for c in m[1]) for m in others)


def _date_for(text: str, position: int, dates: list) -> tuple[int, int, VersionRef] | None:
    """The date an ordinal belongs to: the previous one for "того же дня", else the nearest
    within a few words."""
    if not dates:
        return None
    if _SAME_DAY.search(text[position : position + 30]):
        before = [d for d in dates if d[0] < position]
        return before[-1] if before else None
    # "третьей редакцией от 2 июня", "the first version of 2021-03-01": the date it introduces.
    following = [d for d in dates if d[0] > position and _ATTACHED.fullmatch(text[position : d[0]])]
    if following:
        return following[0]
    distance = lambda d: min(abs(d[0] - position), abs(d[1] - position))  # noqa: E731
    nearest = min(dates, key=distance)
    return nearest if distance(nearest) <= 2 * _NEAR else None


def _strongest(mentions: list[Mention]) -> list[Mention]:
    """Two or more shas or labels name the versions: dates and words beside them only
    describe those versions ("c41d2b7 и 9b07e3f, оба от 2022-11-08")."""
    exact = [m for m in mentions if m.ref.label]
    return exact if len(exact) >= 2 else mentions


def read_dates(text: str, default_year: int | None = None) -> list[date]:
    """The dates a question names, in order; a date without a year takes ``default_year``
    (or is left out without one)."""
    out = []
    for _, _, ref in _date_mentions(text):
        if ref.day:
            out.append(ref.day)
        elif ref.month_day and default_year:
            out.append(date(default_year, *ref.month_day))
    return out
