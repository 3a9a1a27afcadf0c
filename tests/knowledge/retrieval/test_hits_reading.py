"""Showing hits reads what a page shows, not what only search reads: no vectors, no full-text
vectors, no parsed document (tens of KB of JSON a version, once decoded for every hit)."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from knowledge.retrieval.hits import describe
from knowledge.retrieval.hybrid import search
from tests.knowledge.retrieval.conftest import add_document, make_source

PAGE = """# Ротация паролей

Пароль администратора меняют каждые 90 дней, старый пароль блокируется сразу.
"""


def test_describing_hits_reads_no_vectors_and_no_parsed_document(db, embedder):
    source = make_source("Security")
    document = add_document(source, "passwords.md", PAGE, embedder, label="2024-05")
    result = search("Как часто меняют пароль администратора?", embedder=embedder)
    assert result.hits

    with CaptureQueriesContext(connection) as queries:
        hits = describe(result.hits)
        # Everything a page shows is there without another query.
        shown = [(h.document, h.version, h.source, h.text, h.heading_path) for h in hits]
    assert len(queries.captured_queries) == 1
    sql = queries.captured_queries[0]["sql"]
    for column in ("parsed", "embedding", "search_vector", "sparse"):
        assert f'."{column}"' not in sql
    assert shown[0][:3] == (document.title, "2024-05", "Security")
    assert "90 дней" in shown[0][3]
