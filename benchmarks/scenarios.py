"""The guided test analysis's mind map scored on two public sets of change descriptions.

- ``../shared/eval/scenarios_ru``: ten changes of the demo's HSE app, each with the ТЗ sections
  it touches, the ПМИ sections that test them, the wiki pages whose checks apply and a few
  sections a naive match picks wrongly;
- ``benchmarks/scenarios_history``: sixteen changes written from the real history of the same
  ТЗ and ПМИ (``../shared/corpus/versions/hse_app_ru``), the touched sections read off each
  pair of versions' diff (its README says how), in the same format. Nobody tuned the map on
  them before they were written.

The map is built as ``manage.py analyse`` builds it (no questions answered, no LLM, staff
reading), on the demo knowledge base (kept in ``var/bench-scenarios`` between runs with
``--reuse``; ``--quick``: only the specifications and the wiki pages the cases list, in
``var/bench-scenarios-quick``).

Printed per set:
- requirement sections: recall (found / expected) and precision (the share of the map's
  requirement nodes that are expected), micro over the cases, and macro recall; the map's
  low-confidence requirements (folded) are not counted there, and the recall with them is
  printed beside;
- test sections: recall over the cases that have tests;
- ties: the requirement nodes showing a statement of the change and the sentence closest to
  it in meaning;
- gap handling: a change nothing specifies must be said to be a gap (and show no requirement
  node); a change whose requirements nothing tests must show them as uncovered;
- noise: the ``not_relevant`` sections anywhere in the map (folded ones too), and title or
  boilerplate nodes (names, contents, registration sheet, document lists...);
- wiki: the cases with at least one listed page in the map, and the recall of listed pages;
- time per map (p50, p95, max), the first map aside (it loads the language models).

``--sweep NAME=v1,v2,...`` (repeatable) sets one constant of the map at a time to each value
and prints the figures of both sets for each (the others at their defaults): how the
constants were chosen (``benchmarks/RESULTS.md``).

Matching: a node matches a reference by (document, section number), else by (document, title)
with whitespace collapsed, a trailing dot stripped and case folded.

Run: ``.venv/bin/python benchmarks/scenarios.py [--quick] [--reuse] [--show] [--cases FILE...]
[--sweep NAME=v1,v2]``.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from _setup import CORPUS, EVAL, ROOT, percentile, setup, teardown
from answers import build_knowledge_base

CASES = [
    EVAL / "scenarios_ru" / "cases.jsonl",
    ROOT / "benchmarks" / "scenarios_history" / "cases.jsonl",
]
# Sections of a GOST document that hold no requirement and no check: what the map must never
# show (title page matter, contents, registration sheet, document lists, terms, literature).
BOILERPLATE = re.compile(
    r"наименовани|обозначени|аннотаци|содержани|оглавлени|лист регистрации|"
    r"состав программной документации|список (?:использ|литератур)|термин|приложение \d|"
    r"область применения|основани[яе] для разработки|цель испытаний",
    re.IGNORECASE,
)
# The constants a sweep may set: name -> module.
CONSTANTS = {
    "KEEP": "scenarios.relevance",
    "FOLD": "scenarios.relevance",
    "MAX_SECTIONS": "scenarios.relevance",
    "MAX_FOLDED": "scenarios.relevance",
    "MIN_ANCHORS": "scenarios.relevance",
    "TEST_ANCHORS": "scenarios.relevance",
    "TRACE_WEIGHT": "scenarios.relevance",
    "TITLE_WEIGHT": "scenarios.relevance",
    "PART_LINK": "scenarios.relevance",
    "TERMS_LINK": "scenarios.relevance",
    "BOTH_WEIGHT": "scenarios.relevance",
    "REFERENCE_WEIGHT": "scenarios.relevance",
    "MEANING_WEIGHT": "scenarios.relevance",
    "MIN_CLOSENESS": "scenarios.meaning",
    "MIN_LIFT": "scenarios.meaning",
    "SURE_CLOSENESS": "scenarios.relevance",
    "ABBREVIATION_WEIGHT": "scenarios.terms",
    "NAME_WORD_WEIGHT": "scenarios.terms",
    "MAX_CONTEXT": "scenarios.relevance",
    "MAX_TESTS": "scenarios.relevance",
    "RARE_SHARE": "scenarios.terms",
    "OTHER_WEIGHT": "scenarios.terms",
    "ADJECTIVE_WEIGHT": "scenarios.terms",
    "HEADLINE_WORDS": "scenarios.terms",
    "MAX_STATEMENTS": "scenarios.requirement_nodes",
    "MAX_COVERS": "scenarios.requirement_nodes",
    "MAX_OTHER_TESTS": "scenarios.mindmap",
    "TERMS_ALONE": "scenarios.matching",
    "TERMS_MANY": "scenarios.matching",
    "MATCHING_RARE_SHARE": "scenarios.matching",
}


CPU_TIMES: list[float] = []  # this process's CPU per map (the database's work aside)


def _norm(text: str) -> str:
    return " ".join(text.split()).rstrip(".").casefold()


def walk(node: dict, branch: str = "", low: bool = False):
    """Every node with the kind of the top-level branch it sits in, and whether it sits in a
    low-confidence (folded) branch."""
    low = low or node.get("confidence") == "low"
    yield node, branch, low
    for child in node.get("children", []):
        yield from walk(child, branch or child.get("branch", child.get("kind", "")), low)


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


def _requirement_nodes(nodes: list, *, folded: bool) -> list[tuple[str, str, str]]:
    """Each distinct requirement section once (a section shown twice is one node); the
    low-confidence (folded) ones only with ``folded``."""
    found = [
        source_of(n)
        for n, _, low in nodes
        if n.get("kind") == "requirement" and source_of(n) and (folded or not low)
    ]
    return list(dict.fromkeys(found))


def score_case(case: dict, tree: dict) -> dict:
    nodes = list(walk(tree))
    requirement_nodes = _requirement_nodes(nodes, folded=False)
    with_folded = _requirement_nodes(nodes, folded=True)
    test_nodes = [
        source_of(n) for n, _, low in nodes if n.get("kind") == "test" and source_of(n) and not low
    ]
    any_nodes = [source_of(n) for n, _, _ in nodes if n.get("kind") not in ("root", "group")]
    any_nodes = [s for s in any_nodes if s]
    tied = [
        n
        for n, _, low in nodes
        if n.get("kind") == "requirement"
        and not low
        and any(c.get("kind") == "tie" for c in n.get("children", []))
    ]
    found_req = [r for r in case["requirements"] if any(matches(n, r) for n in requirement_nodes)]
    found_folded = [r for r in case["requirements"] if any(matches(n, r) for n in with_folded)]
    right_nodes = [n for n in requirement_nodes if any(matches(n, r) for r in case["requirements"])]
    found_tests = [t for t in case["tests"] if any(matches(n, t) for n in test_nodes)]
    noise = [r for r in case["not_relevant"] if any(matches(n, r) for n in any_nodes)]
    boilerplate = sorted({f"{d} {s} {t}" for d, s, t in any_nodes if BOILERPLATE.search(t)})
    urls = " ".join(n.get("url", "") + " " + json.dumps(n.get("source", {}), ensure_ascii=False)
                    for n, _, _ in nodes)  # fmt: skip
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
        "req_found_folded": len(found_folded),
        "req_nodes": len(requirement_nodes),
        "req_folded": len(with_folded) - len(requirement_nodes),
        "req_right": len(right_nodes),
        "req_tied": len({source_of(n) for n in tied}),
        "tests_expected": len(case["tests"]),
        "tests_found": len(found_tests),
        "noise": noise,
        "boilerplate": boilerplate,
        "wiki_expected": len(case["wiki"]),
        "wiki_found": len(wiki_found),
        "gap_ok": gap_ok,
        "requirements": [f"{s} {t}" for _, s, t in requirement_nodes],
        "folded": [f"{s} {t}" for _, s, t in with_folded if (_, s, t) not in requirement_nodes],
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


def figures(scores: list[dict], times: list[float]) -> dict:
    """The set's figures (see the module docstring)."""
    total = {
        key: sum(s[key] for s in scores)
        for key in ("req_expected", "req_found", "req_found_folded", "req_nodes", "req_right",
                    "req_folded", "req_tied", "tests_expected", "tests_found", "wiki_found",
                    "wiki_expected")
    }  # fmt: skip
    with_req = [s for s in scores if s["req_expected"]]
    gaps = [s for s in scores if s["gap_ok"] is not None]
    recall = total["req_found"] / max(total["req_expected"], 1)
    precision = total["req_right"] / max(total["req_nodes"], 1)
    return {
        **total,
        "cases": len(scores),
        "recall": recall,
        "f1": 2 * recall * precision / (recall + precision) if recall + precision else 0.0,
        "recall_folded": total["req_found_folded"] / max(total["req_expected"], 1),
        "macro": sum(s["req_found"] / s["req_expected"] for s in with_req) / max(len(with_req), 1),
        "precision": precision,
        "test_recall": total["tests_found"] / max(total["tests_expected"], 1),
        "gaps_ok": sum(1 for s in gaps if s["gap_ok"]),
        "gaps": len(gaps),
        "gap_cases": ", ".join(s["id"] + (" ok" if s["gap_ok"] else " FAIL") for s in gaps),
        "noise": sum(len(s["noise"]) for s in scores),
        "noise_maps": sum(1 for s in scores if s["noise"]),
        "boilerplate": sum(len(s["boilerplate"]) for s in scores),
        "wiki_hit": sum(1 for s in scores if s["wiki_found"]),
        "wiki_cases": sum(1 for s in scores if s["wiki_expected"]),
        "p50": percentile(times, 50),
        "p95": percentile(times, 95),
        "max": max(times) if times else 0.0,
    }


