"""Retrieval at scale: 100,000 chunks, latency of one retrieval and HNSW recall.

The chunks are built from the shared corpus (the QA wiki, the GitHub terms of service, the SEC
filings, the HSE specifications, the XQuAD passages): windows of 40-80 words at varied offsets
over each document's words, plus mixes of shuffled sentences of one language, so no two chunks
are alike. Their USE vectors are real; computing 100,000 of them takes about an hour on two
cores, so they are cached in ``var/bench-scale-cache/`` (texts and vectors side by side; only
texts not in the cache are embedded on a re-run).

The chunks are inserted in bulk (COPY) as 2,000 documents of four sources, their full-text
vectors computed in SQL, the term statistics rebuilt and the HNSW index built, as ingestion
would leave them. Then ~200 XQuAD questions (Russian and English) go through one retrieval each
- question embedding + dense + lexical + fusion, no rerank, no LLM - and the script prints p50
and p95, and the recall@10 of the HNSW index against an exact scan for each ``ef_search``.

Run: ``.venv/bin/python benchmarks/retrieval_scale.py [--chunks N] [--ef 40,100,200]``;
``--embed-only`` fills the vector cache and stops.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import time

import numpy as np
from _setup import CORPUS, EVAL, ROOT, percentile, setup, teardown

CACHE = ROOT / "var" / "bench-scale-cache"
SEED = 20240501
SOURCES = ("QA wiki", "Terms of service", "SEC filings", "Specifications and XQuAD")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


# --- texts ----------------------------------------------------------------------------------------


def _strip_markdown(text: str) -> str:
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"[#*_>|`~-]{2,}|^\s*[#>*-]+\s*", " ", text, flags=re.M)
    return re.sub(r"\s+", " ", text).strip()


def _documents() -> list[tuple[int, str, str]]:
    """(source index, language, plain text) of every corpus document used."""
    docs: list[tuple[int, str, str]] = []
    for path in sorted((CORPUS / "wiki_qa_bible_ru").rglob("*.md")):
        docs.append((0, "russian", _strip_markdown(path.read_text(encoding="utf-8"))))
    tos = sorted((CORPUS / "versions" / "github_tos_en").glob("tos__*.md"))
    for path in tos[:: max(1, len(tos) // 4)]:  # a few versions: real, partly overlapping text
        docs.append((1, "english", _strip_markdown(path.read_text(encoding="utf-8"))))
    import pymupdf

    for path in sorted((CORPUS / "sec10q_en" / "data").rglob("*.pdf")):
        with pymupdf.open(path) as pdf:
            text = " ".join(page.get_text() for page in pdf)
        docs.append((2, "english", re.sub(r"\s+", " ", text)))
    import docx

    for path in sorted((CORPUS / "specs_hse_app_ru").glob("*.docx")):
        paragraphs = [p.text for p in docx.Document(str(path)).paragraphs]
        docs.append((3, "russian", re.sub(r"\s+", " ", " ".join(paragraphs))))
    for lang, config in (("ru", "russian"), ("en", "english")):
        lines = (EVAL / "xquad" / f"xquad_{lang}_passages.jsonl").read_text().splitlines()
        docs.append((3, config, " ".join(json.loads(x)["text"] for x in lines)))
    return [d for d in docs if len(d[2].split()) >= 40]


def build_texts(count: int) -> list[tuple[int, str, str]]:
    """``count`` distinct chunk texts (source index, language, text), deterministic."""
    rng = random.Random(SEED)
    docs = _documents()
    seen: set[str] = set()
    out: list[tuple[int, str, str]] = []

    def add(source: int, language: str, text: str) -> None:
        if text not in seen:
            seen.add(text)
            out.append((source, language, text))

    # Windows over each document's words; two passes with different offsets and lengths.
    for stride in (27, 19):
        for source, language, text in docs:
            words = text.split()
            start = rng.randrange(stride)
            while start + 40 <= len(words):
                add(source, language, " ".join(words[start : start + rng.randint(40, 80)]))
                start += stride + rng.randrange(8)
    # Shuffled sentences of one language until the count is reached.
    pools: dict[str, list[tuple[int, str]]] = {}
    for source, language, text in docs:
        pools.setdefault(language, []).extend(
            (source, s) for s in _SENTENCE.split(text) if 4 <= len(s.split()) <= 60
        )
    languages = sorted(pools)
    while len(out) < count:
        pool = pools[rng.choice(languages)]
        picked = [pool[rng.randrange(len(pool))] for _ in range(rng.randint(2, 5))]
        words = " ".join(s for _, s in picked).split()[:80]
        if len(words) >= 40:
            language = next(lang for lang in languages if pools[lang] is pool)
            add(picked[0][0], language, " ".join(words))
    rng.shuffle(out)
    return out[:count]


# --- vectors (cached) -----------------------------------------------------------------------------


def _key(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def vectors_for(texts: list[str], batch: int = 256) -> np.ndarray:
    """USE vectors of ``texts``, from the cache where present; new ones are added to it."""
    from knowledge.embedding import UseEmbedder

    CACHE.mkdir(parents=True, exist_ok=True)
    keys_path, vectors_path = CACHE / "keys.txt", CACHE / "vectors.npy"
    keys = keys_path.read_text().split() if keys_path.exists() else []
    stored = np.load(vectors_path) if vectors_path.exists() else np.zeros((0, 512), np.float32)
    index = {k: i for i, k in enumerate(keys[: len(stored)])}
    missing = [t for t in dict.fromkeys(texts) if _key(t) not in index]
    if missing:
        # One BLAS thread: on a shared two-core machine more threads spin against each other.
        embedder = UseEmbedder(threads=1)
        started = time.perf_counter()
        new_keys, new_vectors = [], []
        for start in range(0, len(missing), batch):
            part = missing[start : start + batch]
            new_vectors.append(embedder.embed_documents(part).dense)
            new_keys += [_key(t) for t in part]
            done = start + len(part)
            if done % (batch * 8) == 0 or done == len(missing):
                stored = np.concatenate([stored, *new_vectors])
                keys += new_keys
                np.save(vectors_path, stored)
                keys_path.write_text("\n".join(keys))
                index = {k: i for i, k in enumerate(keys)}
                new_keys, new_vectors = [], []
                rate = done / (time.perf_counter() - started)
                print(f"  embedded {done}/{len(missing)} ({rate:.0f} texts/s)", flush=True)
    return np.stack([stored[index[_key(t)]] for t in texts])


# --- the knowledge base ---------------------------------------------------------------------------

DOCUMENT_CHUNKS = 50  # chunks per document: 100,000 chunks = 2,000 documents


def load(rows: list[tuple[int, str, str]], vectors: np.ndarray, model_id: str) -> float:
    """Insert the chunks as ingestion leaves them (searchable, full text, statistics, HNSW
    index); returns the seconds the index build took."""
    from django.db import connection, transaction
    from django.utils import timezone

    from knowledge import termstats
    from knowledge.ingest.store import refresh_document_vectors
    from knowledge.models import Document, DocumentVersion, Source
    from knowledge.vector_index import ensure_vector_index

    sources = [Source.objects.create(name=name, priority=1) for name in SOURCES]
    count = (len(rows) + DOCUMENT_CHUNKS - 1) // DOCUMENT_CHUNKS
    first_of = [rows[d * DOCUMENT_CHUNKS] for d in range(count)]
    documents = Document.objects.bulk_create(
        Document(
            source=sources[src], path=f"doc-{d:05d}", title=f"{SOURCES[src]} {d}", language=lang
        )
        for d, (src, lang, _) in enumerate(first_of)
    )
    now = timezone.now()
    versions = DocumentVersion.objects.bulk_create(
        DocumentVersion(
            document=doc,
            number=1,
            sha256=f"{doc.pk:064x}",
            file="",
            filename=f"{doc.path}.txt",
            status=DocumentVersion.Status.READY,
            embedding_model=model_id,
            ready_at=now,
        )
        for doc in documents
    )
    Document.objects.bulk_update(
        [setattr(d, "current_version", v) or d for d, v in zip(documents, versions, strict=True)],
        ["current_version"],
    )
    columns = (
        "version_id, document_id, source_id, position, text, heading_path, section, sections, "
        "block_type, block_start, block_end, sheet, meta, token_count, language, embedding, "
        "embedding_model, lexeme_count, searchable"
    )
    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY knowledge_chunk ({columns}) FROM STDIN") as copy:
            for i, ((_, language, text), vector) in enumerate(zip(rows, vectors, strict=True)):
                doc = documents[i // DOCUMENT_CHUNKS]
                copy.write_row(
                    (
                        versions[i // DOCUMENT_CHUNKS].pk,
                        doc.pk,
                        doc.source_id,
                        i % DOCUMENT_CHUNKS,
                        text,
                        "{}",
                        "",
                        "{}",
                        "text",
                        0,
                        0,
                        "",
                        "{}",
                        len(text.split()),
                        language,
                        "[" + ",".join(f"{x:.7g}" for x in vector) + "]",
                        model_id,
                        0,
                        True,
                    )
                )
        # Weight B: the document title; D: the body (ingestion adds the heading path as A).
        cursor.execute(
            """
            UPDATE knowledge_chunk c SET search_vector =
                setweight(to_tsvector(c.language::regconfig, d.title), 'B')
                || setweight(to_tsvector(c.language::regconfig, c.text), 'D')
            FROM knowledge_document d WHERE d.id = c.document_id
            """
        )
        cursor.execute("UPDATE knowledge_chunk SET lexeme_count = length(search_vector)")
        termstats.rebuild()
        refresh_document_vectors()  # document-level BM25, as ingestion keeps it
    print(
        f"  {len(rows)} chunks inserted with full text and statistics in {time.perf_counter() - started:.0f} s"
    )
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        started = time.perf_counter()
        ensure_vector_index(model_id, vectors.shape[1])
        built = time.perf_counter() - started
        cursor.execute("ANALYZE knowledge_chunk")
    return built


# --- measurements ---------------------------------------------------------------------------------


def questions(count: int, warm: int = 0) -> tuple[list[str], list[str]]:
    """``count`` XQuAD questions to measure (half Russian, half English), and ``warm`` other
    ones that warm the server's caches first (a running portal's caches are warm; measuring
    with the very questions that warmed them would flatter it)."""
    rng = random.Random(SEED)
    picked: list[str] = []
    warming: list[str] = []
    for lang in ("ru", "en"):
        lines = (EVAL / "xquad" / f"xquad_{lang}_questions.jsonl").read_text().splitlines()
        sample = [json.loads(x)["question"] for x in rng.sample(lines, (count + warm) // 2)]
        picked += sample[: count // 2]
        warming += sample[count // 2 :]
    return picked, warming


def latency(asked: list[str], warming: list[str]) -> tuple[list[float], dict[str, list[float]]]:
    """Wall time of one retrieval as the chat runs it (question embedding + search + fusion;
    rerank off, no LLM), and each stage's own time."""
    from knowledge.embedding import get_embedder
    from knowledge.retrieval.search import SearchOptions, search

    embedder = get_embedder()
    options = SearchOptions(rerank=False)
    for question in warming:
        search(question, options=options, embedder=embedder)
    totals: list[float] = []
    stages: dict[str, list[float]] = {}
    for question in asked:
        started = time.perf_counter()
        result = search(question, options=options, embedder=embedder)
        totals.append((time.perf_counter() - started) * 1000)
        for stage, ms in result.timings.items():
            stages.setdefault(stage, []).append(ms)
    return totals, stages


