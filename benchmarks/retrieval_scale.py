"""Retrieval at scale: 100,000 to 1,000,000 chunks, latency of one retrieval and HNSW recall.

The chunks are built from the shared corpus (the QA wiki, the GitHub terms of service, the SEC
filings, the HSE specifications, the XQuAD passages): windows of 40-80 words at varied offsets
over each document's words, plus mixes of shuffled sentences of one language, so no two chunks
are alike. Their USE vectors are real; computing 100,000 of them takes 15 minutes to an hour on
two cores (depending on what else runs), so they are cached in ``var/bench-scale-cache/`` (texts
and vectors side by side; only texts not in the cache are embedded on a re-run).

Beyond ``--real`` chunks (100,000 by default) the chunks are *derived*, because embedding a
million texts takes hours here: each derived chunk joins the first part of one real chunk's words
(a share f drawn from 0.3-0.7) to the last part of another real chunk of the same language, and its
vector is the normalised mixture ``w * v1 + (1 - w) * v2 + noise`` with ``w`` the first chunk's
share of the words and Gaussian noise of ``DERIVED_NOISE`` (0.035) per dimension. The noise was
calibrated on 300 derived texts embedded for real: the real USE vector of a joined text has a
median cosine of 0.78 to the plain mixture, and so has the noisy mixture (0.785); its median cosine
to the first chunk's vector is 0.60 (real: 0.595). Each run re-checks this on 300 derived chunks
(``derived check``). The noise is isotropic where the real difference is not (probably harder
for HNSW than real vectors; not verified): the figures are for this mixture, not for a million
real chunks.

The chunks are inserted as ingestion leaves them, 50 per document, in four sources: COPY into a
staging table, then one INSERT that computes the full-text vector (title as weight B, body as D)
with the secondary indexes of ``knowledge_chunk`` dropped and rebuilt afterwards (same
definitions; only faster); term statistics and document-level BM25 are rebuilt, then the HNSW
index is built with ``--build-mem`` of ``maintenance_work_mem`` (the build is in memory when the
graph fits). The script prints each step's time, the table, TOAST and index sizes, and the
PostgreSQL processes' memory (PSS, shared pages counted once).

Then ~200 XQuAD questions (Russian and English) go through one retrieval each - question
embedding + dense + lexical + fusion, no rerank, no LLM - and the script prints p50 and p95, and
the recall@10 of the HNSW index against exact search for each ``ef_search`` (exact: a brute-force
scan of the same vectors in numpy, checked against PostgreSQL's exact scan on 10 questions).
``--halfvec`` then builds a second index on ``embedding::halfvec(d)`` (half-precision, half the
size) and prints its build time, size, recall@10 (against the same full-precision exact search)
and dense query time; the portal itself still queries the full-precision index.

Run: ``.venv/bin/python benchmarks/retrieval_scale.py [--chunks N] [--ef 40,100,200]``;
``--embed-only`` fills the vector cache and stops. A million chunks (its database goes to
``var/bench-scale-1m``; about 25 GB of disk while loading), in two steps so that the heavy one
runs at the lowest priority and the measurement does not::

    nice -n 19 .venv/bin/python benchmarks/retrieval_scale.py --chunks 1000000 --real 47000 --build-mem 8GB
        --load-only
    .venv/bin/python benchmarks/retrieval_scale.py --chunks 1000000 --real 47000 --reuse

(``--real`` no more than the cached vectors; add ``--halfvec`` to either step for the halfvec
index.) ``--quick``: 3,000 chunks (1,000 real), 20 questions after 10, ``ef_search`` 40 and 400.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import time
from pathlib import Path

import numpy as np
from _setup import CORPUS, EVAL, ROOT, arguments, percentile, setup, teardown

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


# --- derived chunks beyond the real ones ----------------------------------------------------------

DERIVED_NOISE = 0.035  # per dimension; calibrated so cos(noisy mixture, mixture) ~ the real 0.78


def _joined(rng: np.random.Generator, rows, i: int, j: int) -> tuple[str, float]:
    """The first part of chunk ``i``'s words joined to the last part of chunk ``j``'s, and
    chunk ``i``'s share of the words."""
    first, second = rows[i][2].split(), rows[j][2].split()
    share = rng.uniform(0.3, 0.7)
    n1 = max(10, round(share * len(first)))
    n2 = max(10, round((1 - share) * len(second)))
    return " ".join(first[:n1] + second[-n2:]), n1 / (n1 + n2)


