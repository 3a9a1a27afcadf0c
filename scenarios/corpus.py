"""The product's documents as the guided analysis reads them, by role.

- **requirements**: the statements of the requirements part of every requirements document
  (``units.requirements``: each list item with its lead-in, or a section's one statement),
  without the statements that state no requirement and the document lists;
- **tests**: the sections of every test document and checklist that check something
  (``parts.test_kind``: methods, requirements declared for checking, the test environment),
  never their title page, introduction, appendices or registration sheet;
- **covers**: which test sections cover each statement, by the coverage map's matching
  (``coverage.match_statements``: section references, titles, shared rare terms; the search per
  statement is left out here, it would cost seconds per map);
- the background of term frequencies over all of those units (``terms.Background``);
- the abbreviations the documents define, with the phrases they stand for
  (``scenarios.abbreviations``).

Built from the newest ready versions the user may read, and kept per set of versions in the
process (a version never changes once ready, so the key says when to read again).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from knowledge.models import Document, Source
from knowledge.roles import Role
from scenarios import abbreviations, parts, units
from scenarios.abbreviations import Abbreviation
from scenarios.coverage import Cover, match_statements
from scenarios.documents import readable_documents
from scenarios.numbering import Section
from scenarios.terms import Background, Terms, read_terms, with_abbreviations
from scenarios.units import Statement, VersionSections

MAX_DOCUMENTS = 12  # of each role: requirements, tests
_CACHED = 8
_cache: OrderedDict[tuple, Corpus] = OrderedDict()
_lock = threading.Lock()


@dataclass
class RequirementUnit:
    loaded: VersionSections
    statement: Statement
    terms: Terms  # the statement with its lead-in
    title_terms: Terms  # its section's title

    @property
    def key(self) -> tuple[int, str]:
        return (self.loaded.document.pk, self.statement.section.number)


@dataclass
class TestUnit:
    loaded: VersionSections
    section: Section
    kind: str  # method | declared | environment
    terms: Terms

    @property
    def key(self) -> tuple[int, int]:
        return (self.loaded.document.pk, self.section.first_block)


@dataclass
class Corpus:
    requirements: list[RequirementUnit] = field(default_factory=list)
    tests: list[TestUnit] = field(default_factory=list)
    # requirement index -> [(test index, the coverage map's evidence)], strongest first
    covers: dict[int, list[tuple[int, Cover]]] = field(default_factory=dict)
    background: Background = field(default_factory=Background)
    # The lemmas of the documents' titles and title pages: the product's and the documents'
    # names (an app called "Parking payments" says "parking" everywhere), evidence of nothing.
    names: frozenset[str] = frozenset()
    # test index -> {requirement index: how the test programme says it checks it}: "reference"
    # (it names the section), "heading" (its title names it), "part" (the part holding it is
    # titled after the requirement's part), "terms" (the coverage map's shared rare terms).
    links: dict[int, dict[int, str]] = field(default_factory=dict)
    # The abbreviations the documents define ("система быстрых платежей (СБП)").
    abbreviations: list[Abbreviation] = field(default_factory=list)

    def covered_by(self, test: int) -> list[int]:
        """The requirement statements the test unit covers."""
        return [r for r, found in self.covers.items() if any(t == test for t, _ in found)]

    def linked_to(self, test: int) -> dict[int, str]:
        """The statements the test unit checks, each with the strongest kind of link."""
        return self.links.get(test, {})


def _documents(user, *roles: str) -> list[Document]:
    documents = readable_documents(user).exclude(source__kind=Source.Kind.TRACKER)
    return list(documents.of_role(*roles).order_by("pk")[:MAX_DOCUMENTS])


def _loaded(documents: list[Document]) -> list[VersionSections]:
    return [loaded for document in documents if (loaded := units.load(document)) is not None]


def corpus_for(user) -> Corpus:
    """The product's requirements and tests as ``user`` may read them (see the module doc)."""
    requirements = _loaded(_documents(user, Role.REQUIREMENTS))
    tests = _loaded(_documents(user, Role.TESTS, Role.CHECKLIST))
    key = (
        tuple(sorted(v.version.pk for v in requirements)),
        tuple(sorted(v.version.pk for v in tests)),
    )
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    built = build(requirements, tests)
    with _lock:
        _cache[key] = built
        while len(_cache) > _CACHED:
            _cache.popitem(last=False)
    return built


def forget() -> None:
    """Drop what was built (the corpora, the texts' terms): after a constant of the map changes
    (the benchmark's sweep)."""
    with _lock:
        _cache.clear()
    read_terms.cache_clear()


