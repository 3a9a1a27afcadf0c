"""A question that names a document outright ("по техзаданию", "в ПЗ", a staff alias) is
searched in that document by ``search()`` itself: the command line, the JSON API, MCP and the
chat get the same hits."""

from __future__ import annotations

import pytest

from knowledge.retrieval.hybrid import search
from knowledge.retrieval.types import Filters
from tests.knowledge.retrieval.conftest import add_document, make_source

pytestmark = pytest.mark.django_db

SPEC = """# Техническое задание

## Требования к надёжности

Приложение сохраняет избранные мероприятия при перезапуске и работает без сети.

## Требования к составу и параметрам технических средств

Смартфон с операционной системой Android 8 или новее.
"""

WIKI = """# Шифрование данных пользователей

Шифровать данные пользователей нужно стойким алгоритмом, а код приложения прятать от взлома
обфускацией: так данные пользователей не прочитает тот, кто украл телефон.
"""

QUESTION = "Нужно ли по техзаданию шифровать данные пользователей или прятать код от взлома?"


@pytest.fixture
def documents(embedder):
    specs = make_source("Specifications")
    wiki = make_source("Wiki")
    spec = add_document(specs, "Техническое задание.md", SPEC, embedder)
    page = add_document(wiki, "encryption.md", WIKI, embedder)
    return spec, page


def test_a_question_naming_the_spec_by_abbreviation_is_searched_in_it(documents, embedder):
    spec, page = documents
    # Without the name the wiki page answers: every word of the question is on it.
    plain = search(QUESTION.replace("по техзаданию ", ""), embedder=embedder)
    assert plain.hits and plain.hits[0].document_id == page.pk

    result = search(QUESTION, embedder=embedder)
    assert result.filters.document_ids == [spec.pk]
    # The spec's best passages are the evidence even though none repeats the question's words.
    assert result.hits and {h.document_id for h in result.hits} == {spec.pk}


def test_a_staff_alias_names_the_document_too(documents, embedder):
    spec, page = documents
    spec.aliases = "спека HSE"
    spec.save(update_fields=["aliases"])
    result = search(
        "Что в спека HSE сказано про шифрование данных пользователей?", embedder=embedder
    )
    assert {h.document_id for h in result.hits} == {spec.pk}


def test_a_named_document_outside_the_searched_sources_is_not_forced(documents, embedder):
    spec, page = documents
    result = search(QUESTION, filters=Filters(source_ids=[page.source_id]), embedder=embedder)
    assert not result.filters.document_ids
    assert result.hits and result.hits[0].document_id == page.pk