def report(name: str, f: dict, first: float | None) -> None:
    print(f"== {name}: {f['cases']} cases")
    print(
        f"requirement sections: recall {f['req_found']}/{f['req_expected']} = {f['recall']:.2f} "
        f"(macro {f['macro']:.2f}); precision {f['req_right']}/{f['req_nodes']} = "
        f"{f['precision']:.2f}; with the {f['req_folded']} folded low-confidence ones recall "
        f"{f['req_found_folded']}/{f['req_expected']} = {f['recall_folded']:.2f}"
    )
    print(
        f"test sections: recall {f['tests_found']}/{f['tests_expected']} = {f['test_recall']:.2f}"
    )
    print(f"ties: {f['req_tied']}/{f['req_nodes']} requirement nodes show one")
    print(f"gap handling: {f['gaps_ok']}/{f['gaps']} ({f['gap_cases']})")
    print(
        f"noise: {f['noise']} not_relevant sections in {f['noise_maps']} maps; "
        f"{f['boilerplate']} title or boilerplate nodes"
    )
    if f["wiki_cases"]:
        print(
            f"wiki: a listed page in {f['wiki_hit']}/{f['wiki_cases']} maps; pages "
            f"{f['wiki_found']}/{f['wiki_expected']} = "
            f"{f['wiki_found'] / max(f['wiki_expected'], 1):.2f}"
        )
    first_note = (
        "" if first is None else f" (first map {first:.2f} s, with the language models' loading)"
    )
    print(
        f"time per map: p50 {f['p50']:.2f} s, p95 {f['p95']:.2f} s, max {f['max']:.2f} s{first_note}"
    )
    cpu = CPU_TIMES[-f["cases"] :]
    print(
        f"this process's CPU per map: p50 {percentile(cpu, 50):.2f} s, p95 "
        f"{percentile(cpu, 95):.2f} s; load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores"
    )


