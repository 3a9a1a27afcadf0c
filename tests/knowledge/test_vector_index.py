"""The vector index of a model is created once, also when two workers store their first chunks
at the same moment (a fresh install with two worker processes)."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from knowledge.vector_index import drop_vector_index, ensure_vector_index, vector_index_exists


def test_two_processes_creating_a_models_index_at_once_both_succeed(transactional_db):
    model_id = "test/race-model"
    drop_vector_index(model_id)
    rounds, errors = 12, []
    for _ in range(rounds):
        start = threading.Barrier(2)

        def create(start: threading.Barrier = start) -> None:
            try:
                start.wait()
                ensure_vector_index(model_id, 8)
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(f"{type(exc).__name__}: {exc}")
            finally:
                connections.close_all()

        threads = [threading.Thread(target=create) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert vector_index_exists(model_id)
        drop_vector_index(model_id)
    assert errors == []


def test_rebuild_applies_the_configured_build_parameters_and_search_still_works(
    transactional_db, settings
):
    """``manage.py vector_index`` shows each model's index and its parameters; ``--rebuild``
    builds the ones not built as configured again (concurrently), in the old one's place."""
    import io

    from django.core.management import CommandError, call_command

    from knowledge.models import Chunk
    from knowledge.retrieval import sql as q
    from knowledge.vector_index import vector_indexes
    from tests.knowledge.embedders import TrigramEmbedder
    from tests.knowledge.retrieval.conftest import add_document, make_source

    embedder = TrigramEmbedder()
    source = make_source("Guides")
    vpn = add_document(
        source, "vpn.md", "# VPN\n\nПодключение к VPN через клиент OpenVPN.\n", embedder
    )
    add_document(source, "mail.md", "# Почта\n\nНастройка почты в Thunderbird.\n", embedder)
    [index] = vector_indexes()
    assert (index.m, index.ef_construction, index.current) == (16, 64, True)

    settings.HNSW_M, settings.HNSW_EF_CONSTRUCTION = 8, 40
    out = io.StringIO()
    call_command("vector_index", stdout=out)
    assert "m=16, ef_construction=64" in out.getvalue()
    assert "rebuild to apply the configured ones" in out.getvalue()

    out = io.StringIO()
    call_command("vector_index", "--rebuild", "--memory", "64MB", stdout=out)
    [rebuilt] = vector_indexes()
    assert (rebuilt.name, rebuilt.m, rebuilt.ef_construction) == (index.name, 8, 40)
    assert "Rebuilt in" in out.getvalue() and "(as configured)" in out.getvalue()
    # The dense list runs on the renamed index and finds the page.
    vector = embedder.embed_query("OpenVPN клиент").dense[0]
    scope = q.Scope(q.Filters(), None, embedder.model_id)
    found = q.dense_search(scope, vector, k=2, ef_search=40)
    assert found and found[0][0] == Chunk.objects.get(document=vpn).pk

    out = io.StringIO()
    call_command("vector_index", "--rebuild", stdout=out)
    assert "Nothing to rebuild." in out.getvalue()
    with pytest.raises(CommandError, match="a size such as"):
        call_command("vector_index", "--rebuild", "--memory", "lots")
    drop_vector_index(embedder.model_id)  # the next test's ingest builds it as configured
