"""Document-level evidence: a document whose text as a whole holds the question's words
outranks a document with one slightly better chunk and nothing else on the subject."""

from __future__ import annotations

import pytest

from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.weights import Fusion, Hits
from tests.knowledge.retrieval.conftest import add_document, make_source

pytestmark = pytest.mark.django_db

CACHE = """# Кэш

## Очистка кэша браузера

Кэш браузера очищают перед повторной проверкой, иначе страница придёт из кэша.

## Очистка кэша на сервере

Кэш на сервере очищают после изменения данных, иначе кэш отдаст старые данные.

## Когда очищают кэш

Кэш очищают после выкладки, иначе устаревший кэш покажет старую страницу.
"""

RELEASE = """# Выкладка релиза

## Зачем очищают кэш

Кэш очищают, чтобы после выкладки все увидели новую версию.

## Команда релиза

В команду релиза входят разработчик, тестировщик и менеджер; они договариваются о дате,
составе изменений, плане отката и о том, кто дежурит в день выкладки.

## Календарь релизов

Релизы выходят раз в две недели по вторникам; срочные исправления выкладывают в любой день
после согласования с руководителем разработки и службой поддержки.
"""

QUESTION = "Зачем очищают кэш?"


def _first_document(weight: float) -> str:
    from knowledge.models import Document

    options = SearchOptions(
        hits=Hits(k=4, per_document=1, cascade=False),
        fusion=Fusion(document_weight=weight),
        min_score=-1.0,
    )
    result = search(QUESTION, options=options)
    return Document.objects.get(pk=result.hits[0].document_id).title


def test_a_document_matching_as_a_whole_outranks_one_slightly_better_chunk(embedder):
    source = make_source("Wiki")
    add_document(source, "cache.md", CACHE, embedder)
    add_document(source, "release.md", RELEASE, embedder)
    # The release page's one paragraph scores a little better alone (0.681 against 0.675);
    # the cache page holds the question's words throughout and wins with document evidence.
    assert _first_document(0.0) == "Выкладка релиза"
    assert _first_document(0.1) == "Кэш"