def show(case: dict, score: dict, seconds: float) -> None:
    print(
        f"{case['id']} {seconds:.1f} s  req {score['req_found']}/{score['req_expected']} of "
        f"{score['req_nodes']} nodes (+{score['req_folded']} folded)  tests "
        f"{score['tests_found']}/{score['tests_expected']}  wiki "
        f"{score['wiki_found']}/{score['wiki_expected']}  gap {score['gap_ok']}"
    )
    print(f"    requirements: {score['requirements']}  folded: {score['folded']}")
    print(f"    missed: {score['missed']}  tests missed: {score['missed_tests']}")
    print(f"    tests: {score['tests']}")
    if score["noise"] or score["boilerplate"]:
        print(f"    noise: {score['noise']} boilerplate: {score['boilerplate']}")


def run_set(cases: list[dict], *, verbose: bool = False, maps: dict | None = None):
    """Every case's map, scored: (scores, seconds per map)."""
    scores, times = [], []
    for case in cases:
        started, cpu = time.perf_counter(), time.process_time()
        tree = build(case["description"])
        times.append(time.perf_counter() - started)
        CPU_TIMES.append(time.process_time() - cpu)
        score = score_case(case, tree)
        scores.append(score)
        if maps is not None:
            maps[case["id"]] = tree
        if verbose:
            show(case, score, times[-1])
    return scores, times


def _set_constant(name: str, value: float) -> None:
    """Sets one constant of the map and forgets what was built with the old value."""
    from scenarios import corpus

    module = importlib.import_module(CONSTANTS[name])
    attribute = "RARE_SHARE" if name == "MATCHING_RARE_SHARE" else name
    current = getattr(module, attribute)
    setattr(module, attribute, type(current)(value))
    if CONSTANTS[name] in ("scenarios.terms", "scenarios.matching"):
        corpus.forget()  # the corpus and the texts' terms were built with the old value


