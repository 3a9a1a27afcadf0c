"""The guided analysis's mind map: what to test for a described change, from the documents.

    root: the task
    ├── requirements: the requirement sections the change touches (scenarios.relevance),
    │   ranked, each with why, the statements that say so and the tests that cover it
    │   (scenarios.requirement_nodes); the less likely ones in a folded branch marked low
    │   confidence; or "no requirement describes this", with the nearest sections as context
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

from django.utils.translation import gettext as _

from knowledge.models import Chunk, Document, Source
from knowledge.retrieval import Filters, SearchOptions, chunk_url, search
from knowledge.retrieval.weights import Hits
from scenarios import checks, meaning
from scenarios.corpus import Corpus, corpus_for
from scenarios.meaning import Tie
from scenarios.nodes import TEST_KINDS, Node, group, node, source_node
from scenarios.relevance import Ranking, Touched, rank
from scenarios.requirement_nodes import requirements_branch
from scenarios.terms import Match, Terms, read_terms, with_abbreviations

MAX_OTHER_TESTS = 5


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
    corpus = corpus_for(user)
    change, ranking = read_change(description, corpus)
    chosen = _chosen(component, corpus, ranking)
    root = node(title, "root", url=task_url, note="; ".join(context))
    requirements, shown_tests, untested = requirements_branch(ranking, corpus, chosen)
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


def read_change(description: str, corpus: Corpus) -> tuple[Terms, Ranking]:
    """The change's terms (with the other form of the abbreviations the documents define) and
    the requirement sections it touches, by its words and its statements' meaning."""
    change = with_abbreviations(read_terms(description), description, corpus.abbreviations)
    return change, rank(change, corpus, meaning.read(description, corpus))


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


def _test_node(unit, found: Match) -> Node:
    note = _("%(kind)s; shares %(words)s with the change") % {
        "kind": str(TEST_KINDS[unit.kind]),
        "words": ", ".join(found.shared[:6]),
    }
    result = source_node(unit.loaded, unit.section, "test", note=note)
    result["test_kind"] = unit.kind
    result["near"] = True  # shares the change's words; covers no requirement shown
    return result


def _tied_test_node(unit, tie: Tie) -> Node:
    note = _(
        "%(kind)s; close in meaning to the change: «%(change)s» and «%(sentence)s» (%(closeness)s)"
    ) % {
        "kind": str(TEST_KINDS[unit.kind]),
        "change": tie.change,
        "sentence": tie.sentence,
        "closeness": f"{tie.closeness:.2f}",
    }
    result = source_node(unit.loaded, unit.section, "test", note=note)
    result["test_kind"] = unit.kind
    result["near"] = True
    result["closeness"] = tie.closeness
    return result


def _other_tests(ranking: Ranking, corpus: Corpus, shown: set[int]) -> Node:
    """Test sections sharing the change's words, then those close to it in meaning, that no
    requirement above leads to."""
    branch = group(_("Other tests near the change (run them again)"), "tests")
    tied = sorted(ranking.test_ties.items(), key=lambda item: -item[1].closeness)
    near = [(test, found, None) for test, found in ranking.tests]
    near += [(test, None, tie) for test, tie in tied if test not in dict(ranking.tests)]
    for test, found, tie in near:
        if test in shown or len(branch["children"]) >= MAX_OTHER_TESTS:
            continue
        unit = corpus.tests[test]
        branch["children"].append(
            _test_node(unit, found) if found is not None else _tied_test_node(unit, tie)
        )
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
