"""Keeping document-level BM25 statistics in step with ``knowledge_documentterm``, per source.

Document-level BM25 (``knowledge.retrieval.documents``) needs, over the documents a user may
read, each question word's document frequency, the number of documents and their mean length.
Counting them at query time reads every row of the word's documents in ``knowledge_documentterm``
(28 million rows at a million chunks: seconds per question), so they are kept here instead, like
the chunk-level ones (``knowledge.termstats``): ``knowledge_documenttermstat`` (source, lexeme,
df) and ``knowledge_documentcorpusstat`` (source, documents, total length).

A document counts while it has a full-text vector (``Document.search_vector``), which is exactly
while it has searchable chunks: a removed document loses its vector in the same transaction
(``knowledge.ingest.store.refresh_searchable``). The only writer of the vectors and of
``knowledge_documentterm`` is ``knowledge.ingest.store.refresh_document_vectors``; it calls
``subtract`` before replacing a document's rows (while they still say what they were) and ``add``
after, in its transaction. A document deleted outright (admin, a source's cascade) is subtracted
by a ``pre_delete`` receiver (``knowledge.apps``); a source's own rows go with it (cascade).
Lexemes are upserted in sorted order so that two transactions lock rows in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection

_TERMS = """
    INSERT INTO knowledge_documenttermstat (source_id, lexeme, df)
    SELECT d.source_id, t.lexeme, %s * count(*)
    FROM knowledge_documentterm t JOIN knowledge_document d ON d.id = t.document_id
    WHERE {where}
    GROUP BY d.source_id, t.lexeme ORDER BY t.lexeme, d.source_id
    ON CONFLICT (lexeme, source_id) DO UPDATE SET df = knowledge_documenttermstat.df + EXCLUDED.df
"""
_TOTALS = """
    INSERT INTO knowledge_documentcorpusstat (source_id, documents, total_length)
    SELECT d.source_id, %s * count(*), %s * coalesce(sum(d.lexeme_count), 0)
    FROM knowledge_document d WHERE {where} AND d.search_vector IS NOT NULL
    GROUP BY d.source_id ORDER BY d.source_id
    ON CONFLICT (source_id) DO UPDATE SET
        documents = knowledge_documentcorpusstat.documents + EXCLUDED.documents,
        total_length = knowledge_documentcorpusstat.total_length + EXCLUDED.total_length
"""


def _apply(document_ids: Sequence[int], sign: int) -> None:
    if not document_ids:
        return
    ids = list(document_ids)
    with connection.cursor() as cursor:
        cursor.execute(_TERMS.format(where="t.document_id = ANY(%s)"), [sign, ids])
        cursor.execute(_TOTALS.format(where="d.id = ANY(%s)"), [sign, sign, ids])


def add(document_ids: Sequence[int]) -> None:
    """Count these documents' current full-text vectors and term rows in their sources'
    statistics (call after writing them, inside the same transaction)."""
    _apply(document_ids, 1)


def subtract(document_ids: Sequence[int]) -> None:
    """Take these documents' current full-text vectors and term rows out of their sources'
    statistics (call before changing or deleting them, inside the same transaction)."""
    _apply(document_ids, -1)


def rebuild() -> None:
    """Recompute the statistics from ``knowledge_documentterm`` and the documents' vectors
    (the migration that added them; ``termstats.rebuild``; benchmarks)."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM knowledge_documenttermstat")
        cursor.execute("DELETE FROM knowledge_documentcorpusstat")
        cursor.execute(_TERMS.format(where="true"), [1])
        cursor.execute(_TOTALS.format(where="true"), [1, 1])


def stats(
    lexemes: Sequence[str], visible_source_ids: list[int] | None
) -> tuple[dict[str, int], int, float]:
    """(document frequency per lexeme, number of documents, their total length) over the
    sources the user may read (None: every source), in two index lookups."""
    only, params = "", []
    if visible_source_ids is not None:
        only, params = "AND source_id = ANY(%s)", [list(visible_source_ids)]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT lexeme, sum(df) FROM knowledge_documenttermstat "
            f"WHERE lexeme = ANY(%s) {only} GROUP BY lexeme",
            [list(lexemes), *params],
        )
        df = {row[0]: int(row[1]) for row in cursor.fetchall() if row[1]}
        cursor.execute(
            "SELECT coalesce(sum(documents), 0), coalesce(sum(total_length), 0) "
            f"FROM knowledge_documentcorpusstat WHERE true {only}",
            params,
        )
        documents, total = cursor.fetchone()
    return df, int(documents), int(total)