def derive(
    rows: list[tuple[int, str, str]], vectors: np.ndarray, count: int
) -> tuple[list[tuple[int, str, str]], np.ndarray]:
    """``rows`` and ``vectors`` grown to ``count`` with derived chunks (see the docstring):
    deterministic, no two alike."""
    real = len(rows)
    if count <= real:
        return rows[:count], vectors[:count]
    rng = np.random.default_rng(SEED)
    by_language: dict[str, np.ndarray] = {}
    for language in sorted({r[1] for r in rows}):
        by_language[language] = np.array([k for k, r in enumerate(rows) if r[1] == language])
    out = np.empty((count, vectors.shape[1]), dtype=np.float32)
    out[:real] = vectors
    new_rows = list(rows)
    seen: set[str] = {r[2] for r in rows}
    block: list[tuple[int, int, float]] = []

    def flush() -> None:
        if not block:
            return
        first = np.array([b[0] for b in block])
        second = np.array([b[1] for b in block])
        share = np.array([b[2] for b in block], dtype=np.float32)[:, None]
        mixed = share * vectors[first] + (1 - share) * vectors[second]
        mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
        mixed += rng.standard_normal(mixed.shape, dtype=np.float32) * DERIVED_NOISE
        mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
        start = len(new_rows) - len(block)
        out[start : len(new_rows)] = mixed
        block.clear()

    while len(new_rows) < count:
        i = int(rng.integers(real))
        pool = by_language[rows[i][1]]
        j = int(pool[rng.integers(len(pool))])
        if i == j:
            continue
        text, share = _joined(rng, rows, i, j)
        if text in seen:
            continue
        seen.add(text)
        new_rows.append((rows[i][0], rows[i][1], text))
        block.append((i, j, share))
        if len(block) == 50_000:
            flush()
    flush()
    return new_rows, out


def derived_check(rows, vectors: np.ndarray, real: int, sample: int = 300) -> None:
    """Derived chunks against the real USE vectors of their texts: the median cosine of the real
    vector to the plain mixture (the noise is calibrated to match it) and to the derived vector
    (expected about the square of it: the two share the mixture, not the rest)."""
    if len(rows) <= real:
        return
    from knowledge.embedding import UseEmbedder

    rng = np.random.default_rng(SEED + 1)
    picked = []
    for k in rng.choice(np.arange(real), sample, replace=False):
        pool = [j for j in rng.integers(real, size=20) if rows[j][1] == rows[k][1] and j != k]
        if pool:
            text, share = _joined(rng, rows, int(k), int(pool[0]))
            picked.append((text, share, int(k), int(pool[0])))
    embedded = UseEmbedder(threads=1).embed_documents([p[0] for p in picked]).dense
    share = np.array([p[1] for p in picked], dtype=np.float32)[:, None]
    mixed = share * vectors[[p[2] for p in picked]] + (1 - share) * vectors[[p[3] for p in picked]]
    mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
    noisy = mixed + rng.standard_normal(mixed.shape, dtype=np.float32) * DERIVED_NOISE
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    print(
        f"  derived check ({len(picked)} joined texts embedded for real): median cosine of the "
        f"real vector to the plain mixture {np.median((embedded * mixed).sum(1)):.3f}, of the "
        f"noisy mixture to the plain one {np.median((noisy * mixed).sum(1)):.3f}, of the real "
        f"vector to the noisy one {np.median((embedded * noisy).sum(1)):.3f}",
        flush=True,
    )


# --- the knowledge base ---------------------------------------------------------------------------

DOCUMENT_CHUNKS = 50  # chunks per document: 100,000 chunks = 2,000 documents


