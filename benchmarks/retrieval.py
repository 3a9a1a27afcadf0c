"""Retrieval quality on XQuAD (Russian and English), through the portal's own code.

Passages -> documents: each XQuAD passage is written to ``<pid>.txt`` and ingested through the
normal ingestion (registration, parse, chunk, embed, store) as one document of the source
"XQuAD ru" or "XQuAD en"; a passage is shorter than a chunk, so one passage = one chunk. All
1190 questions per language then go through ``knowledge.retrieval.hybrid.search``, the function
the chat uses, with the minimum score off (we measure ranking, not refusal).

Prints Recall@1/5/20 and MRR for dense only, lexical only, the hybrid (calibrated fusion and
RRF) and hybrid+rerank when a reranker is configured; then Russian questions against the
English passages (cross-lingual Recall@5). Run: ``.venv/bin/python benchmarks/retrieval.py
[DENSE_WEIGHT ...] [--quick]`` (``--quick``: the first 6 passages of each language and their
questions).
"""

from __future__ import annotations

import argparse
import io
import json
import tempfile
import time
from pathlib import Path

import _setup
from _setup import EVAL, arguments, fill_second_vectors, percentile, setup, teardown

REFERENCE = {
    "ru": "BM25 R@1 0.908 R@5 0.983 MRR 0.941 | dense R@1 0.749 R@5 0.929 MRR 0.829 | RRF MRR 0.916",
    "en": "BM25 MRR 0.955 | RRF MRR 0.947",
}


def load(lang: str) -> tuple[list[dict], list[dict]]:
    folder = EVAL / "xquad"
    passages = [
        json.loads(x) for x in (folder / f"xquad_{lang}_passages.jsonl").read_text().splitlines()
    ]
    questions = [
        json.loads(x) for x in (folder / f"xquad_{lang}_questions.jsonl").read_text().splitlines()
    ]
    if _setup.QUICK:
        passages = passages[:6]
        questions = [q for q in questions if q["gold_pid"] in {p["pid"] for p in passages}]
    return passages, questions


def ingest(lang: str, passages: list[dict]) -> int:
    from django.core.management import call_command

    from knowledge.models import Source

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / f"xquad_{lang}"
        folder.mkdir()
        for passage in passages:
            (folder / f"{passage['pid']}.txt").write_text(passage["text"], encoding="utf-8")
        call_command("ingest", str(folder), source=f"XQuAD {lang}", json=True, stdout=io.StringIO())
    return Source.objects.get(name=f"XQuAD {lang}").pk


class CachedEmbedder:
    """The configured embedder with question embeddings cached across the configurations."""

    def __init__(self, inner) -> None:
        self.inner, self.cache = inner, {}
        self.model_id, self.dimensions = inner.model_id, inner.dimensions
        self.sparse_dimensions = inner.sparse_dimensions

    def embed_query(self, text: str):
        if text not in self.cache:
            self.cache[text] = self.inner.embed_query(text)
        return self.cache[text]

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)


def evaluate(questions, source_id, embedder, reranker, **option_args) -> dict[str, float]:
    from knowledge.models import Chunk
    from knowledge.retrieval.hybrid import SearchOptions, search
    from knowledge.retrieval.types import Filters
    from knowledge.retrieval.weights import Hits, Retrieval

    pid_of = {
        c.pk: Path(c.version.filename).stem
        for c in Chunk.objects.filter(source_id=source_id).select_related("version")
    }
    options = SearchOptions(
        hits=Hits(k=20, per_document=20, cascade=False),
        retrieval=Retrieval(candidates=40),
        min_score=-1.0,
        **option_args,
    )
    hits = {1: 0, 5: 0, 20: 0}
    reciprocal = 0.0
    latencies = []
    for question in questions:
        started = time.perf_counter()
        result = search(
            question["question"],
            filters=Filters(source_ids=[source_id]),
            options=options,
            embedder=embedder,
            reranker=reranker,
        )
        latencies.append((time.perf_counter() - started) * 1000)
        ranking = [pid_of.get(h.chunk_id) for h in result.hits]
        if question["gold_pid"] in ranking:
            rank = ranking.index(question["gold_pid"]) + 1
            reciprocal += 1 / rank
            for k in hits:
                hits[k] += rank <= k
    n = len(questions)
    return {
        "R@1": hits[1] / n,
        "R@5": hits[5] / n,
        "R@20": hits[20] / n,
        "MRR": reciprocal / n,
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
    }