def prefilter_agreement(asked: list[str]) -> tuple[float, float, float]:
    """Recall@10 of the lexical list with the prefilter (KB_LEXICAL_PREFILTER) against scoring
    every candidate in full, and the median lexical ms of each."""
    from django.conf import settings

    from knowledge.embedding import get_embedder
    from knowledge.retrieval.search import SearchOptions, search

    embedder = get_embedder()
    options = SearchOptions(rerank=False, lists=("lexical",), min_score=-1.0, per_document=50, k=10)
    runs: dict[int, tuple[list[set[int]], list[float]]] = {}
    chosen = settings.LEXICAL_PREFILTER
    for prefilter in (0, chosen):
        settings.LEXICAL_PREFILTER = prefilter
        found, times = [], []
        for question in asked:
            result = search(question, options=options, embedder=embedder)
            found.append({h.chunk_id for h in result.hits[:10]})
            times.append(result.timings.get("lexical", 0.0))
        runs[prefilter] = (found, times)
    settings.LEXICAL_PREFILTER = chosen
    full, filtered = runs[0][0], runs[chosen][0]
    recall = sum(len(a & b) for a, b in zip(full, filtered, strict=True)) / max(
        1, sum(len(a) for a in full)
    )
    return recall, percentile(runs[0][1], 50), percentile(runs[chosen][1], 50)


