"""Document-level BM25 reads kept statistics (``knowledge.documentstats``) instead of counting
documents per question: its scores must be the ones a direct count over
``knowledge_documentterm`` gives, after ingest, a version taking over, a document's removal and
restore, and a source's deletion, for every reader (all sources, or only some)."""

from __future__ import annotations

import pytest
from django.db import connection

from knowledge import documentstats, termstats
from knowledge.ingest.registration import register_file, remove_document
from knowledge.models import Document
from knowledge.retrieval import sql as q
from knowledge.retrieval.documents import document_bm25
from tests.knowledge.retrieval.conftest import add_document, make_source

pytestmark = pytest.mark.django_db

CACHE = """# Кэш

## Очистка кэша браузера

Кэш браузера очищают перед повторной проверкой, иначе страница придёт из кэша.

## Очистка кэша на сервере

Кэш на сервере очищают после изменения данных, иначе кэш отдаст старые данные.
"""

CACHE_V2 = """# Кэш

## Очистка кэша браузера

Кэш браузера очищают перед каждой проверкой вёрстки; дежурный тестировщик записывает это в журнал.

## Прогрев кэша

После выкладки кэш прогревают, чтобы первый посетитель не ждал.
"""

RELEASE = """# Выкладка релиза

## Зачем очищают кэш

Кэш очищают, чтобы после выкладки все увидели новую версию.

## Команда релиза

В команду релиза входят разработчик, тестировщик и менеджер; они договариваются о дате выкладки.
"""

PRIVATE = """# Журнал дежурств

Дежурный тестировщик ведёт журнал: кэш, выкладка, откат, релиз и всё, что сломалось ночью.
"""


def direct_bm25(document_ids, lexemes, visible_source_ids) -> dict[int, float]:
    """The document-level BM25 as it was computed before the statistics were kept: document
    frequency, number and mean length of documents counted in the query, over the documents
    the reader may read, removed ones excluded."""
    visible, params = "", []
    if visible_source_ids is not None:
        visible, params = "AND d.source_id = ANY(%s)", [list(visible_source_ids)]
    query = f"""
        WITH totals AS (
            SELECT count(*) AS n, greatest(avg(d.lexeme_count), 1) AS avg_len
            FROM knowledge_document d
            WHERE d.search_vector IS NOT NULL AND d.removed_at IS NULL {visible}
        ),
        q AS (
            SELECT x.lexeme, (
                SELECT count(*) FROM knowledge_documentterm t
                JOIN knowledge_document d ON d.id = t.document_id
                WHERE t.lexeme = x.lexeme AND d.removed_at IS NULL {visible}
            ) AS df
            FROM unnest(%s::text[]) AS x(lexeme)
        )
        SELECT t.document_id, sum(
            ln(1 + (totals.n - q.df + 0.5) / (q.df + 0.5))
            * t.tf * %s / (t.tf + %s * (1 - %s + %s * d.lexeme_count / totals.avg_len))
        )
        FROM knowledge_documentterm t
        JOIN q ON q.lexeme = t.lexeme AND q.df > 0
        JOIN knowledge_document d ON d.id = t.document_id
        CROSS JOIN totals
        WHERE t.document_id = ANY(%s) AND t.lexeme = ANY(%s)
        GROUP BY t.document_id
    """
    args = [*params, *params, list(lexemes), q.BM25_K1 + 1, q.BM25_K1, q.BM25_B, q.BM25_B]
    with connection.cursor() as cursor:
        cursor.execute(query, [*args, list(document_ids), list(lexemes)])
        return {row[0]: float(row[1]) for row in cursor.fetchall()}


