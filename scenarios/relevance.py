"""Which requirements a change touches, how sure the map is, and which tests check it (no
database here).

The change's terms (``scenarios.terms``) are matched with every requirement statement of the
product (``scenarios.corpus``) and every test section:

- **statement**: the change and the statement share words, weighted by how rare each is among
  the product's units; its section's title counts at ``TITLE_WEIGHT``. The words of the
  product's name (the documents' title pages) count for nothing: they are said of everything;
- **test**: a test section shares at least ``MIN_ANCHORS`` rare words with the change, and the
  test programme says it checks the statement (``Corpus.linked_to``: it names its section, its
  title or its part's title is the requirement's, or the coverage map's shared terms), each
  kind of link weighing ``LINK_WEIGHTS``. The test programme knows how a requirement is
  realised: a parking app's ТЗ may never say "история", while its interface test walks through
  the history tab;
- **reference**: a statement the change touches names another requirement ("позволяющие
  выполнять функции п. 4.1"): that one is touched too;
- **meaning** (``scenarios.meaning``): each statement of the change and the sentences of the
  requirements and tests closest to it in e5's space (its ties). A statement of the change
  that shares no rare word with any requirement or test (said in other words than the
  documents': "чек" for "квитанция") names the section of the sentence closest to it, a
  requirement's or the requirements a test method checks (``_admit``): the section is a
  requirement of the map when the closeness is at least ``SURE_CLOSENESS``, folded below it.
  The ties of the other sections add ``MEANING_WEIGHT`` times their lift to the words' share
  (0: the sweeps found e5's closeness orders the sections the words found worse than the
  words do); they are shown on every node either way.

A section's score is the best of its statements' evidence and ``TRACE_WEIGHT`` times its
tests'. A change is specified when one section shares at least ``MIN_ANCHORS`` distinct rare
words with it (evidence in one place, not one word here and one there), or a test sharing them
leads to a requirement and the product's documents name the change's focus in words rare among
their units (the feature it changes, "Экран оплаты: ...", not a new "экспорт в PDF"), or a
statement no word explains is at least ``SURE_CLOSENESS`` close to a sentence naming a
requirement; otherwise nothing specifies it (a gap in the specification), and the nearest
sections are kept only as context.

The map ranks: the sections scoring at least ``KEEP`` of the best one, at most
``MAX_SECTIONS``, are its requirements (with the sections they name, and those a statement in
other words names with confidence); the next ones scoring at least ``FOLD`` of the best, or
named by a statement in other words less surely, at most ``MAX_FOLDED``, are shown folded,
marked low confidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scenarios.corpus import Corpus
from scenarios.matching import referenced_numbers, refers_to
from scenarios.meaning import Meanings, Tie
from scenarios.terms import Match, Terms, match, read_terms, with_abbreviations

KEEP = 0.6
FOLD = 0.4
MAX_SECTIONS = 5
MAX_FOLDED = 3
MAX_CONTEXT = 2
MIN_ANCHORS = 2  # distinct rare words: one shared word is a coincidence, two are evidence
TEST_ANCHORS = 2  # ... that a test section shares with the change to be near it
TRACE_WEIGHT = 0.75
TITLE_WEIGHT = 1.5
PART_LINK = 0.75  # a test under a part titled after the requirement's part
TERMS_LINK = 0.5  # a test sharing the requirement's rare terms
BOTH_WEIGHT = 0.5  # how much the weaker of a section's two kinds of evidence adds
REFERENCE_WEIGHT = 0.75  # of a section's evidence, to the section a statement ties it to
MEANING_WEIGHT = 0.0  # of a section's ties' lift, beside its words' share of the best section's
SURE_CLOSENESS = 0.87  # cosine: a statement no rare word explains names its closest section
MAX_TESTS = 8


def link_weight(kind: str) -> float:
    """How much a kind of link between a test and a requirement carries (see the module doc)."""
    return {"reference": 1.0, "heading": 1.0, "part": PART_LINK, "terms": TERMS_LINK}[kind]


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
    named: float = 0.0  # the evidence of a section a statement ties it to
    ties: dict[int, Tie] = field(default_factory=dict)  # statement -> its tie to the change
    test_ties: dict[int, Tie] = field(default_factory=dict)  # linked test unit -> its tie
    meaning: float = 0.0  # the ties' evidence (lifts), direct and through the tests
    admitted: float = 0.0  # closeness of a change statement no word explains, closest here
    relative: float = 0.0  # its score over the best section's
    confident: bool = True  # False: shown folded, low confidence

    @property
    def score(self) -> float:
        """The statements' own evidence, or the tests' when it is stronger (a ТЗ that never
        names the history tab its interface requirement covers)."""
        own = max(self.direct, self.trace) + BOTH_WEIGHT * min(self.direct, self.trace)
        return max(own, self.named)

    @property
    def tie(self) -> Tie | None:
        """The section's closest tie to the change: a statement's, else a test's."""
        found = list(self.ties.values()) or list(self.test_ties.values())
        return max(found, key=lambda t: t.lift) if found else None

    @property
    def anchors(self) -> set[str]:
        return {a for m in self.matches.values() for a in m.anchors}