def load(
    rows: list[tuple[int, str, str]], vectors: np.ndarray, model_id: str, build_mem: str = "1GB"
) -> float:
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
        "embedding_model, embed_key, searchable"
    )
    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        # The secondary indexes are rebuilt after the load (same definitions; only faster than
        # inserting a million rows into them one by one).
        cursor.execute(
            "SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.tablename = 'knowledge_chunk' "
            "AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = to_regclass(i.indexname))"
        )
        secondary = cursor.fetchall()
        for name, _ in secondary:
            cursor.execute(f'DROP INDEX "{name}"')
        cursor.execute(
            "CREATE TEMP TABLE chunk_stage AS SELECT "
            + columns
            + " FROM knowledge_chunk WITH NO DATA"
        )
        with cursor.cursor.copy(f"COPY chunk_stage ({columns}) FROM STDIN") as copy:
            for block in range(0, len(rows), 10_000):
                # Six decimals of float64: short literals, the same float4 values to 1e-6.
                literals = np.round(vectors[block : block + 10_000].astype(np.float64), 6)
                for offset, vector in enumerate(literals.tolist()):
                    i = block + offset
                    _, language, text = rows[i]
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
                            str(vector),
                            model_id,
                            _key(text),  # not the ingestion's key (no title): never reused
                            True,
                        )
                    )
        copied = time.perf_counter() - started
        # Weight B: the document title; D: the body (ingestion adds the heading path as A).
        cursor.execute(
            f"""
            INSERT INTO knowledge_chunk ({columns}, search_vector, lexeme_count)
            SELECT {columns}, v, length(v) FROM (
                SELECT s.*, setweight(to_tsvector(s.language::regconfig, d.title), 'B')
                    || setweight(to_tsvector(s.language::regconfig, s.text), 'D') AS v
                FROM chunk_stage s JOIN knowledge_document d ON d.id = s.document_id
            ) staged
            """
        )
        cursor.execute("DROP TABLE chunk_stage")
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the foreign keys, checked before DDL
        inserted = time.perf_counter() - started
        for _, definition in secondary:
            cursor.execute(definition)
        indexed = time.perf_counter() - started
        termstats.rebuild()
        refresh_document_vectors()  # document-level BM25, as ingestion keeps it
    print(
        f"  {len(rows)} chunks inserted with full text and statistics in "
        f"{time.perf_counter() - started:.0f} s (COPY {copied:.0f} s, full text and INSERT "
        f"{inserted - copied:.0f} s, {len(secondary)} secondary indexes {indexed - inserted:.0f} s, "
        f"term statistics and document BM25 {time.perf_counter() - started - indexed:.0f} s)",
        flush=True,
    )
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = %s", [build_mem])
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        started = time.perf_counter()
        ensure_vector_index(model_id, vectors.shape[1])
        built = time.perf_counter() - started
        cursor.execute("VACUUM ANALYZE knowledge_chunk")
    return built


