"""Version references resolved against one document's versions, and a version named back the
way the references name it (pure Python).

The references of one question resolve against each other: an ordinal "of that day" counts in
the day of the version another reference names, "the previous" and "the next" are neighbours
of another one. A reference that names no version, or several equally ("17 марта" in two
years), resolves to none, with the versions it could mean (``Resolved.candidates``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Generic, Protocol, TypeVar

from knowledge.question.refs import FIRST, LATEST, NEXT, PREVIOUS, VersionRef, label_matches

NEAREST = 2  # a day without a version: this many versions on either side are offered


class Versioned(Protocol):
    """What resolving needs of a version (a DocumentVersion has it)."""

    number: int
    label: str
    label_date: date | None


V = TypeVar("V", bound=Versioned)


@dataclass(frozen=True)
class Resolved(Generic[V]):
    """The version one reference names, or none: then the versions it could mean, and whether
    it names several of them equally (else it names none that exists)."""

    version: V | None = None
    candidates: tuple[V, ...] = ()
    several: bool = False


def resolve_each(
    found_refs: Sequence[VersionRef], versions: Sequence[V], *, exact: bool = False
) -> list[Resolved[V]]:
    """One ``Resolved`` per reference, in the order given; ``versions`` oldest first.

    A date names that day's version (the last of the day when it has several, unless an
    ordinal says which), or with ``exact`` False the version in force then ("what did it say on
    17 March"; ``exact``: "the versions of 6 and 17 March" compares two versions of those
    days). A label or a commit id names the version carrying it; "latest"/"first" the ends of
    the history; an ordinal without a day the n-th of the history. Then, against the others:
    an ordinal of "the same day" counts in the day of the first other version found; a step
    moves from the version found; "previous"/"next" are the neighbours of the first other
    version found ("previous" alone: before the latest).
    """
    found = [_absolute(ref, versions, exact=exact) for ref in found_refs]
    for index, ref in enumerate(found_refs):
        if ref.same_day:
            day = next((v.label_date for v in _others(found, index) if v.label_date), None)
            found[index] = _of_day(day, ref.ordinal, versions) if day else Resolved()
    for index, ref in enumerate(found_refs):
        version = found[index].version
        if ref.step and version is not None:
            found[index] = _step(version, ref.step, versions)
    for index, ref in enumerate(found_refs):
        if ref.relative in (PREVIOUS, NEXT) and not _named(ref):
            others = _others(found, index)
            anchor = others[0] if others else None
            if anchor is None and ref.relative == PREVIOUS and versions:
                anchor = versions[-1]
            step = -1 if ref.relative == PREVIOUS else 1
            found[index] = _step(anchor, step, versions) if anchor is not None else Resolved()
    return found


def resolve(
    found_refs: Sequence[VersionRef], versions: Sequence[V], *, exact: bool = False
) -> list[V]:
    """The versions the references name (``resolve_each``), in the order given, each once;
    references that name none are left out."""
    result: list[V] = []
    for resolved in resolve_each(found_refs, versions, exact=exact):
        if resolved.version is not None and resolved.version not in result:
            result.append(resolved.version)
    return result


def _named(ref: VersionRef) -> bool:
    return bool(ref.day or ref.month_day or ref.number is not None or ref.label or ref.same_day)


def _others(found: list[Resolved[V]], index: int) -> list[V]:
    return [r.version for k, r in enumerate(found) if k != index and r.version is not None]


def _absolute(ref: VersionRef, versions: Sequence[V], *, exact: bool) -> Resolved[V]:
    """What a reference names by itself (nothing yet for one that needs another)."""
    if ref.number is not None:
        return Resolved(next((v for v in versions if v.number == ref.number), None))
    if ref.day is not None:
        if ref.ordinal or exact or any(v.label_date == ref.day for v in versions):
            return _of_day(ref.day, ref.ordinal, versions)
        # A day no version carries names the one in force then.
        before = [v for v in versions if v.label_date and v.label_date <= ref.day]
        return Resolved(before[-1]) if before else Resolved(candidates=_nearest(ref.day, versions))
    if ref.month_day is not None:
        return _of_month_day(ref.month_day, ref.ordinal, versions)
    if ref.label:
        matches = tuple(v for v in versions if label_matches(v.label, ref.label))
        if len(matches) == 1:
            return Resolved(matches[0])
        return Resolved(candidates=matches, several=len(matches) > 1)
    if ref.same_day or not versions:
        return Resolved()
    if ref.relative == LATEST:
        return Resolved(versions[-1])
    if ref.relative == FIRST:
        return Resolved(versions[0])
    if ref.ordinal:
        return _nth(tuple(versions), ref.ordinal)
    return Resolved()


def _of_day(day: date, ordinal: int, versions: Sequence[V]) -> Resolved[V]:
    """The ordinal-th version of the day (the last without an ordinal)."""
    same_day = tuple(v for v in versions if v.label_date == day)
    if not same_day:
        return Resolved(candidates=_nearest(day, versions))
    return _nth(same_day, ordinal or -1)


def _of_month_day(month_day: tuple[int, int], ordinal: int, versions: Sequence[V]) -> Resolved[V]:
    """A date without its year: the one year's version; several years' are several equally."""
    days = sorted(
        {v.label_date for v in versions if v.label_date and _md(v.label_date) == month_day}
    )
    picks = [r.version for r in (_of_day(d, ordinal, versions) for d in days) if r.version]
    if len(picks) == 1:
        return Resolved(picks[0])
    return Resolved(candidates=tuple(picks), several=len(picks) > 1)


def _md(day: date) -> tuple[int, int]:
    return day.month, day.day


def _nth(pool: tuple[V, ...], ordinal: int) -> Resolved[V]:
    """The ordinal-th of the pool (1-based; -1 the last), or none, with the pool to choose from."""
    index = ordinal - 1 if ordinal > 0 else len(pool) + ordinal
    if 0 <= index < len(pool):
        return Resolved(pool[index])
    return Resolved(candidates=pool)


def _step(version: V, step: int, versions: Sequence[V]) -> Resolved[V]:
    order = [v.number for v in versions]
    index = order.index(version.number) + step if version.number in order else -1
    if 0 <= index < len(versions):
        return Resolved(versions[index])
    return Resolved(candidates=(version,))


def _nearest(day: date, versions: Sequence[V]) -> tuple[V, ...]:
    """The versions dated just before and just after a day."""
    dated = [v for v in versions if v.label_date]
    before = [v for v in dated if v.label_date < day][-NEAREST:]
    after = [v for v in dated if v.label_date > day][:NEAREST]
    return tuple(before + after)


@dataclass(frozen=True)
class Place:
    """Where a version stands, to name it back: its day, its place among that day's versions
    (0 when it is the day's only one), its label without the date ("30e82c5", "v2.3"), and
    whether it is the newest or the oldest of its document."""

    day: date | None
    ordinal: int
    tag: str
    latest: bool
    first: bool


def place(version: V, versions: Sequence[V]) -> Place:
    """How to name ``version`` among ``versions`` (oldest first)."""
    day = version.label_date
    same_day = [v.number for v in versions if day and v.label_date == day]
    ordinal = same_day.index(version.number) + 1 if len(same_day) > 1 else 0
    words = (version.label or "").split()
    tag = " ".join(w for w in words if not day or w != day.isoformat())
    several = len(versions) > 1
    return Place(
        day=day,
        ordinal=ordinal,
        tag=tag,
        latest=several and version.number == versions[-1].number,
        first=several and version.number == versions[0].number,
    )
