"""SQL for retrieval, in one module: filters, dense (pgvector HNSW) and lexical (BM25) lists.

All queries go through the restriction built by ``where`` so that permissions, "only the
newest ready version" and the router's filters apply in SQL before any ranking.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.db import connection, transaction
from pgvector import SparseVector
from psycopg import sql

from knowledge.retrieval.types import Filters
from knowledge.text.words import QUESTION_LEXEMES

BM25_K1 = 1.2
BM25_B = 0.75
HEADING_TF = 2.0  # a query term in the heading path or title counts like this many body hits
# Every text-search configuration a chunk can be stored under (knowledge.parsing.base.
# detect_language): a question is turned into lexemes under each, so it matches chunks of any
# language without knowing its own. Lexemes no chunk has carry no statistics and drop out.
LANGUAGES = ("english", "russian", "simple")


@dataclass
class Scope:
    """Everything that restricts the chunks a search may see."""

    filters: Filters
    visible_source_ids: list[int] | None  # None: every source (staff)
    model_id: str = ""


def where(scope: Scope, alias: str = "c") -> tuple[str, list]:
    """WHERE clause (without the keyword) and its parameters."""
    f = scope.filters
    clauses: list[str] = []
    params: list = []
    if f.version_ids:
        clauses.append(f"{alias}.version_id = ANY(%s)")
        params.append(list(f.version_ids))
    else:
        clauses.append(f"{alias}.searchable")
    if scope.visible_source_ids is not None:
        clauses.append(f"{alias}.source_id = ANY(%s)")
        params.append(list(scope.visible_source_ids))
    if f.source_ids:
        clauses.append(f"{alias}.source_id = ANY(%s)")
        params.append(list(f.source_ids))
    if f.document_ids:
        clauses.append(f"{alias}.document_id = ANY(%s)")
        params.append(list(f.document_ids))
    if f.block_types:
        clauses.append(f"{alias}.block_type = ANY(%s)")
        params.append(list(f.block_types))
    if f.sections:
        # "2.1" matches section 2.1 and every subsection 2.1.x, in any section the chunk covers.
        clauses.append(
            f"EXISTS (SELECT 1 FROM unnest({alias}.sections || {alias}.section) s "
            "WHERE s = ANY(%s) OR s LIKE ANY(%s))"
        )
        params.append(list(f.sections))
        params.append([s + ".%" for s in f.sections])
    return " AND ".join(clauses), params


def dense_search(
    scope: Scope, vector: np.ndarray, *, k: int, ef_search: int
) -> list[tuple[int, float]]:
    """(chunk id, cosine similarity) of the ``k`` nearest chunks of this model, best first."""
    dims = int(vector.shape[0])
    condition, params = where(scope)
    query = sql.SQL(
        "SELECT c.id, 1 - (c.embedding::vector({dims}) <=> %s::vector({dims})) FROM knowledge_chunk c "
        "WHERE c.embedding_model = {model} AND " + condition + " "
        "ORDER BY c.embedding::vector({dims}) <=> %s::vector({dims}) LIMIT %s"
    ).format(dims=sql.Literal(dims), model=sql.Literal(scope.model_id))
    literal = _vector_literal(vector)
    with transaction.atomic(), connection.cursor() as cursor:
        # Local to this transaction. Filters are applied inside the index scan; iterative scans
        # keep going until k rows pass them (pgvector 0.8) instead of returning fewer.
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, true), "
            "set_config('hnsw.iterative_scan', 'relaxed_order', true)",
            [str(int(ef_search))],
        )
        cursor.execute(query.as_string(cursor.connection), [literal, *params, literal, k])
        return [(row[0], float(row[1])) for row in cursor.fetchall()]


def candidate_rows(
    ids: Sequence[int],
    vector: np.ndarray | None,
    model_id: str,
    cosine_ids: Sequence[int] | None = None,
) -> dict[int, tuple[int, datetime | None, bool, float | None]]:
    """For each chosen chunk: its document, its version's creation time, whether its source
    prefers fresh documents, and its cosine similarity to ``vector`` (None without a vector,
    for vectors of another model, or for a chunk not in ``cosine_ids`` when that is given) -
    one query for everything fusion needs besides BM25. Limiting the cosine to the chunks the
    dense list did not score spares reading their vectors (stored out of line, in TOAST)."""
    if not ids:
        return {}
    if vector is None or (cosine_ids is not None and not cosine_ids):
        cosine, params = sql.SQL("NULL"), [list(ids)]
    else:
        dims = int(vector.shape[0])
        wanted = sql.SQL("c.id = ANY(%s) AND " if cosine_ids is not None else "")
        cosine = sql.SQL(
            "CASE WHEN {wanted}c.embedding_model = {model} "
            "THEN 1 - (c.embedding::vector({dims}) <=> %s::vector({dims})) END"
        ).format(dims=sql.Literal(dims), model=sql.Literal(model_id), wanted=wanted)
        params = [_vector_literal(vector), list(ids)]
        if cosine_ids is not None:
            params.insert(0, list(cosine_ids))
    query = sql.SQL(
        "SELECT c.id, c.document_id, v.created_at, s.prefer_fresh, {cosine} "
        "FROM knowledge_chunk c JOIN knowledge_documentversion v ON v.id = c.version_id "
        "JOIN knowledge_source s ON s.id = c.source_id WHERE c.id = ANY(%s)"
    ).format(cosine=cosine)
    with connection.cursor() as cursor:
        cursor.execute(query.as_string(cursor.connection), params)
        return {
            row[0]: (row[1], row[2], bool(row[3]), None if row[4] is None else float(row[4]))
            for row in cursor.fetchall()
        }


def sparse_search(
    scope: Scope, weights: dict[int, float], dims: int, *, k: int
) -> list[tuple[int, float]]:
    """(chunk id, inner product) over bge-m3 sparse weights, best first (exact scan)."""
    condition, params = where(scope)
    query = (
        "SELECT c.id, -(c.sparse <#> %s::sparsevec) FROM knowledge_chunk c "
        "WHERE c.sparse IS NOT NULL AND "
        + condition
        + " ORDER BY c.sparse <#> %s::sparsevec LIMIT %s"
    )
    # As text with a cast: a raw cursor has no adapter registered for SparseVector.
    vector = SparseVector(weights, dims).to_text()
    with connection.cursor() as cursor:
        cursor.execute(query, [vector, *params, vector, k])
        return [(row[0], float(row[1])) for row in cursor.fetchall()]


# Token types of a hyphenated compound as a whole ("тест-кейсы"); its parts come as their own
# tokens, so the whole is not a word of its own.
_COMPOUND_TOKENS = ("asciihword", "hword", "numhword")
# A word either language's configuration drops is a stop word.
_DROPPING_CONFIGS = ("english", "russian")


def query_terms(text: str, languages: Sequence[str]) -> tuple[list[str], list[list[str]]]:
    """The lexemes of ``text`` under every configuration (what BM25 scores), and its content
    words, each as the lexemes it becomes under the configurations (stop words left out).

    The words are what a question asks for; a word no chunk contains still counts (see
    ``search._rank``: the best BM25 a question could reach includes it).
    """
    if not text.strip():
        return [], []
    rows = _parse(text, tuple(languages))
    lexemes: set[str] = set()
    tokens: dict[int, dict[str, list[str]]] = {}
    stop = _stop_word_positions(rows, languages)
    for position, config, alias, found in rows:
        if found is None:  # spaces and punctuation
            continue
        if position not in stop:
            lexemes.update(found)
        if alias not in _COMPOUND_TOKENS:
            tokens.setdefault(position, {})[config] = found
    words = []
    for _, by_config in sorted(tokens.items()):
        variants = {x for found in by_config.values() for x in found}
        # Question words ("сколько", "что такое") are not what a question is about.
        if variants & QUESTION_LEXEMES or not all(
            by_config.get(c) for c in _DROPPING_CONFIGS if c in languages
        ):
            continue
        words.append(sorted(variants))
    return sorted(lexemes), words


# PostgreSQL's reading of a text under the configurations, kept per process (``_parse``): a
# question is read by the search and again by the answer's checks, its words one by one by the
# vocabulary (``parse_many``), and the configurations do not change while it runs.
_PARSED: OrderedDict[tuple[str, tuple[str, ...]], tuple[tuple, ...]] = OrderedDict()
PARSED_KEPT = 4096  # texts kept (a question's text and its words' forms: a few dozen each)


def _parse(text: str, languages: tuple[str, ...]) -> tuple[tuple, ...]:
    """PostgreSQL's reading of ``text`` under each configuration: (position, configuration,
    token type, lexemes) per token."""
    return parse_many([text], languages)[0]


def parse_many(texts: Sequence[str], languages: tuple[str, ...]) -> list[tuple[tuple, ...]]:
    """``_parse`` of each text, those not read before in one query."""
    missing = list(dict.fromkeys(t for t in texts if (t, languages) not in _PARSED))
    if missing:
        rows: dict[int, list[tuple]] = {i: [] for i in range(1, len(missing) + 1)}
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT t.n, d.ord, c.cfg, d.alias, d.lexemes "
                "FROM unnest(%s::text[]) WITH ORDINALITY AS t(txt, n), "
                "unnest(%s::text[]) AS c(cfg), "
                "LATERAL ts_debug(c.cfg::regconfig, t.txt) WITH ORDINALITY "
                "AS d(alias, description, token, dictionaries, dictionary, lexemes, ord) "
                "ORDER BY t.n, c.cfg, d.ord",
                [missing, list(languages)],
            )
            for n, ord_, cfg, alias, found in cursor.fetchall():
                rows[n].append((ord_, cfg, alias, tuple(found) if found is not None else None))
        for i, text in enumerate(missing, 1):
            _PARSED[(text, languages)] = _in_configuration_order(rows[i], languages)
            while len(_PARSED) > PARSED_KEPT:
                _PARSED.popitem(last=False)
    return [_PARSED[(t, languages)] for t in texts]


def _in_configuration_order(rows: list[tuple], languages: tuple[str, ...]) -> tuple[tuple, ...]:
    """The rows as one query per text gave them: configuration by configuration in the order
    given, each token by its position."""
    order = {c: i for i, c in enumerate(languages)}
    return tuple(sorted(rows, key=lambda r: (order.get(r[1], len(order)), r[0])))


def query_terms_many(
    texts: Sequence[str], languages: Sequence[str]
) -> list[tuple[list[str], list[list[str]]]]:
    """``query_terms`` of each text, PostgreSQL asked once for all those not read before."""
    parse_many([t for t in texts if t.strip()], tuple(languages))
    return [query_terms(t, languages) for t in texts]


def _stop_word_positions(rows: Sequence[tuple], languages: Sequence[str]) -> set[int]:
    """Positions of the tokens a stop-word configuration drops ("in", "if", "и"): the other
    configurations keep them as lexemes ("simple" keeps every word), and scored those would
    be the rarest terms of an English question, matched by the few chunks indexed under
    another configuration."""
    configs = [c for c in _DROPPING_CONFIGS if c in languages]
    return {
        p for p, config, _, found in rows if config in configs and found is not None and not found
    }


def unknown_words(text: str, visible_source_ids: list[int] | None = None) -> list[list[str]]:
    """The content words of ``text`` (as in ``query_terms``) that no searchable chunk of the
    sources the user may read contains (None: every source)."""
    lexemes, words = query_terms(text, LANGUAGES)
    df, _, _ = term_stats(lexemes, visible_source_ids)
    return [word for word in words if not any(df.get(x) for x in word)]


def term_stats(
    lexemes: Sequence[str], visible_source_ids: list[int] | None = None
) -> tuple[dict[str, int], int, float]:
    """Document frequencies of ``lexemes``, the number of searchable chunks and their mean
    length, over the sources the user may read (None: every source). Summed from the
    per-source statistics (``knowledge.termstats``) in two index lookups."""
    only, params = "", []
    if visible_source_ids is not None:
        only, params = "AND source_id = ANY(%s)", [list(visible_source_ids)]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT lexeme, sum(df) FROM knowledge_termstat WHERE lexeme = ANY(%s) {only} "
            "GROUP BY lexeme",
            [list(lexemes), *params],
        )
        df = {row[0]: int(row[1]) for row in cursor.fetchall() if row[1]}
        cursor.execute(
            "SELECT coalesce(sum(chunks), 0), coalesce(sum(total_length), 0) "
            f"FROM knowledge_corpusstat WHERE true {only}",
            params,
        )
        row = cursor.fetchone()
    chunks, total = (int(row[0]), int(row[1])) if row else (0, 0)
    return df, chunks, (total / chunks if chunks else 1.0)


@dataclass(frozen=True)
class Terms:
    """What BM25 scores: the question's lexemes at their idf, and the chunks' mean length."""

    idf: Mapping[str, float]
    avg_length: float


@dataclass(frozen=True)
class Matching:
    """Which chunks the lexical list scores: those holding one of ``lexemes`` (and the words
    of a quoted ``phrase``), of which only the ``prefilter`` best are scored in full (0: all)."""

    lexemes: Sequence[str]
    phrase: str = ""
    prefilter: int = 0


def bm25(
    scope: Scope,
    terms: Terms,
    *,
    k: int,
    matching: Matching | None = None,
    only_ids: Sequence[int] | None = None,
) -> list[tuple[int, float]]:
    """(chunk id, BM25) best first. Candidates are the chunks ``matching`` finds (or
    ``only_ids``); every query term in ``terms.idf`` scores.

    With a prefilter > 0, only that many candidates are scored in full: those with the highest
    sum of the idf of the query terms they contain (a membership test per term, no unnesting of
    the chunk's full-text vector). A candidate's vector is read (detoasted and decompressed)
    once, not once per test: the vector of a 1,500-character chunk is stored compressed, and
    reading it again for each of a question's dozen terms was a third of the lexical list's
    time on the demo knowledge base. Term frequency only saturates on top of that sum (k1 = 1.2),
    so the best chunks are among them; unnesting every candidate's vector was most of the time
    of a search over 100,000 chunks (benchmarks/retrieval_scale.py). A scored candidate's
    vector is cut down to the question's terms before it is unnested (``ts_delete`` of what
    remains once they are deleted): unnesting all of a chunk's ~200 terms, each with its arrays
    of positions and weights, to keep a few of them was 80 us a chunk, half of the list's time
    on the demo knowledge base (the same scores, p50 30 -> 21 ms). Constants are cast to float8:
    bound by the client, they would otherwise be numeric, computed in decimal arithmetic.
    """
    idf, avg_length = terms.idf, terms.avg_length
    matching = matching or Matching(())
    candidate_lexemes, phrase_query, prefilter = (
        matching.lexemes,
        matching.phrase,
        matching.prefilter,
    )
    if not idf or (only_ids is not None and not only_ids):
        return []
    condition, params = where(scope)
    if only_ids is not None:
        match, match_params = "c.id = ANY(%s)", [list(only_ids)]
    else:
        if not candidate_lexemes:
            return []
        # Cast, not to_tsquery(): the lexemes are already normalised and must not be re-parsed
        # (a hyphenated lexeme would be split into a phrase).
        match = "c.search_vector @@ %s::tsquery"
        match_params = [" | ".join(_quote_lexeme(x) for x in candidate_lexemes)]
    if phrase_query:
        match += " AND c.search_vector @@ websearch_to_tsquery(c.language::regconfig, %s)"
        match_params.append(phrase_query)
    lexemes = list(idf)
    order, order_params = "", []
    if prefilter > 0 and only_ids is None:
        prefilter = max(prefilter, k)
        order = (
            "ORDER BY "
            + " + ".join("(sv.v @@ %s::tsquery)::int * %s::float8" for _ in lexemes)
            + " DESC, c.id LIMIT %s"
        )
        for lexeme in lexemes:
            order_params += [_quote_lexeme(lexeme), idf[lexeme]]
        order_params.append(prefilter)
    query = f"""
        WITH q AS (SELECT * FROM unnest(%s::text[], %s::float8[]) AS q(lexeme, idf)),
        cand AS (SELECT c.id, sv.v AS search_vector, c.lexeme_count FROM knowledge_chunk c
                 CROSS JOIN LATERAL (SELECT c.search_vector || ''::tsvector AS v OFFSET 0) sv
                 WHERE {condition} AND {match} {order})
        SELECT cand.id,
               sum(q.idf * t.tf * %s::float8
                   / (t.tf + %s::float8 * (1 - %s::float8 + %s::float8 * cand.lexeme_count / %s::float8)))
        FROM cand
        CROSS JOIN LATERAL (
            SELECT u.lexeme,
                   (coalesce(array_length(u.positions, 1), 1)
                    + %s::float8 * coalesce((SELECT count(*) FROM unnest(u.weights) w
                                             WHERE w IN ('A', 'B')), 0))::float8 AS tf
            FROM unnest(ts_delete(cand.search_vector,
                                  tsvector_to_array(ts_delete(cand.search_vector, %s::text[])))) u
            OFFSET 0
        ) t
        JOIN q ON q.lexeme = t.lexeme
        GROUP BY cand.id ORDER BY 2 DESC, cand.id LIMIT %s
    """
    args = [
        lexemes,
        [idf[x] for x in lexemes],
        *params,
        *match_params,
        *order_params,
        BM25_K1 + 1,
        BM25_K1,
        BM25_B,
        BM25_B,
        max(avg_length, 1.0),
        HEADING_TF - 1,
        lexemes,
        k,
    ]
    with connection.cursor() as cursor:
        cursor.execute(query, args)
        return [(row[0], float(row[1])) for row in cursor.fetchall()]


def _quote_lexeme(lexeme: str) -> str:
    return "'" + lexeme.replace("'", "''").replace("\\", "\\\\") + "'"


def _vector_literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in np.asarray(vector, dtype=np.float32)) + "]"


def simple_lexemes(names: Sequence[str]) -> dict[str, list[str]]:
    """Each name's lexemes under the "simple" configuration, in one query for all names."""
    found: dict[str, list[str]] = {n: [] for n in names}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT n.name, d.lexemes FROM unnest(%s::text[]) AS n(name), "
            "LATERAL ts_debug('simple', n.name) AS d WHERE d.lexemes IS NOT NULL",
            [list(names)],
        )
        for name, lexemes in cursor.fetchall():
            found[name].extend(lexemes)
    return found