def sizes(model_id: str) -> list[tuple[str, int]]:
    """(what, bytes) of the chunk table, its TOAST, each of its indexes and the whole database."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_relation_size('knowledge_chunk'), "
            "pg_total_relation_size(reltoastrelid) FROM pg_class WHERE relname = 'knowledge_chunk'"
        )
        heap, toast = cursor.fetchone()
        cursor.execute(
            "SELECT indexname, pg_relation_size(to_regclass(indexname)) FROM pg_indexes "
            "WHERE tablename = 'knowledge_chunk' ORDER BY 2 DESC"
        )
        indexes = cursor.fetchall()
        cursor.execute("SELECT pg_database_size(current_database())")
        database = cursor.fetchone()[0]
    return [
        ("chunk table", heap),
        ("its TOAST (long texts and vectors)", toast),
        *((f"index {name}", size) for name, size in indexes),
        ("whole database", database),
    ]


def postgres_memory() -> tuple[float, int] | None:
    """(MiB, processes): the PSS of the embedded PostgreSQL's processes (shared memory counted
    once across them), or None when the server is not the embedded one."""
    from django.conf import settings

    pid_file = settings.DATA_DIR / "postgres" / "postmaster.pid"
    if not pid_file.exists():
        return None
    postmaster = int(pid_file.read_text().split()[0])
    pids = [postmaster]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == postmaster:
            pids.append(int(stat.parent.name))
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024, len(pids)


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
    from knowledge.retrieval.hybrid import SearchOptions, search

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
    from knowledge.embedding import get_embedder
    from knowledge.retrieval.hybrid import SearchOptions, search
    from knowledge.retrieval.weights import Hits, Retrieval

    embedder = get_embedder()
    runs: dict[int, tuple[list[set[int]], list[float]]] = {}
    chosen = Retrieval().lexical_prefilter
    for prefilter in (0, chosen):
        options = SearchOptions(
            rerank=False,
            lists=("lexical",),
            min_score=-1.0,
            hits=Hits(k=10, per_document=50),
            retrieval=Retrieval(lexical_prefilter=prefilter),
        )
        found, times = [], []
        for question in asked:
            result = search(question, options=options, embedder=embedder)
            found.append({h.chunk_id for h in result.hits[:10]})
            times.append(result.timings.get("lexical", 0.0))
        runs[prefilter] = (found, times)
    full, filtered = runs[0][0], runs[chosen][0]
    recall = sum(len(a & b) for a, b in zip(full, filtered, strict=True)) / max(
        1, sum(len(a) for a in full)
    )
    return recall, percentile(runs[0][1], 50), percentile(runs[chosen][1], 50)


def chunk_ids(count: int) -> np.ndarray:
    """The chunk id of each row (document ``doc-N``, position P is row N * 50 + P)."""
    from django.db import connection

    ids = np.zeros(count, dtype=np.int64)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.id, d.path, c.position FROM knowledge_chunk c "
            "JOIN knowledge_document d ON d.id = c.document_id"
        )
        for chunk_id, path, position in cursor.fetchall():
            ids[int(path[4:]) * DOCUMENT_CHUNKS + position] = chunk_id
    return ids


def exact_top10(stored: np.ndarray, queries: np.ndarray, ids: np.ndarray) -> list[set[int]]:
    """The ids of the 10 chunks nearest (cosine) to each query: a brute-force scan."""
    queries = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    best = np.full((len(queries), 10), -2.0, dtype=np.float32)
    best_rows = np.zeros((len(queries), 10), dtype=np.int64)
    for start in range(0, len(stored), 50_000):
        block = np.round(stored[start : start + 50_000].astype(np.float64), 6).astype(np.float32)
        sims = queries @ block.T / np.linalg.norm(block, axis=1)
        top = np.argpartition(-sims, 10, axis=1)[:, :10]
        both = np.concatenate([best, np.take_along_axis(sims, top, axis=1)], axis=1)
        rows = np.concatenate([best_rows, top + start], axis=1)
        keep = np.argsort(-both, axis=1)[:, :10]
        best = np.take_along_axis(both, keep, axis=1)
        best_rows = np.take_along_axis(rows, keep, axis=1)
    return [set(ids[r].tolist()) for r in best_rows]


def sql_exact_top10(vector: np.ndarray, model_id: str) -> set[int]:
    """PostgreSQL's exact scan (no index) for one query: checks the brute force above."""
    from django.db import connection, transaction

    from knowledge.retrieval import sql as q

    dims = vector.shape[0]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute(
            f"SELECT id FROM knowledge_chunk WHERE embedding_model = %s AND searchable "
            f"ORDER BY embedding::vector({dims}) <=> %s::vector({dims}) LIMIT 10",
            [model_id, q._vector_literal(vector)],
        )
        return {row[0] for row in cursor.fetchall()}


def halfvec_index(model_id: str, dims: int, name: str, build_mem: str) -> float | None:
    """Build an HNSW index on ``embedding::halfvec(dims)`` (same m, ef_construction and
    predicate as the portal's) unless it exists; returns the build seconds."""
    from django.db import connection
    from psycopg import sql

    from knowledge.vector_index import build_parameters

    m, ef_construction = build_parameters()
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [name])
        if cursor.fetchone()[0]:
            return None
    statement = sql.SQL(
        "CREATE INDEX IF NOT EXISTS {name} ON knowledge_chunk USING hnsw "
        "((embedding::halfvec({dims})) halfvec_cosine_ops) WITH (m = {m}, ef_construction = {ef}) "
        "WHERE embedding_model = {model}"
    ).format(
        name=sql.Identifier(name),
        dims=sql.Literal(dims),
        m=sql.Literal(m),
        ef=sql.Literal(ef_construction),
        model=sql.Literal(model_id),
    )
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = %s", [build_mem])
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        started = time.perf_counter()
        cursor.execute(statement.as_string(cursor.connection))
        return time.perf_counter() - started


def _halfvec_search(scope, vector: np.ndarray, *, k: int, ef_search: int) -> list[int]:
    """The portal's dense query (``knowledge.retrieval.sql.dense_search``) on the halfvec index."""
    from django.db import connection, transaction
    from psycopg import sql

    from knowledge.retrieval import sql as q

    dims = int(vector.shape[0])
    condition, params = q.where(scope)
    query = sql.SQL(
        "SELECT c.id FROM knowledge_chunk c WHERE c.embedding_model = {model} AND "
        + condition
        + " ORDER BY c.embedding::halfvec({dims}) <=> %s::halfvec({dims}) LIMIT %s"
    ).format(dims=sql.Literal(dims), model=sql.Literal(scope.model_id))
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, true), "
            "set_config('hnsw.iterative_scan', 'relaxed_order', true)",
            [str(int(ef_search))],
        )
        cursor.execute(query.as_string(cursor.connection), [*params, q._vector_literal(vector), k])
        return [row[0] for row in cursor.fetchall()]


