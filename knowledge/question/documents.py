"""Which document a question names, by the words of its title (pure Python): the named
document of a question's reading.

A document is known by its title, its path and the opening of its current version (a title
page or introduction says "Программа и методика испытаний", "Code of Conduct"). GOST document
types are often named by abbreviation: "ПМИ" in a file name and "программа и методика
испытаний" in a question are the same name. Words are compared by their name stem
(``knowledge.text.matching.name_stems``), weighted by how few candidate documents share
them.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from knowledge.text.matching import ABBREVIATIONS, NAME_WORD, name_stems


@dataclass
class Candidate:
    key: int  # the document's primary key
    title: str  # title and path
    opening: str  # the first blocks of the current version
    _names: tuple[set[str], set[str]] | None = field(default=None, repr=False, compare=False)

    def names(self) -> tuple[set[str], set[str]]:
        """Stems of the document's name (title, path, their abbreviations spelled out) and of
        its opening text; computed once."""
        if self._names is None:
            title = " ".join([self.title, *_expansions(self.title)])
            names = set(name_stems(title, minimum=2)) | acronyms(self.title)
            self._names = (names, set(name_stems(self.opening)))
        return self._names


@dataclass(frozen=True)
class DocumentNames:
    """How a question names documents, read once (``Question.documents``): what both ways of
    finding the named document (``knowledge.finder.find_document``) start from."""

    stems: frozenset[str] = frozenset()  # name stems of its words (``name_stems``, 2+ letters)
    types: tuple[str, ...] = ()  # the GOST document types it names by abbreviation, spelled out
    phrases: tuple[str, ...] = ()  # the document types it spells out or abbreviates
    text: str = ""  # the question as written: an alias staff gave a document is a word of it

    @property
    def outright(self) -> bool:
        """Does the question name a document by a type abbreviation ("по ТЗ", "в ПЗ",
        "по техзаданию")? Spelled-out types do not count: "как писать техническое задание"
        asks about a topic, not about one document."""
        return bool(self.types)


def document_names(question: str) -> DocumentNames:
    """The question's ``DocumentNames``."""
    return DocumentNames(
        frozenset(name_stems(question, minimum=2)),
        tuple(_abbreviations_used(question)),
        tuple(_phrases(question)),
        question,
    )


def aliased(names: DocumentNames, aliases: Iterable[tuple[int, str]]) -> int | None:
    """The key of the one document whose alias staff gave it (``aliases``: key, its aliases
    comma-separated) the question uses as a word; None when none does, or several."""
    hits = {
        key
        for key, listed in aliases
        for alias in (a.strip() for a in (listed or "").split(","))
        if alias and re.search(rf"(?<!\w){re.escape(alias)}(?!\w)", names.text, re.IGNORECASE)
    }
    return hits.pop() if len(hits) == 1 else None


_SMALL_WORDS = {"of", "and", "the", "for", "to", "in", "on", "и", "в", "на", "по", "для", "о"}


def acronyms(title: str) -> set[str]:
    """The abbreviations a title's words make: the initials of each run of two or more of its
    words, with and without their small words ("Code of Conduct" -> "coc", "cc"; "Python Code
    of Conduct" -> "pcoc", "pcc")."""
    words = [w.casefold() for w in re.findall(r"[^\W\d_]+", title)]
    found: set[str] = set()
    for start in range(len(words)):
        for stop in range(start + 2, min(len(words), start + 6) + 1):
            run = words[start:stop]
            if run[0] in _SMALL_WORDS or run[-1] in _SMALL_WORDS:
                continue
            found.add("".join(w[0] for w in run))
            found.add("".join(w[0] for w in run if w not in _SMALL_WORDS))
    return {a for a in found if len(a) >= 2}


def _abbreviations_used(text: str) -> list[str]:
    """The abbreviations a text uses, as what they stand for ("по техзаданию" counts)."""
    words = {w.casefold() for w in NAME_WORD.findall(text)}
    return [
        full
        for short, full in ABBREVIATIONS.items()
        if short in words or (len(short) > 6 and any(w.startswith(short[:-2]) for w in words))
    ]


def _expansions(text: str) -> list[str]:
    return _abbreviations_used(text)


def _phrases(question: str) -> list[str]:
    """Abbreviations the question spells out or uses."""
    asked = set(name_stems(question, minimum=2))
    used = _abbreviations_used(question)
    return [
        full
        for full in dict.fromkeys(ABBREVIATIONS.values())
        if full in used or set(name_stems(full)) <= asked
    ]


def named_by_abbreviation(names: DocumentNames, candidates: Iterable[Candidate]) -> list[Candidate]:
    """The candidates whose name is what an abbreviation of the question stands for."""
    wanted = [set(name_stems(full)) for full in names.types]
    return [c for c in candidates if any(w <= c.names()[0] for w in wanted)]


def name_patterns(names: DocumentNames) -> list[str] | None:
    """Lower-case substrings (ё as е), at least one of which the title, path and aliases of
    every document ``named_by_abbreviation`` can pick hold: the first stem of each document
    type the question names by abbreviation, and the abbreviations that stand for a phrase
    with that stem. The database filters with them so that only those documents are read and
    stemmed here (every document of the knowledge base was, for each such question); the pick
    itself is unchanged. None: no filter can be made."""
    patterns: set[str] = set()
    for full in names.types:
        wanted = name_stems(full)
        if not wanted:
            return None  # an empty name fits every document
        patterns.add(wanted[0])
        for short, expansion in ABBREVIATIONS.items():
            if wanted[0] in name_stems(expansion, minimum=2):
                patterns.add(short if len(short) <= 6 else short[:-2])
    return sorted(patterns)


def best_candidate(names: DocumentNames, candidates: Iterable[Candidate]) -> int | None:
    """The key of the document the question names, or None when none (or several) fits."""
    candidates = list(candidates)
    asked = names.stems
    if not asked or not candidates:
        return None
    known = [c.names() for c in candidates]
    df: Counter[str] = Counter()
    for title, opening in known:
        df.update(title | opening)
    phrases = names.phrases
    scored = []
    for candidate, (title, opening) in zip(candidates, known, strict=True):
        score = 0.0
        for s in asked:
            idf = math.log(1 + len(candidates) / (1 + df[s])) + 0.1
            if s in title:
                score += 3 * idf
            elif s in opening:
                score += idf
        for phrase in phrases:
            phrase_stems = set(name_stems(phrase))
            if phrase_stems <= title:
                score += 8
            elif phrase_stems <= opening:
                score += 2
        scored.append((score, candidate.key))
    scored.sort(reverse=True)
    best_score, best_key = scored[0]
    runner_up = scored[1][0] if len(scored) > 1 else 0.0
    # Too little evidence, or a tie between two documents: do not guess.
    if best_score < 2.5 or best_score - runner_up < 0.5:
        return None
    return best_key
