"""Embeddings from an OpenAI-compatible server (KB_EMBEDDER=openai), against a small real
server in tests/ that serves the bundled USE model over HTTP."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import numpy as np
import pytest

from chat.models import Conversation
from chat.pipeline import answer_now
from knowledge.embedding import (
    EmbeddingModelMismatch,
    EmbeddingUnavailable,
    OpenAIEmbedder,
    get_embedder,
)
from knowledge.ingest.pipeline import ingest_version
from knowledge.models import Chunk, DocumentVersion
from knowledge.retrieval.hybrid import search
from tests.conftest import CORPUS, ingest_folder
from tests.embeddings_server import EmbeddingsTestServer

PAGE = "obshee/defekty-i-oshibki.md"  # long enough for several batches of four chunks


@pytest.fixture(scope="module")
def _server() -> Iterator[EmbeddingsTestServer]:
    with EmbeddingsTestServer() as server:
        yield server


@pytest.fixture
def server(_server: EmbeddingsTestServer) -> Iterator[EmbeddingsTestServer]:
    _server.reset()
    if not _server.running:
        _server.start()
    yield _server
    if not _server.running:
        _server.start()


def client(server: EmbeddingsTestServer, **options) -> OpenAIEmbedder:
    # A generous timeout: the served model embeds on the same (maybe busy) cores; the tests of
    # timeouts pass their own.
    options = {"batch_size": 4, "retries": 2, "backoff": 0.01, "timeout": 30, **options}
    return OpenAIEmbedder(server.base_url, "use-served", "s3cret", **options)


def test_vectors_come_in_batches_and_equal_the_served_models(server):
    embedder = client(server)
    texts = [f"Дефект номер {i}: приложение падает при входе" for i in range(10)]
    vectors = embedder.embed_documents(texts).dense
    assert vectors.shape == (10, 512) and embedder.dimensions == 512
    assert [len(r["input"]) for r in server.requests] == [4, 4, 2]
    assert set(server.authorizations) == {"Bearer s3cret"}
    local = server.embed(texts)
    cosines = np.sum(vectors * local, axis=1) / np.linalg.norm(local, axis=1)
    assert np.all(cosines > 0.999)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.model_id == "openai:use-served"


def test_transient_errors_are_retried_and_retry_after_is_honoured(server):
    embedder = client(server)
    server.fail(503, times=2)
    assert embedder.embed_query("приоритет дефекта").dense.shape == (1, 512)
    assert len(server.requests) == 3
    server.fail(429, retry_after=0)
    assert embedder.embed_query("серьёзность").dense.shape == (1, 512)


def test_a_server_that_keeps_failing_or_is_down_is_a_plain_error(server):
    embedder = client(server)
    server.fail(500, times=3)
    with pytest.raises(EmbeddingUnavailable, match=r"answered with an error \(500\).*3 times"):
        embedder.embed_query("x")
    server.fail(400)
    with pytest.raises(EmbeddingUnavailable, match=r"refused the request \(400"):
        embedder.embed_query("x")
    server.stop()
    with pytest.raises(EmbeddingUnavailable, match="cannot be reached"):
        embedder.embed_query("x")


@pytest.fixture
def served_embedder(server, settings) -> Iterator[EmbeddingsTestServer]:
    """The portal configured with KB_EMBEDDER=openai against the test server."""
    settings.EMBEDDER, settings.EMBEDDER_MODEL = "openai", "use-served"
    settings.EMBEDDER_BASE_URL = server.base_url
    settings.EMBEDDER_RETRIES, settings.EMBED_BATCH = 1, 4
    get_embedder.cache_clear()
    yield server
    get_embedder.cache_clear()


def wiki(tmp_path, *pages: str):
    folder = tmp_path / "wiki"
    for page in pages:
        target = folder / page
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / "wiki_qa_bible_ru" / page, target)
    return folder


def test_the_server_stopped_mid_ingest_fails_plainly_and_the_next_reindex_succeeds(
    db, served_embedder, tmp_path, bob
):
    served_embedder.go_down_after(1)  # the first batch, then connection refused
    summary = ingest_folder(wiki(tmp_path, PAGE), "Wiki", kind="wiki")
    version = DocumentVersion.objects.get()
    assert version.status == "failed", (summary, version.error, len(served_embedder.requests))
    assert version.error.startswith("Not indexed: the embeddings server at ")
    assert "cannot be reached" in version.error and "Reindex it" in version.error
    assert not Chunk.objects.filter(searchable=True).exists()  # nothing half-embedded
    # Search still works by words while the server is down, and says so.
    down = search("Что такое дефект?")
    assert down.notice.startswith("Word search only: the embeddings server") and not down.hits
    asked = answer_now(
        Conversation.objects.create(user=bob), "Что такое дефект?", user=bob, llm=None
    )
    assert asked.notice.startswith("Поиск шёл только по словам") and asked.outcome == "refusal"

    served_embedder.start()
    assert ingest_version(version.pk, force=True).status == "ready"
    result = search("Что такое дефект?")
    assert result.hits and result.notice == ""
    assert Chunk.objects.filter(searchable=True, embedding_model="openai:use-served").exists()


def test_another_dimension_under_the_same_model_name_is_refused_with_reembed(
    db, served_embedder, tmp_path
):
    ingest_folder(wiki(tmp_path, "obshee/principy-testirovaniya.md"), "Wiki", kind="wiki")
    assert search("принципы тестирования").hits
    served_embedder.dimensions = 256  # another model served under the same name
    get_embedder.cache_clear()
    with pytest.raises(EmbeddingModelMismatch, match=r"512-dimension .* 256 dimensions.*reembed"):
        search("принципы тестирования")
    summary = ingest_folder(wiki(tmp_path / "more", PAGE), "Wiki", kind="wiki")
    assert summary["failed"] == 1
    failed = DocumentVersion.objects.get(status="failed")
    assert "512-dimension" in failed.error and "reembed" in failed.error