def unit_parents(ids: Sequence[int]) -> dict[int, int]:
    """Row unit id -> the id of the table piece it belongs to, for the row units among ``ids``."""
    if not ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT u.id, p.id FROM knowledge_chunk u JOIN knowledge_chunk p "
            "ON p.version_id = u.version_id AND p.position = (u.meta->>'parent_position')::int "
            "WHERE u.id = ANY(%s) AND u.block_type = 'row'",
            [list(ids)],
        )
        return dict(cursor.fetchall())


def table_labels(
    scope: Scope, document_ids: Sequence[int], lexemes: Sequence[str]
) -> list[tuple[int, list[list[str]]]]:
    """(chunk id, its row labels' lexemes: ``meta["labels"]``, stored at ingest)
    of the tables and row units of ``document_ids`` with a row label holding one of
    ``lexemes``."""
    if not document_ids or not lexemes:
        return []
    condition, params = where(scope)
    query = f"""
        SELECT c.id, c.meta->'labels' FROM knowledge_chunk c
        WHERE c.document_id = ANY(%s) AND {condition}
          AND c.meta ? 'label_words' AND c.meta->'label_words' ?| %s::text[]
    """
    with connection.cursor() as cursor:
        cursor.execute(query, [list(document_ids), *params, list(lexemes)])
        # Django's connection hands jsonb over as text (it decodes JSON fields itself).
        return [
            (row[0], json.loads(row[1]) if isinstance(row[1], str) else row[1])
            for row in cursor.fetchall()
        ]
