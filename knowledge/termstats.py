"""Keeping BM25 statistics in step with which chunks are searchable.

Called inside the transaction that flips ``Chunk.searchable``; the lexemes are upserted in
sorted order so that two documents becoming ready at once lock rows in the same order. Row
units repeat their table's rows: they are searched with these statistics but not counted in
them, so a table's words do not weigh less, nor the corpus grow, for being indexed twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection

CORPUS_KEY = "searchable"


def apply_flip(turned_on: Sequence[int], turned_off: Sequence[int]) -> None:
    """Add the lexemes of ``turned_on`` chunks to the statistics and remove ``turned_off``'s."""
    for ids, sign in ((turned_on, 1), (turned_off, -1)):
        if not ids:
            continue
        with connection.cursor() as cursor:
            cursor.execute(
                """
                INSERT INTO knowledge_termstat (lexeme, df)
                SELECT u.lexeme, %s * count(*)
                FROM knowledge_chunk c, unnest(c.search_vector) AS u
                WHERE c.id = ANY(%s) AND c.search_vector IS NOT NULL AND c.block_type <> 'row'
                GROUP BY u.lexeme ORDER BY u.lexeme
                ON CONFLICT (lexeme) DO UPDATE SET df = knowledge_termstat.df + EXCLUDED.df
                """,
                [sign, list(ids)],
            )
            cursor.execute(
                """
                INSERT INTO knowledge_corpusstat (key, chunks, total_length)
                SELECT %s, %s * count(*), %s * coalesce(sum(lexeme_count), 0)
                FROM knowledge_chunk WHERE id = ANY(%s) AND block_type <> 'row'
                ON CONFLICT (key) DO UPDATE SET
                    chunks = knowledge_corpusstat.chunks + EXCLUDED.chunks,
                    total_length = knowledge_corpusstat.total_length + EXCLUDED.total_length
                """,
                [CORPUS_KEY, sign, sign, list(ids)],
            )


def rebuild() -> None:
    """Recompute the statistics from scratch (``manage.py reindex_stats``; tests)."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM knowledge_termstat")
        cursor.execute("DELETE FROM knowledge_corpusstat")
        cursor.execute(
            """
            INSERT INTO knowledge_termstat (lexeme, df)
            SELECT u.lexeme, count(*) FROM knowledge_chunk c, unnest(c.search_vector) AS u
            WHERE c.searchable AND c.block_type <> 'row' GROUP BY u.lexeme
            """
        )
        cursor.execute(
            """
            INSERT INTO knowledge_corpusstat (key, chunks, total_length)
            SELECT %s, count(*), coalesce(sum(lexeme_count), 0) FROM knowledge_chunk
            WHERE searchable AND block_type <> 'row'
            """,
            [CORPUS_KEY],
        )
