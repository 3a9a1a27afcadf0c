"""The one reader of version references in a whole question: a small grammar over its words,
read by lemma (pure Python; the words are ``version_words``'s classes).

The router, the chat's version answers and the pages all read a question's versions here:

- commit ids ("5e1f0a9"; "0093751" beside a version word) and labels ("v2.3", "версия 2.3");
- dates ("2021-03-17", "17 марта 2021", "6 и 17 марта": ``knowledge.question.dates``);
- an ordinal in a version phrase, in any case and order: "третья редакция от 17 марта", "the
  fourth 2021-03-17 version", "the third commit of that day", "четвёртой и пятой из них",
  "последняя правка того же дня"; with no day, the n-th of the history ("самая первая версия");
- the ends of a history: "последняя", "самая свежая", "текущая", "latest", "the original";
- a neighbour of a version named: "сразу после редакции от 9 ноября", "следующая за ней",
  "предыдущая", "the one right before 5e1f0a9", "the next one".

An ordinal's day is the date of its own phrase; "того же дня", "that day", "из них" point back
at the day named before; an ordinal standing alone ("…а чем она хуже пятой?", "с четвёртой по
шестую") shares the day of the ordinal beside it, or of a date in an earlier sentence that set
the scene ("9 ноября регламент правили пять раз. Сравни четвёртую правку с пятой."). A word that
counts something else ("первый раздел", "the last step") is not a version reference. Each
reference comes with where it stands, so a pair reads in the order written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from knowledge.question import version_phrases as vp
from knowledge.question import version_words as vw
from knowledge.question.dates import date_mentions, read_dates
from knowledge.question.refs import FIRST, LATEST, NEXT, PREVIOUS, VersionRef
from knowledge.question.version_phrases import Word
from knowledge.text import language, nlp

__all__ = ["Mention", "Word", "asks_changes", "find_refs", "names_version", "read_dates"]

_SHA = re.compile(r"(?<![\w/#.-])([0-9a-f]{7,40})(?![\w/-])", re.I)
_LABEL = re.compile(r"\b(?:верси[яиюей]\w*|version|ver\.?|v)\s*(\d+(?:\.\d+){0,3})\b", re.I)
_CHANGE = re.compile(
    r"(изменил|изменени|разниц|различ|отлич|нового|поменял|правк|добавил|удалил|сравн|"
    r"changed|changes|difference|differ|compare|what'?s new|what is new|added|removed)",
    re.IGNORECASE,
)
_NEAR = 30  # characters between a commit id of digits only and a version word


@dataclass(frozen=True)
class Mention:
    """A version reference and where the question says it."""

    start: int
    ref: VersionRef
    text: str


@dataclass
class _Pending:
    start: int
    end: int
    ref: VersionRef
    day_from: int | None = None  # the date item an ordinal took its day from, outside its phrase


def asks_changes(text: str) -> bool:
    """The question asks what changed, what differs or what is new (a version comparison)."""
    return bool(_CHANGE.search(text))


def names_version(words: Sequence[Word]) -> bool:
    """The question names a version ("версия", "редакция", "правка", "commit", ...): a reference
    that finds no version of the document is then a version that does not exist."""
    return any(vp.forms(w) & vw.NAMING_VERSION for w in words)


def words_of(text: str) -> list[Word]:
    """The words of a text read alone (a reading passes its parsed tokens instead)."""
    if language.detect(text) == "ru":
        tokens, _ = nlp.parse(text)
        return [Word(t.start, t.stop, t.text, t.lemma, t.pos) for t in tokens]
    return [Word(s, e, w, w.casefold()) for s, e, w in nlp.tokenize(text)]


def find_refs(text: str, words: Sequence[Word] | None = None) -> list[Mention]:
    """Every version reference of ``text`` in the order written (see the module docstring)."""
    words = vp.merged(list(words) if words is not None else words_of(text))
    atoms = _atoms(text, words)
    grammar = _Grammar(vp.items_of(words, atoms), named=names_version(words), atoms=bool(atoms))
    grammar.read_words()
    grammar.read_days()
    grammar.read_atoms()
    grammar.read_steps()
    return _strongest(sorted(grammar.mentions(text), key=lambda m: m.start))


def _atoms(text: str, words: list[Word]) -> list[vp.Item]:
    """Commit ids, labels and dates: (start, stop) spans of the text with their references."""
    found = [m for m in _SHA.finditer(text) if _is_sha(text, m, words)]
    atoms = [vp.Item("sha", m.start(1), m.end(1), VersionRef(label=m[1].casefold())) for m in found]
    dates = date_mentions(text)
    atoms += [vp.Item("date", s, e, ref) for s, e, ref in dates]
    # "версии 0093751", "версии 6 марта": the number is the id or the date's day, not a label.
    spans = [(a.start, a.stop) for a in atoms]
    for m in _LABEL.finditer(text):
        if not any(s <= m.start(1) < e for s, e in spans):
            atoms.append(vp.Item("label", m.start(), m.end(), VersionRef(label=m[1])))
    return atoms


def _is_sha(text: str, match: re.Match[str], words: list[Word]) -> bool:
    """A commit id: hex letters and digits; one of digits only ("0093751") when a version
    word stands near it or another id beside it has letters (a pair of commits)."""
    token = match[1]
    if any(c.isalpha() for c in token):
        return any(c.isdigit() for c in token)
    near = [w for w in words if w.stop > match.start() - _NEAR and w.start < match.end() + _NEAR]
    if any(vp.forms(w) & (vw.VERSION_NOUNS | vw.SHA_WORDS) for w in near):
        return True
    others = [m[1] for m in _SHA.finditer(text) if m.start() != match.start()]
    return any(any(c.isalpha() for c in t) and any(c.isdigit() for c in t) for t in others)


class _Grammar:
    """The references one question's items make (``find_refs``), read in four passes: the
    ordinal and neighbour words with their phrases, each ordinal's day, the dates, commit ids
    and labels left over, and the steps from a named version to its neighbour."""

    def __init__(self, items: list[vp.Item], *, named: bool, atoms: bool) -> None:
        self.items = items
        self.named = named  # the question names a version
        self.context = named or atoms  # an ordinal standing alone may be a version's
        self.pending: dict[int, _Pending] = {}  # item index -> its reference
        self.steps: list[tuple[int, int, int]] = []  # (word, the reference it moves, +1 | -1)
        self.ordinals: list[tuple[int, vp.Phrase]] = []
        self.claimed: set[int] = set()  # dates a phrase holds: not references of their own

    def read_words(self) -> None:
        items = self.items
        phrases = {
            i: vp.phrase_at(items, i) for i, it in enumerate(items) if it.kind in vp.ORDINAL_KINDS
        }
        phrases = {i: p for i, p in phrases.items() if p.about != "other"}
        sure = any(p.about == "version" and not vp.pointing(items, p) for p in phrases.values())
        for i, item in enumerate(items):
            phrase = phrases.get(i)
            if phrase is None:
                if item.kind in ("after", "before") and self.context:
                    self._neighbour(i)
            elif self._accepted(i, phrase, sure):
                if item.kind == "ord":
                    self.ordinals.append((i, phrase))
                elif item.kind in ("latest", "first"):
                    self._extreme(i, phrase)
                else:
                    self._neighbour(i)

    def _accepted(self, i: int, phrase: vp.Phrase, sure: bool) -> bool:
        """An ordinal standing alone, or one "из них", is a version's only in a question about
        versions, beside a version phrase or after a version named ("вторую из них" after
        "four parts" is not)."""
        if phrase.about == "version" and not vp.pointing(self.items, phrase):
            return True
        return self.context and (sure or vp.antecedent(self.items, i))

    def _neighbour(self, i: int) -> None:
        """A word that names a neighbour: of the reference it governs, else of another
        reference of the question ("предыдущая", "the one before", "перед ней"). "после" or
        "after" a date only in a question that names a version ("после 1 марта" may be a time)."""
        item = self.items[i]
        step = 1 if item.kind in ("next", "after") else -1
        governed = vp.governed(self.items, i)
        exact = governed is not None and self.items[governed].kind in ("sha", "label")
        if governed is not None and (self.named or exact or item.kind in ("prev", "next")):
            self.steps.append((i, governed, step))
            return
        following = vp.next_index(self.items, i)
        then = self.items[following].kind if following is not None else "end"
        if item.kind in ("prev", "next") or then in ("end", "comma", "pron"):
            relative = NEXT if step > 0 else PREVIOUS
            self.pending[i] = _Pending(item.start, item.stop, VersionRef(relative=relative))

    def _extreme(self, i: int, phrase: vp.Phrase) -> None:
        """ "последняя", "самая свежая", "исходная": the end of the history, or of the day its
        phrase names."""
        item, latest = self.items[i], self.items[i].kind == "latest"
        if phrase.date is None:
            ref = VersionRef(relative=LATEST if latest else FIRST)
            self.pending[i] = _Pending(item.start, item.stop, ref)
            return
        date = self.items[phrase.date]
        ref = replace(date.value, ordinal=-1 if latest else 1)
        self.pending[i] = _Pending(item.start, date.stop, ref)
        self.claimed.add(phrase.date)

    def read_days(self) -> None:
        """Each ordinal's day (see the module docstring): its phrase's date, the date named
        before "того же дня", the day of the ordinal beside one standing alone, the date of a
        sentence that set the scene; else the ordinal counts the whole history."""
        days = self._own_days()
        self._shared_days(days)
        scenes = self._scene_dates()
        for i, phrase in self.ordinals:
            if i not in days:
                earlier = [d for d in scenes if self.items[d].sentence < self.items[i].sentence]
                days[i] = (earlier[-1], False) if earlier else (None, False)
            day, same = days[i]
            self.pending[i] = self._ordinal(i, phrase, day, same)
            if day in scenes:
                self.claimed.add(day)  # the scene's date is the ordinals' day, not a version

    def _own_days(self) -> dict[int, tuple[int | None, bool]]:
        """Ordinal -> (the date item of its day, or "the same day as another reference")."""
        days: dict[int, tuple[int | None, bool]] = {}
        for i, phrase in self.ordinals:
            if phrase.date is not None:
                days[i] = (phrase.date, False)
                self.claimed.add(phrase.date)
            elif phrase.same_day is not None:
                before = [j for j in range(i) if self.items[j].kind == "date"]
                days[i] = (before[-1], False) if before else (None, True)
        return days

    def _shared_days(self, days: dict[int, tuple[int | None, bool]]) -> None:
        for i, phrase in self.ordinals:
            if i in days or phrase.about != "elided":
                continue
            earlier = [k for k, _ in self.ordinals if k in days and k < i]
            later = [k for k, _ in self.ordinals if k in days and k > i]
            if earlier or later:
                days[i] = days[earlier[-1] if earlier else later[0]]

    def _scene_dates(self) -> list[int]:
        """Dates in a sentence that names no version of its own ("9 ноября регламент правили
        пять раз."): they may set the day of the ordinals after them."""
        busy = {self.items[i].sentence for i in [*self.pending, *(i for i, _ in self.ordinals)]}
        busy |= {self.items[i].sentence for i, _, _ in self.steps}
        busy |= {a.sentence for a in self.items if a.kind in ("sha", "label")}
        return [
            j
            for j, item in enumerate(self.items)
            if item.kind == "date" and j not in self.claimed and item.sentence not in busy
        ]

    def _ordinal(self, i: int, phrase: vp.Phrase, day: int | None, same: bool) -> _Pending:
        item = self.items[i]
        end = self.items[phrase.end].stop if phrase.end >= i else item.stop
        if day is not None:
            ref = replace(self.items[day].value, ordinal=item.value)
            outside = phrase.date is None
            return _Pending(item.start, end, ref, day_from=day if outside else None)
        if same:
            return _Pending(item.start, end, VersionRef(ordinal=item.value, same_day=True))
        relative = {1: FIRST, -1: LATEST}.get(item.value, "")
        ref = VersionRef(relative=relative) if relative else VersionRef(ordinal=item.value)
        return _Pending(item.start, end, ref)

    def read_atoms(self) -> None:
        for i, item in enumerate(self.items):
            if item.kind in ("date", "sha", "label") and i not in self.claimed:
                self.pending[i] = _Pending(item.start, item.stop, item.value)

    def read_steps(self) -> None:
        """ "сразу после X", "the one before X": X's reference, moved to its neighbour."""
        for i, governed, step in self.steps:
            if governed in self.pending:
                moved = self.pending.pop(governed)
                ref = replace(moved.ref, step=step)
                self.pending[i] = replace(moved, start=self.items[i].start, ref=ref)

    def mentions(self, text: str) -> list[Mention]:
        found = []
        for pending in self.pending.values():
            said = text[pending.start : pending.end]
            if pending.day_from is not None:
                day = self.items[pending.day_from]
                said = f"{said} ({text[day.start : day.stop]})"
            found.append(Mention(pending.start, pending.ref, said))
        return found


def _strongest(mentions: list[Mention]) -> list[Mention]:
    """Two or more commit ids or labels name the versions: dates and words beside them only
    describe those versions ("c41d2b7 и 9b07e3f, оба от 2022-11-08")."""
    exact = [m for m in mentions if m.ref.label and not m.ref.step]
    return exact if len(exact) >= 2 else mentions
