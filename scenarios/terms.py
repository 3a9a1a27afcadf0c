"""A change and the documents' statements as weighted terms, through the one reading.

Every text (the change's description, a requirement statement, a test section) is read by
``knowledge.question.read``: its content words as lemmas (the parse's part of speech picks the
lemma), named things (Latin words, abbreviations, figures), the focus. A lemma written with a
hyphen counts for its parts too ("QR-кода" is also "qr"); a name in Latin letters made of
several capitalised words ("Apple Pay") is a term of its own, and each of its words alone
weighs ``NAME_WORD_WEIGHT`` (a change to "Apple Pay" is not a change to everything Apple).
Nouns, names and figures weigh most; adjectives ``ADJECTIVE_WEIGHT``; verbs and adverbs
``OTHER_WEIGHT`` (a requirement is named by its nouns, "оплачивать стоянку картой", more than
its verbs).

``Background`` counts in how many units (statements, test sections) of the documents compared
each lemma occurs: a lemma of most of them ("парковка" in a parking app's documents) says
little, a rare one ("сумма", "квитанция", "минута") says much (local IDF, as
``scenarios.matching``); a rare lemma is in at most ``RARE_SHARE`` of the units.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from knowledge.question import read
from knowledge.text import matching
from knowledge.text.words import is_stop
from scenarios.abbreviations import Abbreviation

ADJECTIVE_WEIGHT = 1.0
OTHER_WEIGHT = 0.5  # verbs, adverbs
NAME_WORD_WEIGHT = 0.3  # a word of a name of several Latin words, alone
HEADLINE_WORDS = 6
RARE_SHARE = 0.2  # a lemma in more of the units than this is the documents' common vocabulary
ABBREVIATION_WEIGHT = 1.0  # of the other form's words, for a change saying one form
_LATIN_NAME = re.compile(r"\b[A-Z][\w.]*(?:[ \t]+[A-Z][\w.]*)+")
_PARTS = re.compile(r"[-/]")


@dataclass(frozen=True)
class Terms:
    """A text's terms: lemma -> weight, and its focus: the nouns of a label before a colon
    ("Экран оплаты: ..."), else the focus of its reading ("Добавить оплату картой ...")."""

    weights: dict[str, float] = field(default_factory=dict)
    focus: frozenset[str] = frozenset()

    def __contains__(self, lemma: str) -> bool:
        return lemma in self.weights


def _add(weights: dict[str, float], lemma: str, weight: float) -> None:
    if lemma and weight > weights.get(lemma, 0.0):
        weights[lemma] = weight


def _parts(lemma: str) -> list[str]:
    """The lemmas of a hyphenated word's parts ("QR-код" -> "qr", "код")."""
    if not _PARTS.search(lemma):
        return []
    found = []
    for part in _PARTS.split(lemma):
        if len(part) > 1 and any(ch.isalpha() for ch in part):
            word = matching.lemma(part)
            if not is_stop(word):
                found.append(word)
    return found


@lru_cache(maxsize=4096)
def read_terms(text: str) -> Terms:
    """The text's terms (see the module docstring)."""
    reading = read(text)
    in_names = {w.casefold() for m in _LATIN_NAME.finditer(text) for w in m[0].split()}
    standalone = {w.casefold() for w in re.findall(r"[A-Za-z][\w.]*", _LATIN_NAME.sub(" ", text))}
    grouped = in_names - standalone
    weights: dict[str, float] = {}
    for name in _LATIN_NAME.finditer(text):
        _add(weights, " ".join(name[0].casefold().split()), 1.0)
    for term in reading.key_terms:
        weight = NAME_WORD_WEIGHT if term.lemma in grouped else _pos_weight(term.pos)
        _add(weights, term.lemma, weight)
        for part in _parts(term.lemma):
            _add(weights, part, weight)
    for thing in reading.named:
        word = thing.casefold()
        if word in grouped or " " in word or not re.match(r"[a-z0-9]", word):
            continue  # Cyrillic names are among the content words already
        _add(weights, word, 1.0)
        for part in re.split(r"[-/.]", word) if not re.fullmatch(r"[\d.,]+", word) else []:
            if len(part) > 1 and part not in grouped:
                _add(weights, part, 1.0)
    focus = _headline(reading.tokens) or {reading.focus.lemma}
    return Terms(weights, frozenset(focus & set(weights)))


