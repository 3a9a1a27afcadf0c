"""The guided analysis's mind map: what to test for a described change, from the documents.

    root: the task
    ├── requirements: the sections of the specifications and wiki the description touches
    │   └── each: the test sections and checklist items that cover it (or "nothing covers it")
    ├── related closed tickets (from the tracker sources the user reads)
    ├── gaps: the requirements nothing covers
    └── suggested checks (only with an LLM, marked as suggestions)

Built from retrieval and the documents' structure alone: the hybrid search finds the sections
(as the user may read them), ``scenarios.units`` gives each its document's own numbering and a
link to the viewer at that version and block, and ``scenarios.coverage.match_statements`` (the
coverage map's matching) finds what covers each one. Every node with a source links to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from knowledge.models import Chunk, Document, Source
from knowledge.retrieval.hits import chunk_url
from knowledge.retrieval.search import SearchOptions, search
from knowledge.retrieval.types import Filters
from knowledge.retrieval.weights import Hits
from scenarios import numbering, units
from scenarios.coverage import Cover, match_statements, reasons_text
from scenarios.documents import readable_documents
from scenarios.numbering import Section
from scenarios.units import Statement, VersionSections

MAX_REQUIREMENTS = 8
MAX_STATEMENTS = 4  # per requirement section: its first statements are matched
MAX_SIBLINGS = 6
MAX_TEST_DOCUMENTS = 10
_CODE = re.compile(r"[{};=]|^\s*(?:#|//|public |static |using |namespace |return )")

Node = dict[str, Any]


def node(label: str, kind: str, *, url: str = "", note: str = "", prefix: str = "") -> Node:
    return {
        "label": label,
        "kind": kind,
        "url": url,
        "note": note,
        "prefix": prefix,
        "children": [],
    }


@dataclass
class Touched:
    """A section the description touches, and how well the search matched it."""

    loaded: VersionSections
    section: Section
    score: float


class _Cache:
    """Documents' sections, loaded once per map."""

    def __init__(self) -> None:
        self.loaded: dict[int, VersionSections | None] = {}

    def get(self, document: Document) -> VersionSections | None:
        if document.pk not in self.loaded:
            self.loaded[document.pk] = units.load(document)
        return self.loaded[document.pk]


def _test_documents(user, cache: _Cache) -> list[tuple[VersionSections, list[Section]]]:
    """The test programmes, test plans and checklists the user reads, with their test units."""
    found = []
    for document in readable_documents(user).exclude(source__kind=Source.Kind.TRACKER):
        if len(found) >= MAX_TEST_DOCUMENTS:
            break
        if units.is_test_document(document) and (loaded := cache.get(document)):
            found.append((loaded, units.test_units(loaded)))
    return found


def touched_sections(
    query: str, user, cache: _Cache, test_units: set[tuple[int, int]]
) -> list[Touched]:
    """The requirement sections for ``query``: the search's best sections of specifications and
    wiki (never a test unit, never a ticket), then the best section of each other specification
    of the same sources (a project's ТЗ, explanatory note...), however weak, marked by its score."""
    tracker = set(Source.objects.filter(kind=Source.Kind.TRACKER).values_list("pk", flat=True))
    result = search(
        query, user=user, options=SearchOptions(hits=Hits(k=12, per_document=2, cascade=False))
    )
    found: dict[tuple[int, int], Touched] = {}
    _collect(result.hits, cache, test_units, tracker, found)
    sources = {t.loaded.document.source_id for t in found.values()}
    siblings = (
        readable_documents(user)
        .filter(source__in=sources, source__kind=Source.Kind.SPECS)
        .exclude(pk__in={t.loaded.document.pk for t in found.values()})
    )
    for document in siblings[:MAX_SIBLINGS]:
        if units.is_test_document(document):
            continue
        weak = search(
            query,
            user=user,
            filters=Filters(document_ids=[document.pk]),
            options=SearchOptions(
                hits=Hits(k=5, per_document=5, cascade=False), min_score=0.0, route=False
            ),
        )
        _collect(
            _requirements_first(weak.hits, cache, document)[:2], cache, test_units, tracker, found
        )
    ranked = sorted(found.values(), key=lambda t: -t.score)
    return ranked[:MAX_REQUIREMENTS]


def _requirements_first(hits, cache: _Cache, document: Document) -> list:
    """Hits in the document's requirements part (a top-level section titled "Требования ...")
    before the others, each group in the search's order."""
    loaded = cache.get(document)

    def in_requirements(hit) -> bool:
        section = loaded.section_of_chunk(hit.chunk_id) if loaded else None
        return bool(section and units.REQUIREMENTS_PART.search(section.path[0]))

    return sorted(hits, key=lambda hit: not in_requirements(hit))


def _collect(hits, cache: _Cache, test_units, tracker: set[int], found: dict) -> None:
    documents = Document.objects.in_bulk([h.document_id for h in hits])
    for hit in hits:
        document = documents.get(hit.document_id)
        if document is None or document.source_id in tracker:
            continue
        loaded = cache.get(document)
        section = loaded.section_of_chunk(hit.chunk_id) if loaded else None
        if section is None:
            continue
        key = (document.pk, section.first_block)
        if key in test_units or key in found:
            continue
        found[key] = Touched(loaded, section, hit.score)