def _lexemes(document_ids) -> list[str]:
    """Every word of these documents, and one no document has."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT lexeme FROM knowledge_documentterm WHERE document_id = ANY(%s) "
            "ORDER BY lexeme",
            [list(document_ids)],
        )
        return [row[0] for row in cursor.fetchall()] + ["несуществующееслово"]


def _stored_stats(level: str = "document") -> tuple[set, set]:
    """The non-zero rows of the document-level statistics, or of the chunk-level ones."""
    terms, totals, count = {
        "document": ("knowledge_documenttermstat", "knowledge_documentcorpusstat", "documents"),
        "chunk": ("knowledge_termstat", "knowledge_corpusstat", "chunks"),
    }[level]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT source_id, lexeme, df FROM {terms} WHERE df <> 0")
        rows = set(cursor.fetchall())
        cursor.execute(
            f"SELECT source_id, {count}, total_length FROM {totals} "
            f"WHERE {count} <> 0 OR total_length <> 0"
        )
        return rows, set(cursor.fetchall())


def assert_same_scores(documents, readers) -> None:
    """``document_bm25`` gives the direct count's scores for every word of ``documents``,
    one word at a time and all at once, for each reader's visible sources; and the kept
    statistics are the ones a rebuild from scratch gives."""
    ids = [d.pk for d in documents]
    lexemes = _lexemes(ids)
    for visible in readers:
        for words in [lexemes, *([x] for x in lexemes)]:
            expected = direct_bm25(ids, words, visible)
            got = document_bm25(ids, words, visible)
            assert got.keys() == expected.keys(), (words, visible)
            for document_id, score in expected.items():
                assert got[document_id] == pytest.approx(score, rel=1e-12), (words, visible)
    kept = _stored_stats()
    termstats.rebuild()
    assert _stored_stats() == kept


def test_scores_match_a_direct_count_through_ingest_version_flip_removal_and_deletion(embedder):
    termstats.rebuild()  # whatever earlier tests left, a consistent start
    wiki, private = make_source("Wiki"), make_source("Private")
    cache = add_document(wiki, "cache.md", CACHE, embedder)
    release = add_document(wiki, "release.md", RELEASE, embedder)
    journal = add_document(private, "journal.md", PRIVATE, embedder)
    documents = [cache, release, journal]
    readers = [None, [wiki.pk], [private.pk], [wiki.pk, private.pk]]
    assert_same_scores(documents, readers)

    # A new version takes over: the old text's words leave, the new ones come.
    add_document(wiki, "cache.md", CACHE_V2, embedder)
    assert Document.objects.get(pk=cache.pk).current_version.number == 2
    assert_same_scores(documents, readers)

    # Removed: the document leaves search and the statistics; back again, it returns.
    remove_document(release)
    assert document_bm25([release.pk], _lexemes([cache.pk]) + ["релиз"], None) == {}
    assert_same_scores(documents, readers)
    register_file(wiki, "release.md", RELEASE.encode(), enqueue=False)  # same bytes: restored
    assert Document.objects.get(pk=release.pk).removed_at is None
    assert document_bm25([release.pk], ["релиз"], None)
    assert_same_scores(documents, readers)

    # A document deleted outright, then a whole source.
    Document.objects.get(pk=cache.pk).delete()
    assert_same_scores([release, journal], readers)
    private.delete()
    assert_same_scores([release], [None, [wiki.pk]])


def test_scores_read_the_kept_statistics_and_fail_when_they_are_stale(embedder):
    """Statistics that missed a change give other scores than the direct count: the
    comparison above catches a path that forgets to keep them."""
    termstats.rebuild()
    wiki = make_source("Wiki")
    cache = add_document(wiki, "cache.md", CACHE, embedder)
    release = add_document(wiki, "release.md", RELEASE, embedder)
    ids = [cache.pk, release.pk]
    with connection.cursor() as cursor:  # words of both documents, and of the cache page only
        cursor.execute(
            "SELECT lexeme, count(*) FROM knowledge_documentterm WHERE document_id = ANY(%s) "
            "GROUP BY lexeme ORDER BY count(*) DESC, lexeme",
            [ids],
        )
        counted = dict(cursor.fetchall())
    both = next(x for x, n in counted.items() if n == 2)
    words = [both, *list(counted)[-3:]]
    before = document_bm25(ids, words, None)
    assert before == pytest.approx(direct_bm25(ids, words, None), rel=1e-12)
    df, documents, total = documentstats.stats(words, None)
    assert documents == 2 and df[both] == 2 and all(df[x] == counted[x] for x in words)
    assert total == sum(Document.objects.filter(pk__in=ids).values_list("lexeme_count", flat=True))
    # A change the statistics missed (one document less holding the word): scores move.
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE knowledge_documenttermstat SET df = df - 1 WHERE lexeme = %s AND source_id = %s",
            [both, wiki.pk],
        )
    stale = document_bm25(ids, words, None)
    assert stale[cache.pk] != pytest.approx(before[cache.pk], rel=1e-6)


def test_a_document_deleted_outright_leaves_the_chunk_level_statistics(embedder):
    """Chunk-level BM25 statistics (``knowledge.termstats``) lose a document deleted outright
    (the admin's delete) as they lose a removed one: they equal a rebuild from scratch."""
    termstats.rebuild()
    wiki = make_source("Wiki")
    cache = add_document(wiki, "cache.md", CACHE, embedder)
    add_document(wiki, "release.md", RELEASE, embedder)
    before = _stored_stats("chunk")
    Document.objects.get(pk=cache.pk).delete()
    kept = _stored_stats("chunk")
    assert kept != before
    termstats.rebuild()
    assert _stored_stats("chunk") == kept
