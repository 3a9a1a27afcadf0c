"""The guided analysis's mind map: what to test for a described change, from the documents.

    root: the task
    ├── requirements: the requirement sections the change touches (scenarios.relevance), each
    │   with the statements that say so and the tests that cover it (the coverage map's
    │   matching); or "no requirement describes this", with the nearest sections as context
    ├── other tests near the change: test sections sharing its words (to run again)
    ├── gaps: a change nothing specifies; requirements no test method checks
    ├── checks the knowledge base teaches: wiki pages about this kind of change, their checks
    ├── code touched: files of the program text
    ├── related closed tickets (when there is a tracker source)
    └── suggested checks (only with an LLM, marked as suggestions: scenarios.suggest)

Built from the documents' roles and structure and the change's reading alone; every node with a
source links to it as a citation does (the viewer at that version, the section highlighted) and
carries it (``source``: document, section, title, path) for the exports and the ``analyse``
command. ``tree["gap"]`` says whether the change is specified and which requirements nothing
tests.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from knowledge.models import Chunk, Document, Source
from knowledge.retrieval.hits import chunk_url
from knowledge.retrieval.search import SearchOptions, search
from knowledge.retrieval.types import Filters
from knowledge.retrieval.weights import Hits
from scenarios import checks
from scenarios.corpus import Corpus, corpus_for
from scenarios.coverage import Cover, reasons_text
from scenarios.relevance import Ranking, Touched, rank
from scenarios.terms import Match, Terms, read_terms
from scenarios.units import VersionSections

MAX_STATEMENTS = 3  # per requirement: the ones with evidence
MAX_COVERS = 4  # per requirement
MAX_OTHER_TESTS = 5

Node = dict[str, Any]

TEST_KINDS = {
    "method": gettext_lazy("test method"),
    "declared": gettext_lazy("declared for checking, no method"),
    "environment": gettext_lazy("test environment"),
}


def node(label: str, kind: str, *, url: str = "", note: str = "", prefix: str = "") -> Node:
    return {"label": label, "kind": kind, "url": url, "note": note, "prefix": prefix,
            "children": []}  # fmt: skip


def group(label: str, branch: str) -> Node:
    found = node(label, "group")
    found["branch"] = branch
    return found


def source_node(loaded: VersionSections, section, kind: str, *, note: str = "") -> Node:
    """A node standing for a section of a document, linked and described."""
    described = loaded.describe(section)
    found = node(
        f"{described['document']} · {section.label}".strip(" ·"),
        kind,
        url=str(described["url"]),
        note=note,
    )
    found["source"] = {
        "document": described["document"],
        "document_id": described["document_id"],
        "path": loaded.document.path,
        "version": described["version"],
        "section": section.number,
        "title": section.title,
    }
    return found


def build_map(
    title: str,
    description: str,
    user,
    *,
    task_url: str = "",
    context: list[str],
    component: str = "",
) -> Node:
    """The mind map for ``description`` as the user may read the documents; ``component`` the
    requirement section the user chose ("document id:section number", "" for none)."""
    change = read_terms(description)
    corpus = corpus_for(user)
    ranking = rank(change, corpus)
    chosen = _chosen(component, corpus, ranking)
    root = node(title, "root", url=task_url, note="; ".join(context))
    requirements, shown_tests, untested = _requirements(ranking, corpus, chosen)
    root["children"] = [
        requirements,
        _other_tests(ranking, corpus, shown_tests),
        _gaps(ranking, corpus, untested),
        _knowledge(description, change, user),
        _code(description, user),
    ]
    tickets = _tickets(description, user)
    if tickets is not None:
        root["children"].append(tickets)
    root["gap"] = {"unspecified": not ranking.specified, "untested": untested}
    return root


def _chosen(component: str, corpus: Corpus, ranking: Ranking) -> Touched | None:
    """The section the user chose as the changed part, added to the ranking's when missing."""
    if not component or ":" not in component:
        return None
    document, number = component.split(":", 1)
    key = (int(document), number) if document.isdigit() else None
    statements = [i for i, r in enumerate(corpus.requirements) if r.key == key]
    if not statements:
        return None
    found = next((t for t in ranking.touched if t.key == key), None)
    return found or Touched(key, statements)


