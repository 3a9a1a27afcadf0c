"""Retrieval of the right document for questions asked in other words (kb_dev_ru).

The knowledge base is the demo one, built as in ``benchmarks/answers.py`` (kept in
``var/bench-answers`` between runs with ``--reuse``). The answerable questions of
``../shared/eval/kb_dev_ru/questions.jsonl`` (70: paraphrases, table questions, keywords) go
through ``knowledge.retrieval.hybrid.search`` as the command line's staff user would ask them.

Documents are counted once, in the order their first chunk appears. Printed: document
Recall@1/@5/@20 and MRR for the dense list alone, the lexical list alone, RRF, the calibrated
fusion (no cap, no threshold) and the final ranking with the defaults (cap per document,
minimum score, k = KB_SEARCH_RESULTS); then Recall@1/@5 by question style.

Run: ``.venv/bin/python benchmarks/retrieval_kb.py [--reuse] [--show] [--quick]`` (``--quick``: the
quick demo corpus and the questions of it, as ``answers.py --quick``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict

from _setup import EVAL, arguments, percentile, quick_questions, setup, teardown
from answers import build_knowledge_base, gold_keys
from retrieval import CachedEmbedder

QUESTIONS = EVAL / "kb_dev_ru" / "questions.jsonl"


def document_ranking(result, documents: dict[int, str]) -> list[str]:
    ranking: list[str] = []
    for hit in result.hits:
        path = documents.get(hit.document_id, "")
        if path not in ranking:
            ranking.append(path)
    return ranking


def evaluate(items, documents, embedder, options, show: bool = False) -> dict:
    from knowledge.retrieval.hybrid import search

    ranks: list[int | None] = []
    latencies: list[float] = []
    by_style: dict[str, list[int | None]] = defaultdict(list)
    for item in items:
        started = time.perf_counter()
        result = search(item["question"], options=options, embedder=embedder, reranker=None)
        latencies.append((time.perf_counter() - started) * 1000)
        ranking = document_ranking(result, documents)
        gold = set(item["gold_docs"])
        rank = next((i for i, path in enumerate(ranking, 1) if path in gold), None)
        ranks.append(rank)
        by_style[item["style"]].append(rank)
        if show and (rank is None or rank > 1):
            print(f"    rank {rank} {item['id']} {item['question'][:80]} -> {ranking[:2]}")
    return {"ranks": ranks, "by_style": by_style, "latencies": latencies}


def recall(ranks: list[int | None], k: int) -> float:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else 0.0


def mrr(ranks: list[int | None]) -> float:
    return sum(1 / r for r in ranks if r) / len(ranks) if ranks else 0.0


def line(name: str, m: dict) -> str:
    r = m["ranks"]
    return (
        f"  {name:<34} R@1 {recall(r, 1):.3f}  R@5 {recall(r, 5):.3f}  R@20 {recall(r, 20):.3f}"
        f"  MRR {mrr(r):.3f}   (p50 {percentile(m['latencies'], 50):.0f} ms)"
    )


def configurations():
    from knowledge.retrieval.hybrid import SearchOptions
    from knowledge.retrieval.weights import Fusion, Hits, Retrieval

    wide = {
        "hits": Hits(k=40, per_document=40),
        "retrieval": Retrieval(candidates=60),
        "min_score": -1.0,
    }
    return [
        ("dense only", SearchOptions(lists=("dense",), **wide)),
        ("lexical only (BM25)", SearchOptions(lists=("lexical",), **wide)),
        (
            "hybrid RRF k=60",
            SearchOptions(lists=("dense", "lexical"), fusion=Fusion(method="rrf"), **wide),
        ),
        ("hybrid calibrated (no cap/threshold)", SearchOptions(lists=("dense", "lexical"), **wide)),
        ("final ranking, defaults", SearchOptions()),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reuse", action="store_true", help="keep an earlier run's knowledge base")
    parser.add_argument("--show", action="store_true", help="print the misses of the final ranking")
    args = arguments(parser)
    setup("answers", fresh=not args.reuse)
    try:
        build_knowledge_base()
        from knowledge.embedding import get_embedder

        embedder = CachedEmbedder(get_embedder())
        documents, _ = gold_keys()
        items = [json.loads(x) for x in QUESTIONS.read_text().splitlines() if x.strip()]
        items = quick_questions([x for x in items if x["group"] == "answerable"])
        print(f"kb_dev answerable questions: {len(items)}; documents counted once")
        final = None
        for name, options in configurations():
            last = name.startswith("final")
            measured = evaluate(items, documents, embedder, options, show=args.show and last)
            print(line(name, measured))
            final = measured
        print("  final ranking by style:")
        for style, ranks in sorted(final["by_style"].items()):
            print(
                f"    {style:<12} n={len(ranks):<3} R@1 {recall(ranks, 1):.3f}  R@5 {recall(ranks, 5):.3f}"
            )
    finally:
        teardown()


if __name__ == "__main__":
    main()
