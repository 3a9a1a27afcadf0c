"""Abbreviations and the phrases they stand for, as the documents themselves define them (no
Django here).

A document introduces an abbreviation once, in one of two ways, and says it alone after that:

- a phrase, then the abbreviation in brackets: "оплата через систему быстрых платежей (СБП)",
  "Learning management system (LMS)". The abbreviation's letters are the initials of the words
  just before the bracket, read backwards (a word of one or two letters, "и", "of", may stand
  between them: "программа и методика испытаний (ПМИ)"; a hyphenated word gives an initial
  per part);
- the abbreviation, then the phrase in brackets: "ОС (операционная система)", "API
  (программный интерфейс приложения)": a definition in other words, maybe another language,
  so the initials need not match when the bracket holds ``MIN_WORDS`` to ``MAX_WORDS`` words
  starting with a small letter (not a name, a figure, a reference to a picture); they spell it
  otherwise ("LMS (Learning management system)").

A change says one form, the requirement the other: the guided analysis reads both as the same
words (``scenarios.terms.with_abbreviations``). Nothing is listed by hand: an abbreviation no
document defines is a word like any other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

MIN_LETTERS, MAX_LETTERS = 2, 6
MIN_WORDS, MAX_WORDS = 2, 6
_SHORT = rf"[A-ZА-ЯЁ]{{{MIN_LETTERS},{MAX_LETTERS}}}"
_PHRASE_FIRST = re.compile(rf"([^()\n]{{3,160}}?)\s*\(\s*({_SHORT})\s*\)")
_SHORT_FIRST = re.compile(rf"(?<![\w-])({_SHORT})\s*\(\s*([^()\n]{{3,120}}?)\s*\)")
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


@dataclass(frozen=True)
class Abbreviation:
    short: str  # as written: "СБП"
    long: str  # the phrase, as written: "системы быстрых платежей"


def _initials(words: list[str], short: str) -> list[str] | None:
    """The words ending the phrase whose initials spell ``short`` (read backwards), or None."""
    letters = list(short.casefold())
    taken: list[str] = []
    for word in reversed(words):
        if not letters:
            break
        parts = word.split("-")
        initials = [p[0].casefold() for p in parts]
        if initials == letters[-len(initials) :]:
            del letters[-len(initials) :]
            taken.insert(0, word)
        elif len(word) <= 2 and taken:
            taken.insert(0, word)  # a conjunction or preposition between the words
        else:
            return None
    if letters or len(taken) < 2 or len(taken[0]) <= 2:
        return None
    return taken


def _definition(phrase: str) -> bool:
    """A bracket after an abbreviation that defines it: words starting with a small letter."""
    words = phrase.split()
    return (
        MIN_WORDS <= len(words) <= MAX_WORDS
        and phrase[:1].islower()
        and all(_WORD.fullmatch(w.strip(',.;:«»"')) for w in words)
    )


def defined(texts: Iterable[str]) -> list[Abbreviation]:
    """Every abbreviation the texts define (see the module docstring), each pair once."""
    found: dict[tuple[str, str], Abbreviation] = {}
    for text in texts:
        for match in _PHRASE_FIRST.finditer(text):
            words = _WORD.findall(match[1])
            taken = _initials(words, match[2])
            if taken:
                pair = Abbreviation(match[2], " ".join(taken))
                found.setdefault((pair.short, pair.long.casefold()), pair)
        for match in _SHORT_FIRST.finditer(text):
            if _definition(match[2]) or _initials(_WORD.findall(match[2]), match[1]):
                pair = Abbreviation(match[1], " ".join(match[2].split()))
                found.setdefault((pair.short, pair.long.casefold()), pair)
    return list(found.values())