def _requirements(
    ranking: Ranking, corpus: Corpus, chosen: Touched | None
) -> tuple[Node, set[int], list[str]]:
    """The requirements branch; the test units shown under it; the sections nothing tests."""
    branch = group(_("Requirements the change touches"), "requirements")
    shown: set[int] = set()
    untested: list[str] = []
    touched = list(ranking.touched) if ranking.specified else []
    if chosen is not None and chosen not in touched:
        touched.append(chosen)
    if not ranking.specified:
        branch["children"].append(
            node(_("No requirement describes this: a gap in the specification"), "gap")
        )
        for context in ranking.touched:
            if context is chosen:
                continue
            first = corpus.requirements[context.statements[0]]
            branch["children"].append(
                source_node(
                    first.loaded,
                    first.statement.section,
                    "context",
                    note=_(
                        "the nearest part of the specification: context, not a requirement "
                        "of this change"
                    ),  # fmt: skip
                )
            )
    for item in touched:
        requirement, tests, methods = _requirement(item, corpus, chosen)
        shown |= tests
        if not methods:
            untested.append(item.key[1])
        branch["children"].append(requirement)
    return branch, shown, untested


def _why(item: Touched, corpus: Corpus, chosen: Touched | None) -> str:
    reasons = []
    words = sorted({w for m in item.matches.values() for w in m.shared})
    if words:
        reasons.append(_("shares %(words)s") % {"words": ", ".join(words[:6])})
    if item.tests:
        names = sorted({corpus.tests[j].section.label for j in item.tests})
        reasons.append(
            _("tested by %(tests)s, which matches the change") % {"tests": "; ".join(names[:3])}
        )
    if item.referenced_by:
        reasons.append(_("named by %(statements)s") % {"statements": ", ".join(item.referenced_by)})
    if item is chosen:
        reasons.append(_("chosen as the changed part"))
    return "; ".join(reasons)


def _requirement(
    item: Touched, corpus: Corpus, chosen: Touched | None
) -> tuple[Node, set[int], bool]:
    """A requirement section's node: why, its statements with evidence, the tests covering it."""
    first = corpus.requirements[item.statements[0]]
    found = source_node(first.loaded, first.statement.section, "requirement")
    version = first.loaded.version.display_label
    found["note"] = "; ".join(
        filter(None, [_("version %(version)s") % {"version": version}, _why(item, corpus, chosen)])
    )
    evidence = [i for i in item.statements if i in item.matches or _covered_by(i, item, corpus)]
    evidence.sort(key=lambda i: -(item.matches[i].score if i in item.matches else 0.0))
    for i in sorted((evidence or item.statements)[:MAX_STATEMENTS]):
        statement = corpus.requirements[i].statement
        quote = node(f"«{statement.body}»", "statement", prefix=f"{statement.id}:")
        quote["url"] = found["url"]
        found["children"].append(quote)
    covers = _section_covers(item, corpus)
    tests: set[int] = set()
    methods = False
    for test, cover in covers[:MAX_COVERS]:
        tests.add(test)
        unit = corpus.tests[test]
        methods = methods or unit.kind == "method"
        found["children"].append(_cover_node(unit, cover))
    if not methods:
        text = (
            _("No test method checks it (only declared or its test environment listed)")
            if covers
            else _("No test case or checklist item covers it")
        )
        found["children"].append(node(text, "none"))
    return found, tests, methods


def _covered_by(i: int, item: Touched, corpus: Corpus) -> bool:
    return any(test in item.tests for test, _ in corpus.covers.get(i, []))


def _section_covers(item: Touched, corpus: Corpus) -> list[tuple[int, Cover]]:
    """The test units covering any statement of the section, each once: methods first, then
    the tests that match the change, then by the coverage evidence."""
    best: dict[int, Cover] = {}
    for i in item.statements:
        for test, cover in corpus.covers.get(i, []):
            if test not in best or cover.evidence.strength > best[test].evidence.strength:
                best[test] = cover
    order = {"method": 0, "declared": 1, "environment": 2}
    return sorted(
        best.items(),
        key=lambda kv: (
            order.get(corpus.tests[kv[0]].kind, 3),
            kv[0] not in item.tests,
            -kv[1].evidence.strength,
        ),
    )