def statements_of(section: Section, query: str, language: str = "russian") -> list[Statement]:
    """The section's statements nearest the query (most words shared, then document order),
    code lines left out (an explanatory note quotes code)."""
    prose = [line for line in section.lines if not _CODE.search(line)]
    items = numbering.items(prose) or [("", section.title)]
    found = units.lexemes([query] + [f"{lead} {text}" for lead, text in items], language)
    wanted, shared = found[0], [len(x & found[0]) for x in found[1:]]
    order = sorted(range(len(items)), key=lambda i: (-shared[i], i))[:MAX_STATEMENTS]
    if wanted and any(shared):
        order = [i for i in order if shared[i]]
    return [
        Statement(f"{section.number}-{i + 1}", section, i + 1, *items[i]) for i in sorted(order)
    ]


def component_titles(description: str, user) -> list[str]:
    """Tiles for the component question: the titles of the sections the search finds first."""
    result = search(description, user=user, options=SearchOptions(hits=Hits(k=10, per_document=3)))
    cache = _Cache()
    titles = []
    documents = Document.objects.in_bulk([h.document_id for h in result.hits])
    for hit in result.hits:
        document = documents.get(hit.document_id)
        loaded = cache.get(document) if document else None
        section = loaded.section_of_chunk(hit.chunk_id) if loaded else None
        if section and section.title and len(section.title) <= 80:
            titles.append(section.title)
    return titles


def build_map(title: str, query: str, user, *, task_url: str = "", context: list[str]) -> Node:
    """The mind map for ``query`` (the description with the answers' words), as the user may
    read the documents. Without an LLM: retrieval and structure alone."""
    cache = _Cache()
    tests = _test_documents(user, cache)
    test_keys = {
        (loaded.document.pk, s.first_block) for loaded, sections in tests for s in sections
    }
    touched = touched_sections(query, user, cache, test_keys)
    root = node(title, "root", url=task_url, note="; ".join(context))
    requirements = node(_("Requirements"), "group")
    gaps = node(_("Gaps: nothing covers these"), "group")
    for item in touched:
        requirement = _requirement_node(item)
        statements = statements_of(item.section, query)
        corpus = list({id(t.loaded): t.loaded for t in touched}.values())
        covers = _covers(statements, tests, user, corpus) if tests else []
        for cover in covers:
            requirement["children"].append(_cover_node(cover))
        if not covers:
            requirement["children"].append(
                node(_("No test case or checklist item covers it"), "none")
            )
            gaps["children"].append(_requirement_node(item))
        requirements["children"].append(requirement)
    if not touched:
        requirements["children"].append(node(_("No section of the documents matches"), "empty"))
    root["children"] = [requirements, _tickets(query, user), gaps]
    return root


def _covers(statements: list[Statement], tests, user, corpus) -> list[Cover]:
    """The test units covering any of the statements, each once, the strongest first."""
    best: dict[str, Cover] = {}
    for covers in match_statements(statements, tests, user=user, corpus=corpus):
        for cover in covers:
            url = cover.source["url"]
            if url not in best or cover.evidence.strength > best[url].evidence.strength:
                best[url] = cover
    return sorted(best.values(), key=lambda c: -c.evidence.strength)


def _requirement_node(item: Touched) -> Node:
    source = item.loaded.describe(item.section)
    return node(
        f"{source['document']} · {item.section.label}",
        "requirement",
        url=str(source["url"]),
        note=_("version %(version)s") % {"version": source["version"]},
    )


def _cover_node(cover: Cover) -> Node:
    source = cover.source
    reasons = reasons_text(cover.evidence.reasons())
    terms = ", ".join(cover.evidence.terms[:5])
    note = _("version %(version)s; matched by %(reasons)s") % {
        "version": source["version"],
        "reasons": reasons,
    }
    if terms:
        note += f" ({terms})"
    return node(
        f"{source['document']} · {source['section']} {source['title']}".strip(),
        "test",
        url=str(source["url"]),
        note=note,
    )


def _tickets(query: str, user) -> Node:
    """Closed tickets near the description, from the tracker sources the user reads."""
    group = node(_("Related closed tickets"), "group")
    readable = Source.objects.visible_to(user) if user is not None else Source.objects.all()
    trackers = list(readable.filter(kind=Source.Kind.TRACKER).values_list("pk", flat=True))
    if not trackers:
        group["children"].append(node(_("No tracker source"), "empty"))
        return group
    result = search(
        query,
        user=user,
        filters=Filters(source_ids=trackers),
        options=SearchOptions(hits=Hits(k=5, per_document=1, cascade=False)),
    )
    documents = Document.objects.in_bulk([h.document_id for h in result.hits])
    for hit in result.hits:
        document = documents.get(hit.document_id)
        if document is None:
            continue
        version_id = (
            Chunk.objects.filter(pk=hit.chunk_id).values_list("version_id", flat=True).first()
        )
        group["children"].append(
            node(document.title, "ticket", url=chunk_url(document.pk, version_id, hit.chunk_id))
        )
    if not group["children"]:
        group["children"].append(node(_("No closed ticket matches"), "empty"))
    return group


def links(root: Node) -> list[str]:
    """Every link in the map (for tests and exports)."""
    found = [root["url"]] if root.get("url") else []
    for child in root.get("children", []):
        found += links(child)
    return found