def recall_at_10(
    vectors: np.ndarray,
    exact: list[set[int]],
    model_id: str,
    ef_values: list[int],
    halfvec: bool = False,
) -> dict[int, tuple[float, float, float]]:
    """HNSW recall@10 against exact search, and the p50 and p95 ms of the dense query alone,
    per ef_search; on the halfvec index with ``halfvec``."""
    from knowledge.retrieval import sql as q
    from knowledge.retrieval.types import Filters

    scope = q.Scope(Filters(), None, model_id)
    figures = {}
    for ef in ef_values:
        found, times = 0, []
        for vector, truth in zip(vectors, exact, strict=True):
            started = time.perf_counter()
            if halfvec:
                ids = set(_halfvec_search(scope, vector, k=10, ef_search=ef))
            else:
                ids = {
                    chunk_id for chunk_id, _ in q.dense_search(scope, vector, k=10, ef_search=ef)
                }
            times.append((time.perf_counter() - started) * 1000)
            found += len(ids & truth)
        figures[ef] = (
            found / (10 * len(vectors)),
            percentile(times, 50),
            percentile(times, 95),
        )
    return figures


def plan(vector: np.ndarray, model_id: str, ef: int, cast: str = "vector") -> str:
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
            f"ORDER BY c.embedding::{cast}({dims}) <=> %s::{cast}({dims}) LIMIT 30",
            [model_id, *params, literal],
        )
        return "\n".join(re.sub(r"'\[[^']*\]'", "'[...]'", row[0]) for row in cursor.fetchall())


def _label(count: int) -> str:
    """The database folder's name: ``var/bench-scale`` for the 100,000-chunk default,
    ``var/bench-scale-1m``, ``var/bench-scale-300k``... otherwise."""
    if count == 100_000:
        return "scale"
    if count % 1_000_000 == 0:
        return f"scale-{count // 1_000_000}m"
    return f"scale-{count // 1000}k"


