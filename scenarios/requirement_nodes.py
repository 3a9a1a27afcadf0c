"""The map's requirements branch: each section the change touches, why, and the tests covering it.

A requirement node says how sure the map is: its ``rank`` among the sections, its
``confidence`` ("high"; "low" for the ones shown folded) and ``why``: the words of the change
its statements share (and which statement says them, or its section's title), the tests that
lead to it, the statements tying it to another section, how its statements state a
requirement. Its first children are its **ties**: the change's statement and the
requirement's sentence (or the sentence of a test checking it) closest to it in meaning, with
their closeness (``scenarios.meaning``), at most ``MAX_TIES``. The low-confidence sections sit
in a branch of their own, folded.
"""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from scenarios.corpus import Corpus
from scenarios.coverage import Cover, reasons_text
from scenarios.meaning import Tie
from scenarios.nodes import TEST_KINDS, Node, group, node, source_node
from scenarios.relevance import Ranking, Touched
from scenarios.terms import Match

MAX_STATEMENTS = 3  # per requirement: the ones with evidence
MAX_COVERS = 4  # per requirement
MAX_WORDS = 6  # shared words named in a node's why
MAX_TIES = 2  # per requirement: the closest in meaning

# How a statement states a requirement (``scenarios.statements``), in words.
FORMS = {
    "part": gettext_lazy("stated in the requirements part"),
    "obligation": gettext_lazy("an obligation"),
    "function": gettext_lazy("an item of a list of functions"),
    "acceptance": gettext_lazy("an acceptance criterion"),
    "limit": gettext_lazy("a parameter with a limit"),
    "purpose": gettext_lazy("the product's purpose"),
    "story": gettext_lazy("a user story"),
}


def requirements_branch(
    ranking: Ranking, corpus: Corpus, chosen: Touched | None
) -> tuple[Node, set[int], list[str]]:
    """The requirements branch; the test units shown under its confident requirements; the
    sections nothing tests."""
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
        branch["children"] += [
            _context(item, corpus) for item in ranking.touched if item is not chosen
        ]
    for rank, item in enumerate(touched, start=1):
        requirement, tests, methods = _requirement(item, corpus, chosen, rank)
        shown |= tests
        if not methods:
            untested.append(item.key[1])
        branch["children"].append(requirement)
    if ranking.specified and ranking.folded:
        folded = group(_("Less likely (low confidence, folded)"), "folded")
        folded["confidence"] = "low"
        folded["note"] = _(
            "sections sharing fewer of the change's words than those above: check whether "
            "they are touched"
        )
        for rank, item in enumerate(ranking.folded, start=len(touched) + 1):
            # Their tests stay among the other tests near the change: this branch is folded.
            requirement, _tests, _methods = _requirement(item, corpus, None, rank)
            folded["children"].append(requirement)
        branch["children"].append(folded)
    return branch, shown, untested


def _context(item: Touched, corpus: Corpus) -> Node:
    first = corpus.requirements[item.statements[0]]
    return source_node(
        first.loaded,
        first.statement.section,
        "context",
        note=_("the nearest part of the specification: context, not a requirement of this change"),
    )


def why(item: Touched, corpus: Corpus, chosen: Touched | None) -> dict[str, object]:
    """Why the section is in the map (see the module docstring), as data."""
    words: dict[str, str] = {}  # lemma -> where: a statement id, or "" for the section's title
    for i, found in sorted(item.matches.items(), key=lambda kv: -kv[1].score):
        requirement = corpus.requirements[i]
        for lemma in found.shared:
            words.setdefault(lemma, requirement.statement.id if lemma in requirement.terms else "")
    forms = {corpus.requirements[i].statement.form for i in item.matches} or {
        corpus.requirements[i].statement.form for i in item.statements
    }
    return {
        "shared": words,
        "ties": [_tie_reason(tie, where, corpus) for tie, where in _ties(item)[:MAX_TIES]],
        "tests": sorted({corpus.tests[j].section.label for j in item.tests}),
        "tied_by": list(item.referenced_by) if item.named else [],
        "forms": sorted(forms),
        "chosen": item is chosen,
        "relative": round(item.relative, 2),
    }


