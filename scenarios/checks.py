"""The checks the knowledge base teaches for a change, and the program text it touches.

**Knowledge** (wiki pages, documents of the role "knowledge"): the hybrid search is asked the
description, and again its terms (a long description dilutes the words that name the kind of
change); the pages that rank best in either, fused by reciprocal rank, a page titled as one
about testing or checks counting double, are the pages about this kind of change
("Тестирование push-уведомлений", "Тестирование API"). Each page's checklist
rows and list items are quoted as checks, those sharing the most words with the change first
(PostgreSQL's full-text lexemes of the page's lines, one query per map).

**Code** (documents of the role "code", a ГОСТ program text): the search's best sections, each a
file of the listing ("Views\\Payment.xaml.cs").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from knowledge.models import Document, Source
from knowledge.retrieval import Filters, SearchOptions, search
from knowledge.retrieval.weights import Hits
from knowledge.roles import Role
from scenarios import numbering, parts, units
from scenarios.documents import readable_documents
from scenarios.terms import Terms
from scenarios.units import VersionSections

MAX_PAGES = 3
MAX_CHECKS = 5
MAX_FILES = 3
RRF_K = 10
TEACHING_BOOST = 2.0
# A page whose title says it is about testing or checks ("Тестирование API", "Чек-лист
# релиза", "Localization testing") teaches checks; a page about HTTP explains a protocol.
TEACHES_CHECKS = re.compile(r"тестировани|провер|чек-лист|чеклист|testing|checklist", re.I)
_SEARCH = {"route": False, "rerank": False, "min_score": 0.0}


@dataclass
class Page:
    """A knowledge page and the checks quoted from it."""

    loaded: VersionSections
    section: numbering.Section | None  # its best section, to link to
    checks: list[str] = field(default_factory=list)


@dataclass
class CodeFile:
    loaded: VersionSections
    section: numbering.Section


def _ids(user, role: str) -> list[int]:
    documents = readable_documents(user).exclude(source__kind=Source.Kind.TRACKER)
    return list(documents.of_role(role).values_list("pk", flat=True))


def _hits(query: str, user, ids: list[int], k: int):
    if not ids or not query.strip():
        return []
    options = SearchOptions(hits=Hits(k=k, per_document=1, cascade=False), **_SEARCH)
    return search(query, user=user, filters=Filters(document_ids=ids), options=options).hits


def knowledge_pages(description: str, change: Terms, user) -> list[Page]:
    """The knowledge pages about this kind of change, with their checks (see the module doc)."""
    ids = _ids(user, Role.KNOWLEDGE)
    terms = " ".join(sorted(change.weights, key=lambda w: -change.weights[w])[:20])
    fused: dict[int, float] = {}
    best_chunk: dict[int, int] = {}
    for query in (description, terms):
        for rank, hit in enumerate(_hits(query, user, ids, 20), start=1):
            fused[hit.document_id] = fused.get(hit.document_id, 0.0) + 1 / (RRF_K + rank)
            best_chunk.setdefault(hit.document_id, hit.chunk_id)
    documents = Document.objects.in_bulk(list(fused))
    for pk, document in documents.items():
        if TEACHES_CHECKS.search(document.title):
            fused[pk] *= TEACHING_BOOST
    chosen = sorted(fused, key=lambda pk: -fused[pk])[:MAX_PAGES]
    pages = []
    for pk in chosen:
        loaded = units.load(documents[pk]) if pk in documents else None
        if loaded is None:
            continue
        pages.append(Page(loaded, loaded.section_of_chunk(best_chunk[pk])))
    _quote_checks(pages, description)
    return pages


def _check_lines(loaded: VersionSections) -> list[str]:
    """The page's checks: list items and table rows (a checklist's rows), each once."""
    found: list[str] = []
    for section in loaded.sections:
        if parts.is_matter(section):
            continue
        for line in section.lines:
            text = line.strip()
            if text.startswith("|"):
                cells = [c.strip() for c in text.strip("|").split("|") if c.strip()]
                text = " — ".join(cells)
            elif text[:1] in "-–—•*" or text[:2].rstrip(").").isdigit():
                text = text.lstrip("-–—•* ").strip()
            else:
                continue
            if 12 <= len(text) <= 300 and text not in found:
                found.append(text)
    return found


def _quote_checks(pages: list[Page], description: str) -> None:
    """Each page's checks sharing the most lexemes with the description (its first list
    items when none does)."""
    lines = [_check_lines(page.loaded) for page in pages]
    flat = [line for page_lines in lines for line in page_lines]
    lexemes = units.lexemes([description, *flat], "russian")
    wanted, at = lexemes[0], 1
    for page, page_lines in zip(pages, lines, strict=True):
        scored = []
        for order, line in enumerate(page_lines):
            scored.append((-len(lexemes[at + order] & wanted), order, line))
        at += len(page_lines)
        scored.sort()
        shared = [line for score, _, line in scored if score < 0]
        page.checks = (shared or page_lines)[:MAX_CHECKS]


def code_files(description: str, user) -> list[CodeFile]:
    """The files of the program text the search finds for the change, best first."""
    ids = _ids(user, Role.CODE)
    found: list[CodeFile] = []
    cache: dict[int, VersionSections | None] = {}
    documents = Document.objects.in_bulk(ids)
    seen: set[tuple[int, int]] = set()
    for hit in _hits(description, user, ids, 8):
        document = documents.get(hit.document_id)
        if document is None:
            continue
        if document.pk not in cache:
            cache[document.pk] = units.load(document)
        loaded = cache[document.pk]
        section = loaded.section_of_chunk(hit.chunk_id) if loaded else None
        if section is None or parts.is_matter(section):
            continue
        key = (document.pk, section.first_block)
        if key not in seen:
            seen.add(key)
            found.append(CodeFile(loaded, section))
    return found[:MAX_FILES]