def _reuse_search_branches() -> None:
    """In a sweep, each case's knowledge, code and tickets branches are searched once: no
    constant swept changes them, and they are most of a map's time (its time is the main
    run's)."""
    from scenarios import mindmap

    for name in ("_knowledge", "_code", "_tickets"):
        built: dict = {}
        original = getattr(mindmap, name)

        def once(description, *args, _built=built, _original=original):
            if description not in _built:
                _built[description] = _original(description, *args)
            return copy.deepcopy(_built[description])

        setattr(mindmap, name, once)


def sweep(sets: dict[str, list[dict]], specs: list[str]) -> None:
    """One table per constant: each value's figures on each set (see the module docstring)."""
    _reuse_search_branches()
    for spec in specs:
        name, _, values = spec.partition("=")
        module = importlib.import_module(CONSTANTS[name])
        attribute = "RARE_SHARE" if name == "MATCHING_RARE_SHARE" else name
        default = getattr(module, attribute)
        print(f"\n### {name} (default {default})")
        print(
            "| value | set | req recall | precision | F1 | with folded (nodes) | test recall | "
            "gaps | noise | boilerplate |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        for value in values.split(","):
            _set_constant(name, float(value))
            for set_name, cases in sets.items():
                scores, times = run_set(cases)
                f = figures(scores, times)
                print(
                    f"| {value} | {set_name} | {f['req_found']}/{f['req_expected']} = "
                    f"{f['recall']:.2f} | {f['req_right']}/{f['req_nodes']} = {f['precision']:.2f}"
                    f" | {f['f1']:.2f} | {f['recall_folded']:.2f} ({f['req_folded']}) | "
                    f"{f['tests_found']}/"
                    f"{f['tests_expected']} = "
                    f"{f['test_recall']:.2f} | {f['gaps_ok']}/{f['gaps']} | {f['noise']} | "
                    f"{f['boilerplate']} |",
                    flush=True,
                )
        _set_constant(name, default)


def quick_corpus(cases: list[dict]) -> Path:
    """The specifications and the wiki pages the cases list, in a folder of their own: the
    same ingest and map, a knowledge base that loads in about a minute."""
    root = Path(tempfile.mkdtemp(prefix="kb-scenarios-quick-"))
    shutil.copytree(CORPUS / "specs_hse_app_ru", root / "specs_hse_app_ru")
    for page in sorted({w for case in cases for w in case["wiki"]}):
        target = root / page
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / page, target)
    return root


def _load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small knowledge base, fresh")
    parser.add_argument("--reuse", action="store_true", help="keep var/bench-scenarios")
    parser.add_argument("--show", action="store_true", help="each case's nodes")
    parser.add_argument("--cases", type=Path, nargs="+", default=CASES)
    parser.add_argument("--json", type=Path, help="write each case's map here")
    parser.add_argument("--sweep", action="append", default=[], metavar="NAME=v1,v2")
    args = parser.parse_args()
    for spec in args.sweep:
        if spec.partition("=")[0] not in CONSTANTS:
            parser.error(f"--sweep: unknown constant in {spec!r}; known: {', '.join(CONSTANTS)}")
    sets = {path.parent.name: _load(path) for path in args.cases}
    every = [case for cases in sets.values() for case in cases]
    setup("scenarios-quick" if args.quick else "scenarios", fresh=args.quick or not args.reuse)
    quick_root = quick_corpus(every) if args.quick else None
    try:
        if quick_root is not None:
            from knowledge.demo import ingest_demo_now

            print(f"ingested {ingest_demo_now(quick_root)} files (quick)")
        else:
            build_knowledge_base()
        maps: dict = {}
        started = time.perf_counter()
        build(every[0]["description"])  # loads the language models
        first = time.perf_counter() - started
        for name, cases in sets.items():
            scores, times = run_set(cases, verbose=args.show, maps=maps)
            report(name, figures(scores, times), first)
            first = None
        if args.json:
            args.json.write_text(json.dumps(maps, ensure_ascii=False, indent=1))
        if args.sweep:
            sweep(sets, args.sweep)
    finally:
        teardown()
        if quick_root is not None:
            shutil.rmtree(quick_root, ignore_errors=True)


if __name__ == "__main__":
    main()