def _ties(item: Touched) -> list[tuple[Tie, tuple[str, int]]]:
    """The section's ties, closest first, one per change statement: a statement's own, then
    a test's (("requirement", statement index) or ("test", test unit index))."""
    found = [(t, ("requirement", i)) for i, t in item.ties.items()]
    found += [(t, ("test", j)) for j, t in item.test_ties.items()]
    found.sort(key=lambda pair: (pair[1][0] != "requirement", -pair[0].closeness))
    seen: set[str] = set()
    kept = []
    for tie, where in found:
        if tie.change not in seen:
            seen.add(tie.change)
            kept.append((tie, where))
    return kept


def _tie_reason(tie: Tie, where: tuple[str, int], corpus: Corpus) -> dict[str, object]:
    kind, index = where
    said = (
        corpus.requirements[index].statement.id
        if kind == "requirement"
        else corpus.tests[index].section.label
    )
    return {"change": tie.change, "sentence": tie.sentence, "closeness": tie.closeness,
            "kind": kind, "where": said}  # fmt: skip


def why_text(reasons: dict) -> str:
    """The why in words: "shares «поле» (4.2-1), «интерфейс» (its title); ..."."""
    parts = []
    shared = list(reasons["shared"].items())[:MAX_WORDS]
    if shared:
        title = _("its section's title")
        said = [f"«{word}» ({where or title})" for word, where in shared]
        parts.append(_("shares %(words)s with the change") % {"words": ", ".join(said)})
    ties = reasons.get("ties") or []
    if ties:
        parts.append(
            _("close in meaning to the change (%(closeness)s)")
            % {"closeness": ", ".join(f"{t['closeness']:.2f}" for t in ties)}
        )
    if reasons["tests"]:
        parts.append(
            _("tested by %(tests)s, which matches the change")
            % {"tests": "; ".join(reasons["tests"][:3])}
        )
    if reasons["tied_by"]:
        parts.append(
            _("tied to a touched section by %(statements)s")
            % {"statements": ", ".join(reasons["tied_by"])}
        )
    if reasons["chosen"]:
        parts.append(_("chosen as the changed part"))
    forms = [str(FORMS[f]) for f in reasons["forms"] if f in FORMS]
    if forms:
        parts.append(_("stated as %(forms)s") % {"forms": ", ".join(forms)})
    return "; ".join(parts)


def _confidence_text(item: Touched, rank: int) -> str:
    level = _("high") if item.confident else _("low, folded")
    return _(
        "rank %(rank)s, confidence %(level)s (%(share)s %% of the best section's evidence)"
    ) % {
        "rank": rank,
        "level": level,
        "share": round(100 * item.relative),
    }


def _requirement(
    item: Touched, corpus: Corpus, chosen: Touched | None, rank: int
) -> tuple[Node, set[int], bool]:
    """A requirement section's node: why, its statements with evidence, the tests covering it."""
    first = corpus.requirements[item.statements[0]]
    found = source_node(first.loaded, first.statement.section, "requirement")
    found["confidence"] = "high" if item.confident else "low"
    if not item.confident:
        found["prefix"] = _("Low confidence:")  # the exports' mark (the page shows a badge)
    found["rank"] = rank
    found["why"] = why(item, corpus, chosen)
    version = first.loaded.version.display_label
    found["note"] = "; ".join(
        filter(
            None,
            [
                _confidence_text(item, rank),
                why_text(found["why"]),
                _("version %(version)s") % {"version": version},
            ],
        )
    )
    found["children"] += [tie_node(reason) for reason in found["why"]["ties"]]
    evidence = [
        i
        for i in item.statements
        if i in item.matches or i in item.ties or _covered_by(i, item, corpus)
    ]
    evidence.sort(key=lambda i: -(item.matches[i].score if i in item.matches else 0.0))
    for i in sorted((evidence or item.statements)[:MAX_STATEMENTS]):
        statement = corpus.requirements[i].statement
        quote = node(f"«{statement.body}»", "statement", prefix=f"{statement.id}:")
        quote["url"] = found["url"]
        quote["form"] = statement.form
        found["children"].append(quote)
    covers = _section_covers(item, corpus)
    tests: set[int] = set()
    methods = False
    for test, cover in covers[:MAX_COVERS]:
        tests.add(test)
        unit = corpus.tests[test]
        methods = methods or unit.kind == "method"
        found["children"].append(
            _cover_node(unit, cover, item.tests.get(test), item.test_ties.get(test))
        )
    if not methods:
        text = (
            _("No test method checks it (only declared or its test environment listed)")
            if covers
            else _("No test case or checklist item covers it")
        )
        found["children"].append(node(text, "none"))
    return found, tests, methods