def _cover_node(unit, cover: Cover) -> Node:
    reasons = reasons_text(cover.evidence.reasons())
    note = _("%(kind)s; matched by %(reasons)s") % {
        "kind": str(TEST_KINDS[unit.kind]),
        "reasons": reasons,
    }
    if cover.evidence.terms:
        note += f" ({', '.join(cover.evidence.terms[:5])})"
    found = source_node(unit.loaded, unit.section, "test", note=note)
    found["test_kind"] = unit.kind
    return found


def _test_node(unit, found: Match) -> Node:
    note = _("%(kind)s; shares %(words)s with the change") % {
        "kind": str(TEST_KINDS[unit.kind]),
        "words": ", ".join(found.shared[:6]),
    }
    result = source_node(unit.loaded, unit.section, "test", note=note)
    result["test_kind"] = unit.kind
    result["near"] = True  # shares the change's words; covers no requirement shown
    return result


def _other_tests(ranking: Ranking, corpus: Corpus, shown: set[int]) -> Node:
    """Test sections sharing the change's words that no requirement above leads to."""
    branch = group(_("Other tests near the change (run them again)"), "tests")
    for test, found in ranking.tests:
        if test in shown or len(branch["children"]) >= MAX_OTHER_TESTS:
            continue
        branch["children"].append(_test_node(corpus.tests[test], found))
    if not branch["children"]:
        branch["children"].append(node(_("No other test section shares its words"), "empty"))
    return branch


def _gaps(ranking: Ranking, corpus: Corpus, untested: list[str]) -> Node:
    branch = group(_("Gaps"), "gaps")
    if not ranking.specified:
        branch["children"].append(
            node(_("No requirement describes this change: specify it before testing"), "gap")
        )
    keys = set(untested)
    for item in ranking.touched if ranking.specified else []:
        if item.key[1] not in keys:
            continue
        first = corpus.requirements[item.statements[0]]
        branch["children"].append(
            source_node(
                first.loaded,
                first.statement.section,
                "gap",
                note=_("no test method checks this requirement"),
            )
        )
    if not branch["children"]:
        branch["children"].append(node(_("Every requirement above has a test method"), "empty"))
    return branch


def _knowledge(description: str, change: Terms, user) -> Node:
    branch = group(_("Checks the knowledge base teaches"), "knowledge")
    for page in checks.knowledge_pages(description, change, user):
        section = page.section or (page.loaded.sections[0] if page.loaded.sections else None)
        if section is None:
            continue
        found = source_node(page.loaded, section, "wiki")
        found["label"] = page.loaded.document.title
        for check in page.checks:
            found["children"].append(node(check, "check", prefix=_("Check:")))
        branch["children"].append(found)
    if not branch["children"]:
        branch["children"].append(node(_("No knowledge page matches this change"), "empty"))
    return branch


def _code(description: str, user) -> Node:
    branch = group(_("Code touched (program text)"), "code")
    for found in checks.code_files(description, user):
        branch["children"].append(source_node(found.loaded, found.section, "code"))
    if not branch["children"]:
        branch["children"].append(node(_("No program text matches this change"), "empty"))
    return branch


def _tickets(query: str, user) -> Node | None:
    """Closed tickets near the description, from the tracker sources the user reads (None
    when there is no tracker source)."""
    readable = Source.objects.visible_to(user) if user is not None else Source.objects.all()
    trackers = list(readable.filter(kind=Source.Kind.TRACKER).values_list("pk", flat=True))
    if not trackers:
        return None
    branch = group(_("Related closed tickets"), "tickets")
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
        branch["children"].append(
            node(document.title, "ticket", url=chunk_url(document.pk, version_id, hit.chunk_id))
        )
    if not branch["children"]:
        branch["children"].append(node(_("No closed ticket matches"), "empty"))
    return branch


def links(root: Node) -> list[str]:
    """Every link in the map (for tests and exports)."""
    found = [root["url"]] if root.get("url") else []
    for child in root.get("children", []):
        found += links(child)
    return found
