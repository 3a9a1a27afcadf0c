"""Knowledge-base helpers for retrieval tests: documents ingested in-process with the real
USE embedder, through the same registration and ingest services as every entry point."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings

from knowledge.models import Document, Source


def corpus_file(*parts: str) -> Path:
    """A file of the shared corpus (``KB_DEMO_CORPUS``, by default ``../shared/corpus``)."""
    return Path(settings.DEMO_CORPUS_DIR).joinpath(*parts)


@pytest.fixture(scope="session")
def embedder():
    from knowledge.embedding import get_embedder

    return get_embedder()


def add_document(
    source: Source, path: str, data: bytes | str, embedder, *, label: str | None = None
) -> Document:
    """Register ``data`` as the newest version of ``path`` and ingest it now.

    Sections are never merged with their neighbours (CHUNK_MIN_TOKENS=0), so a test document
    with N sections has N chunks and a test can reason about each.
    """
    from knowledge.ingest.pipeline import ingest_version
    from knowledge.ingest.registration import register_file

    raw = data.encode() if isinstance(data, str) else data
    registration = register_file(source, path, raw, enqueue=False, label=label)
    with override_settings(CHUNK_MIN_TOKENS=0):
        result = ingest_version(registration.version.pk, embedder=embedder)
    assert result.status == "ready", result.error
    return Document.objects.get(pk=registration.document.pk)


def make_source(name: str, **fields) -> Source:
    return Source.objects.create(name=name, **fields)


@pytest.fixture(scope="module")
def programme(django_db_setup, django_db_blocker, embedder) -> Document:
    """The real test programme (ПМИ) in the source "Specifications", committed for the module
    (it takes a while to embed) and removed afterwards, statistics included."""
    from knowledge import termstats

    with django_db_blocker.unblock():
        source = Source.objects.create(name="Specifications")
        path = corpus_file("specs_hse_app_ru", "Программа и методика испытаний.docx")
        document = add_document(source, path.name, path.read_bytes(), embedder)
        yield document
        source.delete()
        termstats.rebuild()