def recall_at_10(
    vectors: np.ndarray, model_id: str, ef_values: list[int]
) -> dict[int, tuple[float, float]]:
    """HNSW recall@10 against an exact scan, and the median ms of the index scan, per ef_search."""
    from django.db import connection, transaction

    from knowledge.retrieval import sql as q
    from knowledge.retrieval.types import Filters

    scope = q.Scope(Filters(), None, model_id)
    exact: list[set[int]] = []
    dims = vectors.shape[1]
    for vector in vectors:
        literal = q._vector_literal(vector)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_indexscan = off")
            cursor.execute("SET LOCAL enable_bitmapscan = off")
            cursor.execute(
                f"SELECT id FROM knowledge_chunk WHERE embedding_model = %s AND searchable "
                f"ORDER BY embedding::vector({dims}) <=> %s::vector({dims}) LIMIT 10",
                [model_id, literal],
            )
            exact.append({row[0] for row in cursor.fetchall()})
    figures = {}
    for ef in ef_values:
        found, times = 0, []
        for vector, truth in zip(vectors, exact, strict=True):
            started = time.perf_counter()
            ids = {chunk_id for chunk_id, _ in q.dense_search(scope, vector, k=10, ef_search=ef)}
            times.append((time.perf_counter() - started) * 1000)
            found += len(ids & truth)
        figures[ef] = (found / (10 * len(vectors)), percentile(times, 50))
    return figures


