"""Query expansion from the first results, PRF (``knowledge.retrieval.prf``): the lexical list run again with
the best documents' distinctive words raises the chunks written in that document's vocabulary;
the question's ceiling, and so its threshold, does not move."""

from __future__ import annotations

import pytest

from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.prf import prf_lexemes
from knowledge.retrieval.weights import Fusion, Hits, Prf
from tests.knowledge.retrieval.conftest import add_document, make_source

pytestmark = pytest.mark.django_db

FUZZING = """# Фаззинг

## Что это

Фаззинг: парсер получает мусорные данные, а фаззер мутирует входные файлы из корпуса.

## Как запускают

Фаззер мутирует корпус входных файлов ночью; корпус фаззинга растёт с каждой находкой фаззера,
и упавшие на мутациях данные сохраняют.
"""

CONFIG = """# Конфигурация

## Чтение

Парсер конфигурации читает данные при старте и проверяет обязательные ключи и их типы.
"""

TOOLS = """# Фаззеры

## AFL

AFL — фаззер с мутациями по покрытию; его корпус начинают с маленьких входных файлов.
"""

RELEASE = """# Выкладка

## Календарь

Релизы выходят раз в две недели по вторникам, срочные исправления — после согласования.
"""

QUESTION = "Что делать, если парсер падает на мусорных данных?"


def _knowledge_base(embedder):
    source = make_source("Wiki")
    for path, text in (
        ("fuzzing.md", FUZZING),
        ("tools.md", TOOLS),
        ("config.md", CONFIG),
        ("release.md", RELEASE),
    ):
        add_document(source, path, text, embedder)
    return source


def _lexical(documents: int, below: float = 1.0):
    """The lexical list with a PRF pass over this many best documents (0: none) for a question
    no chunk matches above ``below`` of its best BM25 (1.0: every question)."""
    options = SearchOptions(
        hits=Hits(k=10, per_document=10, cascade=False),
        lists=("lexical",),
        fusion=Fusion(document_weight=0.0),
        prf=Prf(documents=documents, terms=5, weight=0.5, below=below),
        min_score=-1.0,
    )
    return search(QUESTION, options=options)


def _order(result) -> list[str]:
    from knowledge.models import Chunk

    sections = dict(Chunk.objects.values_list("pk", "heading_path"))
    return [" / ".join(sections[h.chunk_id]) for h in result.hits]


def test_prf_raises_the_chunk_written_in_the_best_documents_words(embedder):
    _knowledge_base(embedder)

    plain = _lexical(0)
    assert plain.prf_words == []
    # Without PRF the configuration page's chunk ("парсер", "данные") outranks the fuzzing
    # page's second chunk ("данные" only, in the fuzzing page's own words otherwise).
    order = _order(plain)
    assert order.index("Конфигурация / Чтение") < order.index("Фаззинг / Как запускают")

    fed = _lexical(2)
    assert any(word.startswith("фаззер") or word.startswith("корпус") for word in fed.prf_words)
    order = _order(fed)
    assert order[0] == "Фаззинг / Что это"
    assert order.index("Фаззинг / Как запускают") < order.index("Конфигурация / Чтение")
    # PRF re-orders only: every chunk keeps the score the threshold reads.
    scores = {h.chunk_id: h.score for h in plain.hits}
    assert {h.chunk_id: h.score for h in fed.hits} == pytest.approx(scores)
    # ... and its fused place; the PRF pass has a place of its own.
    fused = {h.chunk_id: h.fused for h in plain.hits}
    assert {h.chunk_id: h.fused for h in fed.hits} == fused
    assert [h.prf.rank for h in fed.hits] == list(range(1, len(fed.hits) + 1))
    assert all(h.prf is None for h in plain.hits)


def test_no_prf_for_a_question_a_chunk_already_matches(embedder):
    _knowledge_base(embedder)
    # The fuzzing page's first chunk matches far better than 0.05 of the question's best BM25.
    assert _lexical(2, below=0.05).prf_words == []


def test_prf_words_leave_out_the_questions_words_and_one_document_words(embedder):
    from knowledge.models import Document

    source = _knowledge_base(embedder)
    fuzzing = Document.objects.get(path="fuzzing.md").pk
    words = prf_lexemes([fuzzing], ["парсер"], 10, None)
    assert "парсер" not in words
    assert "фаззер" in words  # in both fuzzing pages: distinctive, not unique
    # "ночь" is in the fuzzing page only: too rare to tell anything about other pages;
    # "ключ" is in the configuration page, which is not among the best documents.
    assert not any(w.startswith("ноч") or w.startswith("ключ") for w in words)
    assert prf_lexemes([fuzzing], [], 10, [source.pk + 1000]) == []
