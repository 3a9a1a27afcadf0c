"""A restricted source: its named readers and groups read it, superusers too; staff who are
not named and everyone else do not, even when it is also marked public."""

from __future__ import annotations

import pytest

from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import register_file
from knowledge.models import Chunk, Document, Source
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.weights import Hits

pytestmark = pytest.mark.django_db


@pytest.fixture
def carol(django_user_model):
    return django_user_model.objects.create_user("carol", "carol@example.com", "x", is_staff=True)


def test_a_restricted_source_is_read_by_named_readers_and_superusers_only(alice, bob, carol, eve):
    board = Source.objects.create(name="Board minutes", is_public=True, restricted=True)
    board.readers.add(bob)
    text = "Совет директоров утвердил бюджет отдела тестирования на следующий год."
    ingest_version(register_file(board, "minutes.txt", text.encode(), enqueue=False).version.pk)
    question = "Какой бюджет утвердил совет директоров?"
    options = SearchOptions(hits=Hits(cascade=False), min_score=-1.0)

    def found(user) -> bool:
        hits = search(question, user=user, options=options).hits
        return Chunk.objects.filter(pk__in=[h.chunk_id for h in hits], source=board).exists()

    assert found(bob) and found(alice)  # a named reader; a superuser
    assert not found(carol) and not found(eve)  # staff not named; everyone else
    assert not Document.objects.visible_to(carol).filter(source=board).exists()
    assert Document.objects.visible_to(bob).filter(source=board).exists()
    # Staff still read private sources that are not restricted.
    board.restricted = False
    board.is_public = False
    board.save()
    assert found(carol) and not found(eve)


def test_a_private_documents_words_move_no_other_readers_scores(bob, eve):
    """BM25 statistics, the absent-word ceiling and "unknown word" decisions count the sources
    the user may read only (issue 16, finding 2: 0.329 -> 0.391 for the same query)."""
    from knowledge.retrieval.sql import term_stats, unknown_words

    wiki = Source.objects.create(name="Wiki", is_public=True)
    text = "Регрессионное тестирование проверяет, что изменения не сломали работающее."
    ingest_version(register_file(wiki, "regress.md", text.encode(), enqueue=False).version.pk)
    question = "Что проверяет регрессионное тестирование перед релизом Гиперион?"
    options = SearchOptions(hits=Hits(cascade=False), min_score=-1.0)
    before = search(question, user=eve, options=options).hits[0].score
    assert unknown_words(question, [wiki.pk]) == unknown_words(question, None)

    board = Source.objects.create(name="Board", is_public=False, restricted=True)
    board.readers.add(bob)
    secret = "Релиз Гиперион: регрессионное тестирование перенесено, тестирование сокращено."
    ingest_version(register_file(board, "secret.md", secret.encode(), enqueue=False).version.pk)

    after = search(question, user=eve, options=options)
    assert after.hits[0].score == pytest.approx(before, abs=1e-9)  # eve's scores do not move
    assert after.visible_source_ids == [wiki.pk]
    hyperion = [w for w in unknown_words(question, after.visible_source_ids) if "гиперион" in w]
    assert hyperion  # still unknown to eve: the private document's word does not count
    assert not [w for w in unknown_words(question, None) if "гиперион" in w]  # known to staff
    df_eve, chunks_eve, _ = term_stats(["регрессион"], [wiki.pk])
    df_all, chunks_all, _ = term_stats(["регрессион"], None)
    assert chunks_eve < chunks_all and df_eve.get("регрессион", 0) < df_all["регрессион"]
