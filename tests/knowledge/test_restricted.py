"""A restricted source: its named readers and groups read it, superusers too; staff who are
not named and everyone else do not, even when it is also marked public."""

from __future__ import annotations

import pytest

from knowledge.ingest import ingest_version
from knowledge.models import Chunk, Document, Source
from knowledge.registration import register_file
from knowledge.retrieval.search import SearchOptions, search

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
    options = SearchOptions(min_score=-1.0, cascade=False)

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