def tie_node(reason: dict) -> Node:
    """A tie as a node: «the change's statement» ≈ «the document's sentence» (closeness), the
    same words in every export; ``closeness`` for the OPML and FreeMind attributes."""
    closeness = reason["closeness"]
    label = f"«{reason['change']}» ≈ «{reason['sentence']}» ({closeness:.2f})"
    if reason["kind"] == "requirement":
        note = _("the change's statement and the requirement's sentence %(where)s closest to it")
    else:
        note = _("the change's statement and the sentence of test %(where)s, which checks it")
    found = node(label, "tie", prefix=_("Close in meaning:"), note=note % reason)
    found["closeness"] = closeness
    found["tie"] = dict(reason)
    return found


def _covered_by(i: int, item: Touched, corpus: Corpus) -> bool:
    return any(test in item.tests for test, _ in corpus.covers.get(i, []))


def _section_covers(item: Touched, corpus: Corpus) -> list[tuple[int, Cover | None]]:
    """The test units covering any statement of the section, each once, and the methods that
    lead to it from the change by the test programme's parts (no cover of their own: None):
    methods first, then the tests that match the change, then by the coverage evidence."""
    best: dict[int, Cover | None] = {}
    for i in item.statements:
        for test, cover in corpus.covers.get(i, []):
            if test not in best or cover.evidence.strength > best[test].evidence.strength:
                best[test] = cover
    for test in [*item.tests, *item.test_ties]:
        best.setdefault(test, None)
    order = {"method": 0, "declared": 1, "environment": 2}
    return sorted(
        best.items(),
        key=lambda kv: (
            order.get(corpus.tests[kv[0]].kind, 3),
            kv[0] not in item.tests and kv[0] not in item.test_ties,
            -(kv[1].evidence.strength if kv[1] else 0.0),
        ),
    )


def _cover_node(unit, cover: Cover | None, near: Match | None, tie: Tie | None = None) -> Node:
    if cover is None and near is None and tie is not None:
        note = _(
            "%(kind)s; the test programme places it in this requirement's part; close in "
            "meaning to the change (%(closeness)s)"
        ) % {"kind": str(TEST_KINDS[unit.kind]), "closeness": f"{tie.closeness:.2f}"}
    elif cover is None:
        note = _(
            "%(kind)s; the test programme places it in this requirement's part; shares "
            "%(words)s with the change"
        ) % {
            "kind": str(TEST_KINDS[unit.kind]),
            "words": ", ".join(near.shared[:5] if near else []),
        }
    else:
        note = _("%(kind)s; matched by %(reasons)s") % {
            "kind": str(TEST_KINDS[unit.kind]),
            "reasons": reasons_text(cover.evidence.reasons()),
        }
        if cover.evidence.terms:
            note += f" ({', '.join(cover.evidence.terms[:5])})"
    found = source_node(unit.loaded, unit.section, "test", note=note)
    found["test_kind"] = unit.kind
    return found
