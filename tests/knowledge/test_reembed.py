"""``manage.py reembed``: the knowledge base switched to another embedding model and back.

The second model is a small real embedder (``TrigramEmbedder``: signed character-trigram hashing
into 64 dimensions), not a stand-in: it embeds, and search ranks with its vectors.
"""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db import connection

from knowledge import termstats
from knowledge.embedding import EmbeddingModelMismatch, get_embedder
from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import register_file
from knowledge.models import Chunk, DocumentVersion, Source
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.weights import Hits
from knowledge.vector_index import index_name
from tests.knowledge.conftest import PMI
from tests.knowledge.embedders import TrigramEmbedder

RELEASE = (
    b"# Release handbook\n\n## Freeze\n\nThe release branch freezes two days before the release.\n"
)


def indexes() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'knowledge_chunk'")
        return {row[0] for row in cursor.fetchall()}


def stored_models() -> set[tuple[str, int]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT embedding_model, vector_dims(embedding) FROM knowledge_chunk"
        )
        return set(cursor.fetchall())


def dense_top_document(query: str, embedder) -> str:
    hits = search(
        query,
        embedder=embedder,
        options=SearchOptions(
            lists=("dense",), hits=Hits(cascade=False), min_score=-1.0, route=False
        ),
    ).hits
    return Chunk.objects.get(pk=hits[0].chunk_id).document.path


@pytest.fixture
def knowledge_base(transactional_db) -> Source:
    # This test switches the whole knowledge base: it must be exactly the one built here.
    Source.objects.all().delete()
    termstats.rebuild()
    source = Source.objects.create(name="Specs")
    for path, data in [("release.md", RELEASE), (PMI.name, PMI.read_bytes())]:
        ingest_version(register_file(source, path, data, enqueue=False).version.pk)
    return source


def test_reembed_switches_the_knowledge_base_to_another_model_and_back(knowledge_base):
    use = get_embedder()
    chunks = Chunk.objects.count()
    assert stored_models() == {(use.model_id, 512)}
    assert index_name(use.model_id) in indexes()

    trigram = TrigramEmbedder()
    out = io.StringIO()
    call_command("reembed", embedder=trigram, batch=5, stdout=out)
    assert f"Re-embedded {chunks} chunks with trigram-hash-64 (64 dimensions)" in out.getvalue()
    assert f"2 versions switched from {use.model_id}" in out.getvalue()
    assert Chunk.objects.count() == chunks
    assert stored_models() == {("trigram-hash-64", 64)}
    assert set(DocumentVersion.objects.values_list("embedding_model", flat=True)) == {
        "trigram-hash-64"
    }
    assert index_name("trigram-hash-64") in indexes()
    assert index_name(use.model_id) not in indexes()
    # Searchable with the new model, and a search with the old one is refused in plain words.
    assert dense_top_document("release branch freezes", trigram) == "release.md"
    with pytest.raises(EmbeddingModelMismatch, match="run 'manage.py reembed'"):
        search("release branch freezes", embedder=use)

    out = io.StringIO()
    call_command("reembed", "--model", "use", stdout=out)  # back, through the command line
    assert f"with {use.model_id} (512 dimensions)" in out.getvalue()
    assert stored_models() == {(use.model_id, 512)}
    assert dense_top_document("когда замораживают ветку релиза", use) == "release.md"
    assert dense_top_document("программа и методика испытаний", use) == PMI.name
    with pytest.raises(EmbeddingModelMismatch):
        search("release branch freezes", embedder=trigram)


def test_reembed_with_the_model_in_place_changes_nothing(knowledge_base):
    before = dict(Chunk.objects.values_list("pk", "embedding_model"))
    out = io.StringIO()
    call_command("reembed", stdout=out)
    assert out.getvalue().startswith("Re-embedded 0 chunks")
    assert dict(Chunk.objects.values_list("pk", "embedding_model")) == before
