"""Keeping BM25 statistics in step with which chunks are searchable, per source.

Called inside the transaction that flips ``Chunk.searchable``; the lexemes are upserted in
sorted order so that two documents becoming ready at once lock rows in the same order. Row
units repeat their table's rows: they are searched with these statistics but not counted in
them, so a table's words do not weigh less, nor the corpus grow, for being indexed twice.

The statistics are kept per source and summed at query time over the sources the user may read
(``knowledge.retrieval.sql.term_stats``): a document nobody else may read changes nobody
else's scores, refusals or "unknown word" decisions.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection

from knowledge import documentstats

_TERMS = """
    INSERT INTO knowledge_termstat (source_id, lexeme, df)
    SELECT c.source_id, u.lexeme, %s * count(*)
    FROM knowledge_chunk c, unnest(c.search_vector) AS u
    WHERE {where} AND c.search_vector IS NOT NULL AND c.block_type <> 'row'
    GROUP BY c.source_id, u.lexeme ORDER BY u.lexeme, c.source_id
    ON CONFLICT (lexeme, source_id) DO UPDATE SET df = knowledge_termstat.df + EXCLUDED.df
"""
_TOTALS = """
    INSERT INTO knowledge_corpusstat (source_id, chunks, total_length)
    SELECT c.source_id, %s * count(*), %s * coalesce(sum(c.lexeme_count), 0)
    FROM knowledge_chunk c WHERE {where} AND c.block_type <> 'row'
    GROUP BY c.source_id ORDER BY c.source_id
    ON CONFLICT (source_id) DO UPDATE SET
        chunks = knowledge_corpusstat.chunks + EXCLUDED.chunks,
        total_length = knowledge_corpusstat.total_length + EXCLUDED.total_length
"""


def apply_flip(turned_on: Sequence[int], turned_off: Sequence[int]) -> None:
    """Add the lexemes of ``turned_on`` chunks to their sources' statistics and remove
    ``turned_off``'s."""
    for ids, sign in ((turned_on, 1), (turned_off, -1)):
        if not ids:
            continue
        with connection.cursor() as cursor:
            cursor.execute(_TERMS.format(where="c.id = ANY(%s)"), [sign, list(ids)])
            cursor.execute(_TOTALS.format(where="c.id = ANY(%s)"), [sign, sign, list(ids)])


def rebuild() -> None:
    """Recompute the statistics from scratch (the migration that made them per source; tests;
    benchmarks), the document-level ones too (``knowledge.documentstats``)."""
    documentstats.rebuild()
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM knowledge_termstat")
        cursor.execute("DELETE FROM knowledge_corpusstat")
        cursor.execute(_TERMS.format(where="c.searchable"), [1])
        cursor.execute(_TOTALS.format(where="c.searchable"), [1, 1])
