"""Which requirements a change touches, and which tests check it (no database here).

The change's terms (``scenarios.terms``) are matched with every requirement statement of the
product (``scenarios.corpus``) and every test section:

- **statement**: the change and the statement share words, weighted by how rare each is among
  the product's units; its section's title counts half. The words of the product's name (the
  documents' title pages) count for nothing: they are said of everything;
- **test**: a test section shares at least two rare words with the change, and the test
  programme says it checks the statement's section (its title names it, "Испытание выполнения
  требований к интерфейсу", or it refers to it: ``Corpus.linked_to``). The test programme
  knows how a requirement is realised: a screen's name may be nowhere in a ТЗ whose interface
  requirement the ПМИ tests through that screen;
- **reference**: a statement the change touches names another requirement ("позволяющие
  выполнять функции п. 4.1.1"): that one is touched too.

A change is specified when the statements share at least two distinct rare words with it, or
a test that shares them covers a requirement and the product's documents name the change's
focus, in words rare among their units (the feature it changes: "Корзина", not a new
"экспорт"; "товар" of a shop names no feature); otherwise nothing
specifies it (a gap in the specification), and the nearest sections are kept only as context. The sections kept are those
scoring at least ``KEEP`` of the best one, at most ``MAX_SECTIONS``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scenarios.corpus import Corpus
from scenarios.matching import referenced_numbers, refers_to
from scenarios.terms import Match, Terms, match

KEEP = 0.5
MAX_SECTIONS = 4
MAX_CONTEXT = 2
MIN_ANCHORS = 2  # distinct rare words: one shared word is a coincidence, two are evidence
TRACE_WEIGHT = 0.5
MAX_TESTS = 8


@dataclass
class Touched:
    """A requirement section the change touches, with its statements and the evidence."""

    key: tuple[int, str]  # (document id, section number)
    statements: list[int] = field(default_factory=list)  # corpus.requirements indexes
    matches: dict[int, Match] = field(default_factory=dict)  # statement -> what it shares
    tests: dict[int, Match] = field(default_factory=dict)  # test unit -> what it shares
    referenced_by: list[str] = field(default_factory=list)  # statement ids naming this one
    direct: float = 0.0
    trace: float = 0.0

    @property
    def score(self) -> float:
        """The statements' own evidence, or the tests' when it is stronger (a ТЗ that never
        names the favourites its interface requirement covers)."""
        return max(self.direct, self.trace)

    @property
    def anchors(self) -> set[str]:
        return {a for m in self.matches.values() for a in m.anchors}


@dataclass
class Ranking:
    specified: bool
    touched: list[Touched]  # the requirement sections, best first (context when unspecified)
    tests: list[tuple[int, Match]]  # test units sharing at least two rare words, best first


def rank(change: Terms, corpus: Corpus) -> Ranking:
    """The requirement sections ``change`` touches and the tests near it (see the module doc)."""
    ignore, background = corpus.names, corpus.background
    tests = [
        (j, found)
        for j, unit in enumerate(corpus.tests)
        if len((found := match(change, unit.terms, background, ignore=ignore)).anchors)
        >= MIN_ANCHORS
    ]
    tests.sort(key=lambda item: -item[1].score)
    sections: dict[tuple[int, str], Touched] = {}
    for i, requirement in enumerate(corpus.requirements):
        touched = sections.setdefault(requirement.key, Touched(requirement.key))
        touched.statements.append(i)
        found = _statement_match(change, corpus, i)
        if found:
            touched.matches[i] = found
            touched.direct = max(touched.direct, found.score)
    for j, found in tests:
        for i in corpus.linked_to(j):
            touched = sections[corpus.requirements[i].key]
            touched.tests[j] = found
            touched.trace = max(touched.trace, TRACE_WEIGHT * found.score)
    anchors = {a for t in sections.values() for a in t.anchors}
    traced = any(t.trace for t in sections.values()) and _focus_known(change, corpus)
    specified = len(anchors) >= MIN_ANCHORS or traced
    ranked = sorted(
        (t for t in sections.values() if t.anchors or t.trace),
        key=lambda t: -t.score,
    )
    if not specified:
        return Ranking(False, ranked[:MAX_CONTEXT], tests[:MAX_TESTS])
    best = ranked[0].score if ranked else 0.0
    kept = [t for t in ranked if t.score >= KEEP * best][:MAX_SECTIONS]
    _add_referenced(kept, sections, corpus)
    return Ranking(True, kept, tests[:MAX_TESTS])


def _focus_known(change: Terms, corpus: Corpus) -> bool:
    """Do the product's requirements or tests name what the change is about (its focus)? A
    test of the same screen leads to a requirement only for a feature the product has."""
    focus = change.focus - corpus.names
    return any(corpus.background.is_rare(lemma) for lemma in focus)


def _statement_match(change: Terms, corpus: Corpus, i: int) -> Match:
    """The statement's words, and its section title's at half weight."""
    requirement = corpus.requirements[i]
    found = match(change, requirement.terms, corpus.background, ignore=corpus.names)
    title = match(
        change, requirement.title_terms, corpus.background, scale=0.5, ignore=corpus.names
    )
    extra = [lemma for lemma in title.shared if lemma not in found.shared]
    if not extra:
        return found
    weights = title.score / max(len(title.shared), 1)  # an even share is enough to order by
    return Match(
        found.score + weights * len(extra),
        found.shared + extra,
        found.anchors + [a for a in title.anchors if a in extra],
    )


def _add_referenced(
    kept: list[Touched], sections: dict[tuple[int, str], Touched], corpus: Corpus
) -> None:
    """The sections a kept statement names ("функции п. 4.1.1"), after the kept ones."""
    for touched in list(kept):
        for i in touched.statements:
            if i not in touched.matches and not touched.tests:
                continue
            statement = corpus.requirements[i].statement
            numbers = referenced_numbers(statement.text)
            for key, other in sections.items():
                if key[0] != touched.key[0] or other in kept:
                    continue
                if refers_to(numbers, key[1]):
                    other.referenced_by.append(statement.id)
                    kept.append(other)