def plan(vector: np.ndarray, model_id: str, ef: int) -> str:
    """EXPLAIN of the dense query: the HNSW index must be used, not a scan."""
    from django.db import connection, transaction

    from knowledge.retrieval import sql as q

    dims = vector.shape[0]
    condition, params = q.where(q.Scope(q.Filters(), None, model_id))
    literal = q._vector_literal(vector)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(ef)])
        cursor.execute(
            f"EXPLAIN SELECT c.id FROM knowledge_chunk c WHERE c.embedding_model = %s AND {condition} "
            f"ORDER BY c.embedding::vector({dims}) <=> %s::vector({dims}) LIMIT 30",
            [model_id, *params, literal],
        )
        return "\n".join(re.sub(r"'\[[^']*\]'", "'[...]'", row[0]) for row in cursor.fetchall())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--warm", type=int, default=200, help="other questions asked first")
    parser.add_argument("--ef", default="40,64,100,200", help="ef_search values for the recall")
    parser.add_argument("--embed-only", action="store_true", help="fill the vector cache and stop")
    parser.add_argument(
        "--reuse", action="store_true", help="keep the loaded database of a previous run"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    started = time.perf_counter()
    rows = build_texts(args.chunks)
    print(f"{len(rows)} chunk texts built in {time.perf_counter() - started:.1f} s")
    vectors = vectors_for([t for _, _, t in rows])
    if args.embed_only:
        return
    setup("scale", fresh=not args.reuse)
    from django.conf import settings

    from knowledge.embedding import get_embedder
    from knowledge.models import Chunk
    from knowledge.vector_index import HNSW_EF_CONSTRUCTION, HNSW_M

    model_id = get_embedder().model_id
    if not Chunk.objects.exists():
        built = load(rows, vectors, model_id)
        print(
            f"  HNSW index (m={HNSW_M}, ef_construction={HNSW_EF_CONSTRUCTION}) built in {built:.0f} s"
        )
    asked, warming = questions(args.questions, args.warm)
    print(
        f"\n{Chunk.objects.count()} chunks; {len(asked)} XQuAD questions (ru + en) measured "
        f"after {len(warming)} others"
    )
    question_vectors = get_embedder().embed_documents(asked).dense
    print(plan(question_vectors[0], model_id, settings.HNSW_EF_SEARCH))
    totals, stages = latency(asked, warming)
    print(
        f"\none retrieval (embed + dense + lexical + fusion; ef_search {settings.HNSW_EF_SEARCH}, "
        f"K {settings.SEARCH_CANDIDATES}, lexical budget {settings.LEXICAL_CANDIDATE_BUDGET}): "
        f"p50 {percentile(totals, 50):.0f} ms, p95 {percentile(totals, 95):.0f} ms "
        f"(goal p95 < 100 ms)"
    )
    for stage in ("route", "embed", "dense", "lexical", "fusion"):
        if stage in stages:
            print(
                f"  {stage:<8} p50 {percentile(stages[stage], 50):6.1f} ms   p95 {percentile(stages[stage], 95):6.1f} ms"
            )
    recall, full_ms, filtered_ms = prefilter_agreement(asked)
    print(
        f"\nlexical prefilter {settings.LEXICAL_PREFILTER}: recall@10 {recall:.3f} against scoring "
        f"every candidate; lexical p50 {filtered_ms:.0f} ms vs {full_ms:.0f} ms"
    )
    print("\nHNSW recall@10 against exact search (goal >= 0.98):")
    for ef, (recall, ms) in recall_at_10(
        question_vectors, model_id, [int(x) for x in args.ef.split(",")]
    ).items():
        mark = " <- KB_HNSW_EF_SEARCH" if ef == settings.HNSW_EF_SEARCH else ""
        print(f"  ef_search {ef:>4}: recall@10 {recall:.3f}   dense query p50 {ms:.1f} ms{mark}")
    teardown()


if __name__ == "__main__":
    main()
