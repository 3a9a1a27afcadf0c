"""Document-level lexical evidence: BM25 of a whole document for the question.

A question asked in other words than the page's rarely repeats one chunk's words, but the
page as a whole uses the question's vocabulary ("мероприятие", "избранное" are the app
specification's words, not the wiki's). Chunks are ranked by their own calibrated score plus a
small share of their document's BM25 (normalised by the best candidate document), so that a
document matching as a whole wins ties between chunks; the minimum score still applies to the
chunk's own score, so refusals do not move (benchmarks/retrieval_kb.py measures the gain).

A question naming a thing ("How did Apple's operating expenses change?") adds a second share:
the document's BM25 for the named words alone (``knowledge.text.named``), so that the
documents about Apple win over another company's page that matches "operating expenses
change" a little better (benchmarks/retrieval_sec.py: the right filing in the top 5).

Statistics (document frequency, number and mean length of documents) are those of the documents
the user may read: summed over the sources they may read from the per-source statistics kept with
the documents' term rows (``knowledge.documentstats``), two index lookups; only the candidate
documents' rows of the question's words are read. Counting them per query instead read every row of
each word's documents (seconds at a million chunks: benchmarks/retrieval_scale.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from django.db import connection

from knowledge.retrieval import sql as q
from knowledge.retrieval.types import Candidate


def document_bm25(
    document_ids: Sequence[int], lexemes: Sequence[str], visible_source_ids: list[int] | None
) -> dict[int, float]:
    """BM25 of each document for the lexemes, over the documents the user may read."""
    return document_bm25_with_names(document_ids, lexemes, (), visible_source_ids)[0]


def document_bm25_with_names(
    document_ids: Sequence[int],
    lexemes: Sequence[str],
    named: Sequence[str],
    visible_source_ids: list[int] | None,
) -> tuple[dict[int, float], dict[int, float]]:
    """``document_bm25`` for ``lexemes`` and for the ``named`` ones among them, in one query:
    the sum over the named lexemes' rows alone is that document's BM25 for them (the same
    numeric terms; a document with none of them is left out)."""
    if not document_ids or not lexemes:
        return {}, {}
    visible, params = "", []
    if visible_source_ids is not None:
        visible, params = "AND s.source_id = ANY(%s)", [list(visible_source_ids)]
    # The same arithmetic (numeric) as counting the documents in the query did: the same scores.
    # The candidate documents' rows are looked up per question lexeme on (lexeme, document)
    # (the lateral subquery, kept apart by OFFSET 0): joined plainly, the planner read every
    # term row of the candidate documents (~90,000 at 100,000 chunks) to keep a few hundred,
    # 29 ms against 5 ms for the same scores (benchmarks/retrieval_scale.py).
    query = f"""
        WITH totals AS (
            SELECT coalesce(sum(s.documents), 0)::bigint AS n,
                   greatest(sum(s.total_length) / nullif(sum(s.documents), 0), 1) AS avg_len
            FROM knowledge_documentcorpusstat s
            WHERE true {visible}
        ),
        q AS (
            SELECT s.lexeme, sum(s.df)::bigint AS df
            FROM knowledge_documenttermstat s
            WHERE s.lexeme = ANY(%s) {visible}
            GROUP BY s.lexeme
        )
        SELECT t.document_id, sum(bm25.term), sum(bm25.term) FILTER (WHERE q.lexeme = ANY(%s))
        FROM q
        CROSS JOIN LATERAL (
            SELECT t.document_id, t.tf FROM knowledge_documentterm t
            WHERE t.lexeme = q.lexeme AND t.document_id = ANY(%s) OFFSET 0
        ) t
        JOIN knowledge_document d ON d.id = t.document_id
        CROSS JOIN totals
        CROSS JOIN LATERAL (
            SELECT ln(1 + (totals.n - q.df + 0.5) / (q.df + 0.5))
                   * t.tf * %s / (t.tf + %s * (1 - %s + %s * d.lexeme_count / totals.avg_len))
                   AS term
        ) bm25
        WHERE q.df > 0
        GROUP BY t.document_id
    """
    args = [
        *params,  # totals
        list(lexemes),
        *params,  # each lexeme's document frequency
        list(named),
        list(document_ids),
        q.BM25_K1 + 1,
        q.BM25_K1,
        q.BM25_B,
        q.BM25_B,
    ]
    with connection.cursor() as cursor:
        cursor.execute(query, args)
        rows = cursor.fetchall()
    scores = {row[0]: float(row[1]) for row in rows}
    return scores, {row[0]: float(row[2]) for row in rows if row[2] is not None}


def with_document_evidence(
    candidates: Sequence[Candidate], scores: Mapping[int, float]
) -> list[Candidate]:
    """Each candidate with its document's BM25 over the best candidate document's
    (``document_evidence``, 0 for a document without the question's words); the fusion adds
    ``KB_SEARCH_DOCUMENT_WEIGHT`` of it to the ranking score, never to the chunk's own."""
    best = max(scores.values(), default=0.0)
    return [
        replace(c, document_evidence=scores.get(c.document_id, 0.0) / best if best > 0 else 0.0)
        for c in candidates
    ]


def with_name_evidence(
    candidates: Sequence[Candidate], scores: Mapping[int, float]
) -> list[Candidate]:
    """Each candidate with its document's BM25 for the question's named words over the best
    candidate document's (``name_evidence``); unchanged when no document has those words."""
    best = max(scores.values(), default=0.0)
    if best <= 0:
        return list(candidates)
    return [replace(c, name_evidence=scores.get(c.document_id, 0.0) / best) for c in candidates]