def _mib(size: float) -> str:
    return f"{size / 2**20:,.0f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument(
        "--real", type=int, default=100_000, help="chunks with real USE vectors; the rest derived"
    )
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--warm", type=int, default=200, help="other questions asked first")
    parser.add_argument("--ef", default="40,64,100,200,400", help="ef_search values for the recall")
    parser.add_argument(
        "--build-mem", default="1GB", help="maintenance_work_mem for the HNSW builds"
    )
    parser.add_argument(
        "--halfvec", action="store_true", help="also build and measure a halfvec HNSW index"
    )
    parser.add_argument("--embed-only", action="store_true", help="fill the vector cache and stop")
    parser.add_argument(
        "--load-only",
        action="store_true",
        help="load and index, then stop (measure later with --reuse, e.g. at another priority)",
    )
    parser.add_argument(
        "--reuse", action="store_true", help="keep the loaded database of a previous run"
    )
    args = arguments(parser)
    if args.quick:
        args.chunks, args.real, args.questions, args.warm, args.ef = 3000, 1000, 20, 10, "40,400"
    sys.path.insert(0, str(ROOT))
    started = time.perf_counter()
    real = min(args.real, args.chunks)
    rows = build_texts(100_000)[:real]
    print(f"{len(rows)} chunk texts built in {time.perf_counter() - started:.1f} s", flush=True)
    vectors = vectors_for([t for _, _, t in rows])
    if args.embed_only:
        return
    started = time.perf_counter()
    rows, vectors = derive(rows, vectors, args.chunks)
    if len(rows) > real:
        print(
            f"{len(rows) - real} derived chunks (mixtures of two real ones) in "
            f"{time.perf_counter() - started:.0f} s",
            flush=True,
        )
    setup(_label(args.chunks), fresh=not args.reuse)
    from django.conf import settings

    from knowledge.embedding import get_embedder
    from knowledge.models import Chunk
    from knowledge.retrieval.weights import Retrieval
    from knowledge.vector_index import build_parameters, index_name

    retrieval = Retrieval()

    model_id = get_embedder().model_id
    half = index_name(model_id).replace("chunk_hnsw_", "chunk_hnsw_half_")
    if not Chunk.objects.exists():
        derived_check(rows, vectors, real)
        built = load(rows, vectors, model_id, args.build_mem)
        m, ef_construction = build_parameters()
        print(
            f"  HNSW index (m={m}, ef_construction={ef_construction}, "
            f"maintenance_work_mem {args.build_mem}) built in {built:.0f} s",
            flush=True,
        )
    if args.halfvec:
        seconds = halfvec_index(model_id, vectors.shape[1], half, args.build_mem)
        if seconds is not None:
            print(f"  halfvec HNSW index (same parameters) built in {seconds:.0f} s", flush=True)
    for what, size in sizes(model_id):
        print(f"  {what:<52} {_mib(size)}")
    if args.load_only:
        teardown()
        return
    asked, warming = questions(args.questions, args.warm)
    print(
        f"\n{Chunk.objects.count()} chunks; {len(asked)} XQuAD questions (ru + en) measured "
        f"after {len(warming)} others; shared_buffers {settings.EMBEDDED_PG_SHARED_BUFFERS_MB} MB",
        flush=True,
    )
    question_vectors = get_embedder().embed_documents(asked).dense
    print(plan(question_vectors[0], model_id, retrieval.ef_search))
    totals, stages = latency(asked, warming)
    print(
        f"\none retrieval (embed + dense + lexical + fusion; ef_search {retrieval.ef_search}, "
        f"K {retrieval.candidates}, lexical budget {retrieval.lexical_budget}): "
        f"p50 {percentile(totals, 50):.0f} ms, p95 {percentile(totals, 95):.0f} ms "
        f"(goal p95 < 100 ms)"
    )
    for stage in ("route", "embed", "dense", "lexical", "fusion"):
        if stage in stages:
            print(
                f"  {stage:<8} p50 {percentile(stages[stage], 50):6.1f} ms   p95 {percentile(stages[stage], 95):6.1f} ms"
            )
    memory = postgres_memory()
    if memory:
        print(
            f"  PostgreSQL memory after the run: PSS {memory[0]:,.0f} MiB over {memory[1]} processes"
        )
    sys.stdout.flush()

    started = time.perf_counter()
    ids = chunk_ids(len(vectors))
    exact = exact_top10(vectors, question_vectors, ids)
    checked = sum(
        sql_exact_top10(v, model_id) == truth
        for v, truth in zip(question_vectors[:10], exact[:10], strict=True)
    )
    print(
        f"\nexact top 10 by brute force in {time.perf_counter() - started:.0f} s; PostgreSQL's "
        f"exact scan gives the same 10 for {checked} of 10 questions checked"
    )
    ef_values = [int(x) for x in args.ef.split(",")]
    print("HNSW recall@10 against exact search (goal >= 0.98), dense query alone:", flush=True)
    for ef, (recall, p50, p95) in recall_at_10(
        question_vectors, exact, model_id, ef_values
    ).items():
        mark = " <- KB_HNSW_EF_SEARCH" if ef == retrieval.ef_search else ""
        print(
            f"  ef_search {ef:>4}: recall@10 {recall:.3f}   p50 {p50:5.1f} ms  p95 {p95:5.1f} ms{mark}",
            flush=True,
        )
    if args.halfvec:
        print(f"\nhalfvec HNSW index {half}, {_mib(dict(sizes(model_id))[f'index {half}'])}")
        print(plan(question_vectors[0], model_id, retrieval.ef_search, cast="halfvec"))
        print("halfvec recall@10 against exact (full-precision) search, dense query alone:")
        for ef, (recall, p50, p95) in recall_at_10(
            question_vectors, exact, model_id, ef_values, halfvec=True
        ).items():
            print(
                f"  ef_search {ef:>4}: recall@10 {recall:.3f}   p50 {p50:5.1f} ms  p95 {p95:5.1f} ms",
                flush=True,
            )
    recall, full_ms, filtered_ms = prefilter_agreement(asked)
    print(
        f"\nlexical prefilter {retrieval.lexical_prefilter}: recall@10 {recall:.3f} against scoring "
        f"every candidate; lexical p50 {filtered_ms:.0f} ms vs {full_ms:.0f} ms"
    )
    teardown()


if __name__ == "__main__":
    main()
