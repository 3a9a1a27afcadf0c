"""Query expansion from the first results (PRF): the best documents' own words re-order
the candidates.

A question asked in other words than the page's ("we want to feed the file parser heaps of
half-random junk") shares few words with the page, but the documents ranked first after one
pass often include it, and their distinctive words ("фаззинг", "fuzz", "мутац") are the words
the right chunks use. For a question no chunk matches well (``KB_SEARCH_PRF_BELOW``), the
``n`` most distinctive lexemes of the first pass's best documents score every candidate at a
share of their idf, added to its ranking score (``knowledge.retrieval.ranking``). No candidate
is added and the score the threshold reads is left alone, so refusals do not move.

A lexeme's weight in those best documents: the sum over them of its share of the document's
length, times its document-level idf, times the number of those documents holding it (a word
of both best documents is more telling than one of either). Lexemes of one document only in
the whole knowledge base, numbers and words of fewer than four letters are left out.
Off by default (``KB_SEARCH_PRF_DOCS`` 0): on kb_dev it puts two more right documents
first, on XQuAD it lowers the MRR by 0.012 (README, configuration).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from django.db import connection

from knowledge import documentstats


def prf_lexemes(
    document_ids: Sequence[int],
    exclude: Sequence[str],
    n: int,
    visible_source_ids: list[int] | None,
) -> list[str]:
    """The ``n`` most distinctive lexemes of these documents, best first, without ``exclude``
    (the question's own lexemes and its synonyms); statistics over the documents the user may
    read (``knowledge.documentstats``)."""
    if not document_ids or n <= 0:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT t.lexeme, sum(t.tf::float8 / greatest(d.lexeme_count, 1)), count(*)
            FROM knowledge_documentterm t JOIN knowledge_document d ON d.id = t.document_id
            WHERE t.document_id = ANY(%s) AND char_length(t.lexeme) >= 4
              AND t.lexeme ~ '[[:alpha:]]' AND NOT (t.lexeme = ANY(%s))
            GROUP BY t.lexeme
            """,
            [list(document_ids), list(exclude)],
        )
        rows = cursor.fetchall()
    df, total, _ = documentstats.stats([row[0] for row in rows], visible_source_ids)
    scored = [
        (share * math.log(total / df[lexeme]) * documents, lexeme)
        for lexeme, share, documents in rows
        if 2 <= df.get(lexeme, 0) < total
    ]
    scored.sort(key=lambda x: (-x[0], x[1]))
    return [lexeme for _, lexeme in scored[:n]]


def top_documents(ranked: Sequence, n: int) -> list[int]:
    """The first ``n`` distinct documents of a ranking (candidates best first)."""
    documents: list[int] = []
    for c in ranked:
        if c.document_id and c.document_id not in documents:
            documents.append(c.document_id)
            if len(documents) >= n:
                break
    return documents