@dataclass
class Ranking:
    specified: bool
    touched: list[Touched]  # the requirement sections, best first (context when unspecified)
    tests: list[tuple[int, Match]]  # test units sharing at least two rare words, best first
    folded: list[Touched] = field(default_factory=list)  # low confidence, best first
    test_ties: dict[int, Tie] = field(default_factory=dict)  # test units near it in meaning


def rank(change: Terms, corpus: Corpus, meanings: Meanings | None = None) -> Ranking:
    """The requirement sections ``change`` touches and the tests near it (see the module doc);
    ``meanings``: the change's ties in e5's space (``scenarios.meaning``; None: words only)."""
    meanings = meanings or Meanings()
    ignore, background = corpus.names, corpus.background
    tests = [
        (j, found)
        for j, unit in enumerate(corpus.tests)
        if len((found := match(change, unit.terms, background, ignore=ignore)).anchors)
        >= TEST_ANCHORS
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
        for i, kind in corpus.linked_to(j).items():
            weight = link_weight(kind)
            if weight <= 0:
                continue
            touched = sections[corpus.requirements[i].key]
            touched.tests[j] = found
            touched.trace = max(touched.trace, TRACE_WEIGHT * weight * found.score)
    traced = any(t.trace for t in sections.values()) and _focus_known(change, corpus)
    specified = any(len(t.anchors) >= MIN_ANCHORS for t in sections.values()) or traced
    _propagate_references(sections, corpus)
    _tie_meanings(sections, corpus, meanings)
    _admit(sections, corpus, meanings)
    sure = [t for t in sections.values() if t.admitted >= SURE_CLOSENESS]
    specified = specified or bool(sure)
    fused = _fused(sections)
    ranked = sorted(
        (t for t in sections.values() if t.anchors or t.trace or t.named or t.meaning),
        key=lambda t: -fused[t.key],
    )
    best = fused[ranked[0].key] if ranked else 0.0
    for touched in ranked:
        touched.relative = fused[touched.key] / best if best else 0.0
    if not specified:
        return Ranking(False, ranked[:MAX_CONTEXT], tests[:MAX_TESTS], [], _near(meanings))
    kept = [t for t in ranked if t.relative >= KEEP][:MAX_SECTIONS]
    kept += [t for t in ranked if t in sure and t not in kept][: MAX_SECTIONS - len(kept)]
    folded = [t for t in ranked if t not in kept and (t.relative >= FOLD or t.admitted)][
        :MAX_FOLDED
    ]
    for touched in folded:
        touched.confident = False
    return Ranking(True, kept, tests[:MAX_TESTS], folded, _near(meanings))


def _near(meanings: Meanings) -> dict[int, Tie]:
    """The test sections near the change in meaning: tied to it at least ``SURE_CLOSENESS``
    close (a closer test of a requirement the map shows is listed under it anyway)."""
    return {j: tie for j, tie in meanings.tests.items() if tie.closeness >= SURE_CLOSENESS}


def _tie_meanings(
    sections: dict[tuple[int, str], Touched], corpus: Corpus, meanings: Meanings
) -> None:
    """Each section's ties in e5's space: its statements' own, and those of the tests the
    test programme says check them (weighted as their links, at ``TRACE_WEIGHT``)."""
    for i, tie in meanings.requirements.items():
        touched = sections[corpus.requirements[i].key]
        touched.ties[i] = tie
    trace: dict[tuple[int, str], float] = {}
    for j, tie in meanings.tests.items():
        for i, kind in corpus.linked_to(j).items():
            key = corpus.requirements[i].key
            touched = sections[key]
            touched.test_ties.setdefault(j, tie)
            trace[key] = max(trace.get(key, 0.0), TRACE_WEIGHT * link_weight(kind) * tie.lift)
    for key, touched in sections.items():
        direct = max((t.lift for t in touched.ties.values()), default=0.0)
        traced = trace.get(key, 0.0)
        touched.meaning = max(direct, traced) + BOTH_WEIGHT * min(direct, traced)


def _admit(sections: dict[tuple[int, str], Touched], corpus: Corpus, meanings: Meanings) -> None:
    """A statement of the change that shares no rare word with any requirement or test (said
    in other words than the documents') is tied to the section the sentence closest to it
    names: a requirement's own, or the requirements a test method checks (by its strongest
    links: the numbering and references of the test programme). The section joins the map,
    with confidence when the closeness is at least ``SURE_CLOSENESS``, folded below it."""
    for statement in _unexplained(meanings.statements, corpus):
        if statement not in meanings.closest:
            continue
        kind, index, tie = meanings.closest[statement]
        if kind == "requirement":
            touched = sections[corpus.requirements[index].key]
            touched.ties.setdefault(index, tie)
            touched.admitted = max(touched.admitted, tie.closeness)
            continue
        links = corpus.linked_to(index)
        strongest = max((link_weight(k) for k in links.values()), default=0.0)
        for i, link in links.items():
            if link_weight(link) == strongest:
                touched = sections[corpus.requirements[i].key]
                touched.test_ties.setdefault(index, tie)
                touched.admitted = max(touched.admitted, tie.closeness)


def _unexplained(statements: list[str], corpus: Corpus) -> list[str]:
    """The change's statements that share no rare word (``terms.match``'s anchors) with any
    requirement statement, its section's title or a test section."""
    units = [r.terms for r in corpus.requirements] + [r.title_terms for r in corpus.requirements]
    units += [t.terms for t in corpus.tests]
    found = []
    for statement in statements:
        terms = with_abbreviations(read_terms(statement), statement, corpus.abbreviations)
        if not any(
            match(terms, unit, corpus.background, ignore=corpus.names).anchors for unit in units
        ):
            found.append(statement)
    return found


def _fused(sections: dict[tuple[int, str], Touched]) -> dict[tuple[int, str], float]:
    """A section's words' evidence over the best section's, and ``MEANING_WEIGHT`` of its
    ties': the two kinds of evidence on one scale."""
    best = max((t.score for t in sections.values()), default=0.0)
    return {
        key: (t.score / best if best else 0.0) + MEANING_WEIGHT * t.meaning
        for key, t in sections.items()
    }


def _focus_known(change: Terms, corpus: Corpus) -> bool:
    """Do the product's requirements or tests name what the change is about (its focus)? A
    test of the same screen leads to a requirement only for a feature the product has."""
    focus = change.focus - corpus.names
    return any(corpus.background.is_rare(lemma) for lemma in focus)


def _statement_match(change: Terms, corpus: Corpus, i: int) -> Match:
    """The statement's words, and its section title's at ``TITLE_WEIGHT``."""
    requirement = corpus.requirements[i]
    found = match(change, requirement.terms, corpus.background, ignore=corpus.names)
    title = match(
        change,
        requirement.title_terms,
        corpus.background,
        scale=TITLE_WEIGHT,
        ignore=corpus.names,
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


def _propagate_references(sections: dict[tuple[int, str], Touched], corpus: Corpus) -> None:
    """A statement naming another requirement ("кнопки, позволяющие выполнять функции п.
    4.1") ties the two sections: each gets ``REFERENCE_WEIGHT`` of the other's own evidence
    (the functions change, the screen offering them is to check; and back)."""
    own = {key: max(t.direct, t.trace) for key, t in sections.items()}
    for key, touched in sections.items():
        for i in touched.statements:
            statement = corpus.requirements[i].statement
            numbers = referenced_numbers(statement.text)
            if not numbers:
                continue
            for other_key, other in sections.items():
                if (
                    other_key[0] != key[0]
                    or other is touched
                    or not refers_to(numbers, other_key[1])
                ):
                    continue
                _tie(other, own[key], statement.id)
                _tie(touched, own[other_key], statement.id)


def _tie(touched: Touched, score: float, statement: str) -> None:
    if score <= 0:
        return
    touched.named = max(touched.named, REFERENCE_WEIGHT * score)
    if statement not in touched.referenced_by:
        touched.referenced_by.append(statement)
