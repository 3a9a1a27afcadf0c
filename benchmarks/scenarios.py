"""The guided test analysis's mind map scored on ``../shared/eval/scenarios_ru`` (the HSE app).

Each case is a change description with the ТЗ sections it touches, the ПМИ sections that test
them, the wiki pages whose checks apply and a few sections a naive match picks wrongly. The map
is built as ``manage.py analyse`` builds it (no questions answered, no LLM, staff reading), on
the demo knowledge base (kept in ``var/bench-scenarios`` between runs with ``--reuse``).

Printed per case and overall:
- requirement sections: recall (found / expected) and precision (the share of the map's
  requirement nodes that are expected), micro over the cases, and macro recall;
- test sections: recall over the cases that have tests;
- gap handling: a change nothing specifies must be said to be a gap (and show no requirement
  node); a change whose requirements nothing tests must show them as uncovered;
- noise: the ``not_relevant`` sections anywhere in the map, and title or boilerplate nodes
  (names, contents, registration sheet, document lists...);
- wiki: the cases with at least one listed page in the map, and the recall of listed pages;
- time per map (p50, max), the first map aside (it loads the language models).

Matching: a node matches a reference by (document, section number), else by (document, title)
with whitespace collapsed, a trailing dot stripped and case folded.

Run: ``.venv/bin/python benchmarks/scenarios.py [--reuse] [--show] [--cases FILE] [--quick]``
(``--quick``: the first three cases on the quick demo corpus, ``_setup.demo_corpus``).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from _setup import EVAL, arguments, percentile, setup, teardown
from answers import build_knowledge_base

CASES = EVAL / "scenarios_ru" / "cases.jsonl"
# Sections of a GOST document that hold no requirement and no check: what the map must never
# show (title page matter, contents, registration sheet, document lists, terms, literature).
BOILERPLATE = re.compile(
    r"наименовани|обозначени|аннотаци|содержани|оглавлени|лист регистрации|"
    r"состав программной документации|список (?:использ|литератур)|термин|приложение \d|"
    r"область применения|основани[яе] для разработки|цель испытаний",
    re.IGNORECASE,
)


def _norm(text: str) -> str:
    return " ".join(text.split()).rstrip(".").casefold()


def walk(node: dict, branch: str = "", depth: int = 0):
    """Every node with the kind of the top-level branch it sits in."""
    yield node, branch
    for child in node.get("children", []):
        yield from walk(child, branch or child.get("branch", child.get("kind", "")), depth + 1)


def source_of(node: dict) -> tuple[str, str, str] | None:
    """(document, section, title) of a node that stands for a section of a document."""
    source = node.get("source")
    if source:
        return source.get("document", ""), source.get("section", ""), source.get("title", "")
    # A map of the retrieval-dump days (before ``source``): "Document · 4.1 Title".
    match = re.match(r"^(.+?) · (?:(\d+(?:\.\d+)*) )?(.*)$", node.get("label", ""))
    return (match[1], match[2] or "", match[3]) if match else None


def matches(node_source: tuple[str, str, str], reference: dict) -> bool:
    document, section, title = node_source
    if _norm(document) != _norm(reference["doc"]):
        return False
    if section and reference["section"]:
        return section == reference["section"]
    return _norm(title) == _norm(reference["title"])


def score_case(case: dict, tree: dict) -> dict:
    nodes = list(walk(tree))
    requirement_nodes = [
        source_of(n) for n, _ in nodes if n.get("kind") == "requirement" and source_of(n)
    ]
    test_nodes = [source_of(n) for n, _ in nodes if n.get("kind") == "test" and source_of(n)]
    any_nodes = [source_of(n) for n, _ in nodes if n.get("kind") not in ("root", "group")]
    any_nodes = [s for s in any_nodes if s]
    # Each distinct section once: a section shown twice (under two statements) is one node.
    requirement_nodes = list(dict.fromkeys(requirement_nodes))
    found_req = [r for r in case["requirements"] if any(matches(n, r) for n in requirement_nodes)]
    right_nodes = [n for n in requirement_nodes if any(matches(n, r) for r in case["requirements"])]
    found_tests = [t for t in case["tests"] if any(matches(n, t) for n in test_nodes)]
    noise = [r for r in case["not_relevant"] if any(matches(n, r) for n in any_nodes)]
    boilerplate = sorted({f"{d} {s} {t}" for d, s, t in any_nodes if BOILERPLATE.search(t)})
    urls = " ".join(n.get("url", "") + " " + json.dumps(n.get("source", {}), ensure_ascii=False)
                    for n, _ in nodes)  # fmt: skip
    wiki_found = [w for w in case["wiki"] if w.split("/", 1)[1] in urls]
    gap = tree.get("gap", {}) if isinstance(tree.get("gap"), dict) else {}
    if not case["requirements"]:
        gap_ok = bool(gap.get("unspecified")) and not requirement_nodes
    elif not case["tests"]:
        uncovered = set(gap.get("untested", []))
        gap_ok = all(r["section"] in uncovered for r in case["requirements"])
    else:
        gap_ok = None
    return {
        "id": case["id"],
        "req_expected": len(case["requirements"]),
        "req_found": len(found_req),
        "req_nodes": len(requirement_nodes),
        "req_right": len(right_nodes),
        "tests_expected": len(case["tests"]),
        "tests_found": len(found_tests),
        "noise": noise,
        "boilerplate": boilerplate,
        "wiki_expected": len(case["wiki"]),
        "wiki_found": len(wiki_found),
        "gap_ok": gap_ok,
        "requirements": [f"{s} {t}" for _, s, t in requirement_nodes],
        "tests": sorted({f"{s} {t}" for _, s, t in test_nodes}),
        "missed": [
            f"{r['section']} {r['title']}" for r in case["requirements"] if r not in found_req
        ],
        "missed_tests": [
            f"{t['section']} {t['title']}" for t in case["tests"] if t not in found_tests
        ],
    }


def build(description: str) -> dict:
    from scenarios.analysis import analyse

    return analyse(description, user=None)


def report(scores: list[dict], times: list[float]) -> None:
    req_expected = sum(s["req_expected"] for s in scores)
    req_found = sum(s["req_found"] for s in scores)
    req_nodes = sum(s["req_nodes"] for s in scores)
    req_right = sum(s["req_right"] for s in scores)
    with_req = [s for s in scores if s["req_expected"]]
    macro = sum(s["req_found"] / s["req_expected"] for s in with_req) / max(len(with_req), 1)
    tests_expected = sum(s["tests_expected"] for s in scores)
    tests_found = sum(s["tests_found"] for s in scores)
    noise = sum(len(s["noise"]) for s in scores)
    boilerplate = sum(len(s["boilerplate"]) for s in scores)
    gaps = [s for s in scores if s["gap_ok"] is not None]
    wiki_hit = sum(1 for s in scores if s["wiki_found"])
    wiki_found = sum(s["wiki_found"] for s in scores)
    wiki_expected = sum(s["wiki_expected"] for s in scores)
    later = times[1:] or times
    print(f"cases: {len(scores)}")
    print(
        f"requirement sections: recall {req_found}/{req_expected} = "
        f"{req_found / max(req_expected, 1):.2f} (macro {macro:.2f}); precision "
        f"{req_right}/{req_nodes} = {req_right / max(req_nodes, 1):.2f}"
    )
    print(
        f"test sections: recall {tests_found}/{tests_expected} = "
        f"{tests_found / max(tests_expected, 1):.2f}"
    )
    print(
        f"gap handling: {sum(1 for s in gaps if s['gap_ok'])}/{len(gaps)} "
        f"({', '.join(s['id'] + (' ok' if s['gap_ok'] else ' FAIL') for s in gaps)})"
    )
    print(
        f"noise: {noise} not_relevant sections in {sum(1 for s in scores if s['noise'])} maps; "
        f"{boilerplate} title or boilerplate nodes"
    )
    print(
        f"wiki: a listed page in {wiki_hit}/{len(scores)} maps; pages {wiki_found}/{wiki_expected}"
        f" = {wiki_found / max(wiki_expected, 1):.2f}"
    )
    print(
        f"time per map: p50 {percentile(later, 50):.2f} s, max {max(later):.2f} s "
        f"(first map {times[0]:.2f} s, with the language models' loading)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reuse", action="store_true", help="keep var/bench-scenarios")
    parser.add_argument("--show", action="store_true", help="each case's nodes")
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--json", type=Path, help="write each case's map here")
    args = arguments(parser)
    setup("scenarios", fresh=not args.reuse)
    try:
        build_knowledge_base()
        cases = [json.loads(line) for line in args.cases.read_text().splitlines() if line.strip()]
        cases = cases[: 3 if args.quick else None]
        scores, times, maps = [], [], {}
        for case in cases:
            started = time.perf_counter()
            tree = build(case["description"])
            times.append(time.perf_counter() - started)
            maps[case["id"]] = tree
            score = score_case(case, tree)
            scores.append(score)
            if args.show:
                print(
                    f"{case['id']} {times[-1]:.1f} s  req {score['req_found']}/"
                    f"{score['req_expected']} of {score['req_nodes']} nodes  tests "
                    f"{score['tests_found']}/{score['tests_expected']}  wiki "
                    f"{score['wiki_found']}/{score['wiki_expected']}  gap {score['gap_ok']}"
                )
                print(f"    requirements: {score['requirements']}")
                print(f"    missed: {score['missed']}  tests missed: {score['missed_tests']}")
                print(f"    tests: {score['tests']}")
                if score["noise"] or score["boilerplate"]:
                    print(f"    noise: {score['noise']} boilerplate: {score['boilerplate']}")
        if args.json:
            args.json.write_text(json.dumps(maps, ensure_ascii=False, indent=1))
        report(scores, times)
    finally:
        teardown()


if __name__ == "__main__":
    main()