def line(name: str, m: dict[str, float]) -> str:
    return (
        f"  {name:<28} R@1 {m['R@1']:.3f}  R@5 {m['R@5']:.3f}  R@20 {m['R@20']:.3f}  "
        f"MRR {m['MRR']:.3f}   (search p50 {m['p50_ms']:.0f} ms, p95 {m['p95_ms']:.0f} ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("weights", nargs="*", type=float, help="dense weights of the fusion")
    args = arguments(parser)
    setup("retrieval")
    from knowledge.embedding import get_embedder
    from knowledge.retrieval.rerank import get_reranker
    from knowledge.retrieval.weights import Fusion, weights

    embedder = CachedEmbedder(get_embedder())
    reranker = get_reranker()
    dense_weights = args.weights or [weights().fusion.dense_weight]
    sources = {}
    for lang in ("ru", "en"):
        passages, questions = load(lang)
        started = time.perf_counter()
        sources[lang] = ingest(lang, passages)
        fill_second_vectors()  # what the workers do after the ingest (e5, each unit)
        print(
            f"\nXQuAD {lang}: {len(passages)} passages ingested as {len(passages)} documents in "
            f"{time.perf_counter() - started:.1f} s; {len(questions)} questions; model {embedder.model_id}"
        )
        print(f"  reference (standalone libraries): {REFERENCE[lang]}")
        print(
            line("dense only", evaluate(questions, sources[lang], embedder, None, lists=("dense",)))
        )
        print(
            line(
                "lexical only (BM25)",
                evaluate(questions, sources[lang], embedder, None, lists=("lexical",)),
            )
        )
        print(
            line(
                "hybrid RRF k=60",
                evaluate(
                    questions,
                    sources[lang],
                    embedder,
                    None,
                    fusion=Fusion(method="rrf"),
                    lists=("dense", "lexical"),
                ),
            )
        )
        for w in dense_weights:
            print(
                line(
                    f"hybrid calibrated w={w:.2f}",
                    evaluate(
                        questions,
                        sources[lang],
                        embedder,
                        None,
                        fusion=Fusion(method="calibrated", dense_weight=w),
                        lists=("dense", "lexical"),
                    ),
                )
            )
        meaning = weights().fusion.meaning_weight or 0.1
        print(
            line(
                f"hybrid calibrated + e5 {meaning:.2f} (an answer's)",
                evaluate(
                    questions,
                    sources[lang],
                    embedder,
                    None,
                    fusion=Fusion(method="calibrated", meaning_weight=meaning),
                    lists=("dense", "lexical"),
                    answer=True,
                ),
            )
        )
        if reranker is not None:
            print(line("hybrid + rerank", evaluate(questions, sources[lang], embedder, reranker)))
        else:
            print("  hybrid + rerank              skipped: no reranker configured (KB_RERANKER)")
    _, ru_questions = load("ru")
    print("\nCross-lingual: Russian questions against the English passages")
    dense = evaluate(ru_questions, sources["en"], embedder, None, lists=("dense",))
    hybrid = evaluate(ru_questions, sources["en"], embedder, None, lists=("dense", "lexical"))
    print(
        f"  dense R@5 {dense['R@5']:.3f}   hybrid R@5 {hybrid['R@5']:.3f}   (hybrid must not be below dense)"
    )
    teardown()


if __name__ == "__main__":
    main()