def with_abbreviations(terms: Terms, text: str, abbreviations: Iterable[Abbreviation]) -> Terms:
    """The terms of ``text`` with the words of the phrase each abbreviation it says stands for,
    as the documents define them (``scenarios.abbreviations``), at ``ABBREVIATION_WEIGHT``: a
    text saying "СБП" says "система быстрых платежей" too. The change and every statement and
    test are read so, so either form meets the other."""
    weights = dict(terms.weights)
    for abbreviation in abbreviations:
        if not said(abbreviation.short, text):
            continue
        for lemma, weight in read_terms(abbreviation.long).weights.items():
            _add(weights, lemma, ABBREVIATION_WEIGHT * weight)
    return terms if weights == terms.weights else Terms(weights, terms.focus)


def said(short: str, text: str) -> bool:
    """Does ``text`` say the abbreviation as a word of its own? Followed by a figure it is a
    name with a number ("API 26" a level, "ГОСТ 19.201" a standard), not the phrase."""
    return bool(re.search(rf"(?<!\w){re.escape(short)}(?!\w)(?!\s*\d)", text))


def _pos_weight(pos: str) -> float:
    if pos in ("NOUN", "PROPN", "X", "NUM"):
        return 1.0
    return ADJECTIVE_WEIGHT if pos == "ADJ" else OTHER_WEIGHT


def _headline(tokens) -> set[str]:
    """The nouns of a short label (at most ``HEADLINE_WORDS`` words) before a colon ("Экран
    оплаты: ...", "Квитанции: ..."), as tracker tasks name the part they change; none when the
    text has no such label."""
    for index, token in enumerate(tokens[: HEADLINE_WORDS + 1]):
        if token.text == ":":
            return {t.lemma for t in tokens[:index] if t.pos in ("NOUN", "PROPN", "X")}
        if token.text in ".!?\n":
            break
    return set()


@dataclass
class Background:
    """Document frequency of every lemma over the units of the documents compared."""

    df: dict[str, int] = field(default_factory=dict)
    units: int = 0

    @classmethod
    def of(cls, texts: Iterable[Terms]) -> Background:
        found = cls()
        for terms in texts:
            found.units += 1
            for lemma in terms.weights:
                found.df[lemma] = found.df.get(lemma, 0) + 1
        return found

    def idf(self, lemma: str) -> float:
        n, d = max(self.units, 1), self.df.get(lemma, 0)
        return math.log(1 + (n - d + 0.5) / (d + 0.5))

    def is_rare(self, lemma: str) -> bool:
        """In at most ``RARE_SHARE`` of the units (two in a small corpus: a requirement and
        the test that restates it), and in at least one."""
        return 0 < self.df.get(lemma, 0) <= max(2.0, RARE_SHARE * self.units)

    def known(self, lemma: str) -> bool:
        return lemma in self.df


@dataclass
class Match:
    """What a change and a unit share: the lemmas, their weight, the rare ones among them."""

    score: float = 0.0
    shared: list[str] = field(default_factory=list)  # heaviest first
    anchors: list[str] = field(default_factory=list)  # the rare nouns, names and adjectives

    def __bool__(self) -> bool:
        return bool(self.shared)


def match(
    change: Terms,
    unit: Terms,
    background: Background,
    *,
    scale: float = 1.0,
    ignore: frozenset[str] = frozenset(),
) -> Match:
    """The weighted overlap of the change's terms with a unit's (a statement, a section);
    the lemmas in ``ignore`` (the product's name) count for nothing."""
    weights = {
        lemma: weight * background.idf(lemma) * scale
        for lemma, weight in change.weights.items()
        if lemma in unit.weights and lemma not in ignore
    }
    shared = sorted(weights, key=lambda lemma: -weights[lemma])
    anchors = [
        lemma
        for lemma in shared
        if background.is_rare(lemma) and change.weights[lemma] > OTHER_WEIGHT
    ]
    return Match(sum(weights.values()), shared, anchors)