def build(requirements: list[VersionSections], tests: list[VersionSections]) -> Corpus:
    corpus = Corpus()
    corpus.abbreviations = abbreviations.defined(
        line for loaded in requirements + tests for line in _lines(loaded)
    )

    def terms_of(text: str) -> Terms:
        return with_abbreviations(read_terms(text), text, corpus.abbreviations)

    for loaded in requirements:
        for statement in units.requirements(loaded):
            if statement.not_required or parts.is_matter(statement.section):
                continue
            corpus.requirements.append(
                RequirementUnit(
                    loaded,
                    statement,
                    terms_of(statement.body),
                    terms_of(statement.section.title),
                )
            )
    for loaded in tests:
        with_parts = parts.has_test_parts(loaded.sections)
        for section in loaded.sections:
            if not section.lines or parts.is_matter(section):
                continue
            kind = parts.test_kind(section, has_parts=with_parts)
            if kind:
                text = f"{section.title}\n{section.text}"
                corpus.tests.append(TestUnit(loaded, section, kind, terms_of(text)))
    names: set[str] = set()
    for loaded in requirements + tests:
        names |= set(read_terms(f"{loaded.document.title}\n{loaded.opening}").weights)
    corpus.names = frozenset(names)
    corpus.background = Background.of(
        [r.terms for r in corpus.requirements] + [t.terms for t in corpus.tests]
    )
    _match(corpus, requirements)
    _link(corpus)
    return corpus


def _lines(loaded: VersionSections) -> list[str]:
    """Every line of a document: its title page, its sections' titles and bodies."""
    found = [loaded.opening]
    for section in loaded.sections:
        found += [section.title, *section.lines]
    return found


LINK_ORDER = ("reference", "heading", "part", "terms")
PART_LINKED_FORMS = ("function", "obligation")


def _title_words(title: str, names: frozenset[str]) -> frozenset[str]:
    """A title's own words: not the word that titles a requirements part ("требования",
    ``parts.REQUIREMENTS_PART``), not the product's or the documents' names."""
    words = frozenset(read_terms(title).weights) - names
    return frozenset(w for w in words if not parts.REQUIREMENTS_PART.search(w))


def _link(corpus: Corpus) -> None:
    """``corpus.links``: the coverage map's evidence, and the parts of a test programme titled
    after a requirement's part, each test unit to the statements it checks. A method under
    "Испытания функций оплаты" checks the functions and obligations the ТЗ's "Требования к
    функциям оплаты" states (its lists of functions, its "должен"), not the formats of data the
    part also describes."""
    for i, covers in corpus.covers.items():
        for j, cover in covers:
            evidence = cover.evidence
            kind = "reference" if evidence.reference else "heading" if evidence.heading else "terms"
            _add_link(corpus, j, i, kind)
    names = corpus.names
    requirement_titles = [
        [t for title in r.statement.section.path if (t := _title_words(title, names))]
        if r.statement.form in PART_LINKED_FORMS
        else []
        for r in corpus.requirements
    ]
    for j, test in enumerate(corpus.tests):
        if test.kind != "method":
            continue  # a restated requirement is linked by its own title, not its part's
        parts_of = [_title_words(t, names) for t in test.section.path[:-1]]
        if not any(parts_of):
            continue
        for i, titles in enumerate(requirement_titles):
            if any(title <= part for title in titles for part in parts_of):
                _add_link(corpus, j, i, "part")


def _add_link(corpus: Corpus, test: int, requirement: int, kind: str) -> None:
    found = corpus.links.setdefault(test, {})
    if requirement not in found or LINK_ORDER.index(kind) < LINK_ORDER.index(found[requirement]):
        found[requirement] = kind


def _match(corpus: Corpus, requirements: list[VersionSections]) -> None:
    """``corpus.covers`` by the coverage map's matching, one requirements document at a time
    against every test document. A requirement restated in a test programme ("declared") covers
    a statement only when they share words, not by a shared title alone: a test programme
    copies the ТЗ's outline ("Требования к входным данным") and may fill a section with
    something else (the install package where the ТЗ names the data the server reads)."""
    by_document: dict[int, list[int]] = {}
    for index, test in enumerate(corpus.tests):
        by_document.setdefault(test.loaded.document.pk, []).append(index)
    test_documents = []
    for indexes in by_document.values():
        loaded = corpus.tests[indexes[0]].loaded
        test_documents.append((loaded, [corpus.tests[i].section for i in indexes]))
    index_of = {(t.loaded.document.pk, id(t.section)): i for i, t in enumerate(corpus.tests)}
    for loaded in requirements:
        mine = [i for i, r in enumerate(corpus.requirements) if r.loaded is loaded]
        if not mine or not test_documents:
            continue
        statements = [corpus.requirements[i].statement for i in mine]
        found = match_statements(statements, test_documents, corpus=[loaded], retrieval=False)
        for requirement, covers in zip(mine, found, strict=True):
            kept = []
            for cover in covers:
                test = index_of.get((cover.source["document_id"], id(cover.section)))
                if test is None:
                    continue
                evidence = cover.evidence
                if corpus.tests[test].kind == "declared" and not (
                    evidence.reference or evidence.terms
                ):
                    continue
                kept.append((test, cover))
            if kept:
                corpus.covers[requirement] = kept
