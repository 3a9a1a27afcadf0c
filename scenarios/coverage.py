"""Coverage map: each requirement of a requirements document and the test sections that check it.

``build_coverage(requirements_document, tests_document, user=...)`` reads both documents' newest
ready versions, splits the requirements part into statements (``scenarios.units``), and matches
every statement against the test document's test sections by section references, shared rare
terms and the hybrid search over the test document, as the user may read it
(``scenarios.matching`` holds the rules). Uncovered requirements come first.

``match_statements`` is the same matching for any statements against any test units; the guided
test analysis reuses it for the sections its description touches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext_lazy

from knowledge.models import Document
from knowledge.retrieval import Filters, SearchOptions, search
from knowledge.retrieval.weights import Hits
from scenarios import matching, units
from scenarios.numbering import Section
from scenarios.units import Statement, VersionSections

Progress = Callable[[int, int, str], None]

# The evidence kinds (``matching.Evidence.reasons``) in words, for the pages.
REASON_LABELS = {
    "reference": gettext_lazy("section reference"),
    "heading": gettext_lazy("test titled after the section"),
    "terms": gettext_lazy("shared terms"),
    "retrieval": gettext_lazy("search"),
}


def reasons_text(reasons: list[str]) -> str:
    """The evidence kinds in words ("test titled after the section, shared terms")."""
    return ", ".join(str(REASON_LABELS.get(r, r)) for r in reasons)


class CoverageError(Exception):
    """The documents cannot be compared (no ready version, nothing to compare); shown as is."""


@dataclass
class Cover:
    """One test section that checks a requirement, and why."""

    source: dict[str, Any]  # document, version, section, title, url
    evidence: matching.Evidence
    section: Section | None = field(default=None, repr=False, compare=False)  # the test unit

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.source,
            "reasons": self.evidence.reasons(),
            "terms": self.evidence.terms[:8],
            "term_score": round(self.evidence.term_score, 3),
            "retrieval_rank": self.evidence.retrieval_rank,
            "retrieval_score": (
                None
                if self.evidence.retrieval_score is None
                else round(self.evidence.retrieval_score, 4)
            ),
        }


@dataclass
class Row:
    """A requirement and its covering test sections."""

    statement: Statement
    source: dict[str, Any]
    covers: list[Cover] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.statement.not_required:
            return "not_required"
        return "covered" if self.covers else "uncovered"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.statement.id,
            "section": self.statement.section.number,
            "item": self.statement.item,
            "title": self.statement.section.title,
            "lead": self.statement.lead,
            "text": self.statement.text,
            "url": self.source["url"],
            "status": self.status,
            "covered_by": [c.as_dict() for c in self.covers],
        }


@dataclass
class CoverageMap:
    requirements: dict[str, Any]  # the requirements document, version
    tests: dict[str, Any]  # the test document, version
    rows: list[Row]

    @property
    def summary(self) -> dict[str, int]:
        statuses = [r.status for r in self.rows]
        return {
            "requirements": len(statuses),
            "covered": statuses.count("covered"),
            "uncovered": statuses.count("uncovered"),
            "not_required": statuses.count("not_required"),
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "requirements_document": self.requirements,
            "tests_document": self.tests,
            "summary": self.summary,
            "requirements": [r.as_dict() for r in self.rows],
        }


_ORDER = {"uncovered": 0, "covered": 1, "not_required": 2}


def build_coverage(
    requirements_document: Document,
    tests_document: Document,
    *,
    user=None,
    progress: Progress | None = None,
) -> CoverageMap:
    """The coverage map of one requirements document by one test document (see the module doc).
    ``user`` None reads everything (the command line); ``progress(done, total, id)`` is told of
    every requirement checked."""
    req = _load(requirements_document)
    tests = _load(tests_document)
    statements = units.requirements(req)
    if not statements:
        raise CoverageError(f"No requirements found in «{requirements_document.title}».")
    test_sections = units.test_units(tests)
    matched = match_statements(
        statements, [(tests, test_sections)], user=user, progress=progress, corpus=[req]
    )
    rows = [
        Row(s, req.describe(s.section), covers)
        for s, covers in zip(statements, matched, strict=True)
    ]
    rows.sort(key=lambda r: _ORDER[r.status])  # stable: document order within each status
    return CoverageMap(_document(req), _document(tests), rows)


def _load(document: Document) -> VersionSections:
    loaded = units.load(document)
    if loaded is None:
        raise CoverageError(f"«{document.title}» has no ready version yet.")
    return loaded


def _document(loaded: VersionSections) -> dict[str, Any]:
    return {
        "title": loaded.document.title,
        "document_id": loaded.document.pk,
        "version": loaded.version.display_label,
        "version_id": loaded.version.pk,
    }


def match_statements(
    statements: Sequence[Statement],
    test_documents: Sequence[tuple[VersionSections, list[Section]]],
    *,
    user=None,
    progress: Progress | None = None,
    language: str = "russian",
    corpus: Sequence[VersionSections] = (),
    retrieval: bool = True,
) -> list[list[Cover]]:
    """For each statement, the test units (of any of ``test_documents``) that cover it, the
    strongest first. How rare a term is is counted over every section of the documents compared
    (``corpus`` and the test documents): a word of most sections links nothing. ``retrieval``
    False: references, headings and shared terms only (no search per statement)."""
    pool = [(loaded, section) for loaded, sections in test_documents for section in sections]
    lexical = _Lexemes(language)
    statement_terms = [lexical.add(s.body) for s in statements]
    unit_terms = [lexical.add(f"{u.title}\n{u.text}") for _, u in pool]
    background = {id(s): s for loaded in corpus for s in loaded.sections}
    for loaded, _ in test_documents:
        background.update({id(s): s for s in loaded.sections})
    for section in {id(u): u for _, u in pool} | {id(s.section): s.section for s in statements}:
        background.pop(section, None)
    context_terms = [lexical.add(f"{s.title}\n{s.text}") for s in background.values() if s.lines]
    statement_titles = [[lexical.add(t) for t in s.section.path] for s in statements]
    unit_titles = [lexical.add(u.title) for _, u in pool]
    generic = lexical.add(REQUIREMENT_TITLE_WORDS)
    lexical.run()
    found = [lexical.get(i) for i in statement_terms + unit_terms + context_terms]
    idf = matching.local_idf(found)
    rare = matching.rare(idf, len(found))
    own = {loaded.document.pk: {s.number for s in loaded.sections} for loaded, _ in test_documents}
    references = [
        matching.referenced_numbers(u.text, own[loaded.document.pk]) for loaded, u in pool
    ]
    results = []
    for n, statement in enumerate(statements, start=1):
        ranks = _retrieval_ranks(statement, test_documents, user) if retrieval else {}
        covers = []
        for index, (loaded, unit) in enumerate(pool):
            terms, score = matching.shared_terms(
                lexical.get(statement_terms[n - 1]), lexical.get(unit_terms[index]), idf, rare
            )
            rank = ranks.get((loaded.document.pk, unit.first_block))
            evidence = matching.Evidence(
                reference=matching.refers_to(references[index], statement.section.number),
                heading=matching.names_heading(
                    [lexical.get(t) for t in statement_titles[n - 1]],
                    lexical.get(unit_titles[index]),
                    lexical.get(generic),
                ),
                terms=terms,
                term_score=score,
                retrieval_rank=rank[0] if rank else None,
                retrieval_score=rank[1] if rank else None,
            )
            if evidence.covers:
                covers.append(Cover(loaded.describe(unit), evidence, unit))
        covers.sort(key=lambda c: -c.evidence.strength)
        results.append(covers)
        if progress:
            progress(n, len(statements), statement.id)
    return results


REQUIREMENT_TITLE_WORDS = "требования требование требований requirements requirement"


class _Lexemes:
    """Texts collected, then turned into lexemes in one query."""

    def __init__(self, language: str) -> None:
        self.language = language
        self.texts: list[str] = []
        self.found: list[set[str]] = []

    def add(self, text: str) -> int:
        self.texts.append(text)
        return len(self.texts) - 1

    def run(self) -> None:
        self.found = units.lexemes(self.texts, self.language)

    def get(self, index: int) -> set[str]:
        return self.found[index]


def _retrieval_ranks(
    statement: Statement, test_documents: Sequence[tuple[VersionSections, list[Section]]], user
) -> dict[tuple[int, int], tuple[int, float]]:
    """(document id, unit's first block) -> (rank among the units found, score), from one hybrid
    search of the statement over the test documents, as ``user`` may read them."""
    result = search(
        statement.full_text,
        user=user,
        filters=Filters(document_ids=[loaded.document.pk for loaded, _ in test_documents]),
        options=SearchOptions(hits=Hits(k=5, per_document=5, cascade=False), route=False),
    )
    by_document = {loaded.document.pk: (loaded, set(map(id, s))) for loaded, s in test_documents}
    ranks: dict[tuple[int, int], tuple[int, float]] = {}
    for hit in result.hits:
        entry = by_document.get(hit.document_id)
        if entry is None:
            continue
        loaded, allowed = entry
        section = loaded.section_of_chunk(hit.chunk_id)
        if section is None or id(section) not in allowed:
            continue
        key = (hit.document_id, section.first_block)
        if key not in ranks:
            ranks[key] = (len(ranks) + 1, hit.score)
    return ranks
