"""The minimum score separates questions the knowledge base answers from questions it does not
(the honest refusal: no chunk passes, no LLM call), on the real test programme.

The minimum score is the one calibrated by benchmarks/refusal.py (KB_SEARCH_MIN_SCORE)."""

from __future__ import annotations

import pytest

from knowledge.models import Chunk
from knowledge.retrieval.hybrid import search
from knowledge.retrieval.weights import weights

CALIBRATED_MIN_SCORE = 0.19


@pytest.fixture
def calibrated():
    # The shipped default is the calibrated value, not a test-only one.
    assert weights().gate.min_score == CALIBRATED_MIN_SCORE


@pytest.mark.parametrize(
    ("question", "section"),
    [
        ("Какая влажность и температура нужны для хранения компакт-диска?", "5.4.1"),
        ("Какие навыки должны быть у оператора ЭВМ?", "5.4.2"),
        ("Какая операционная система нужна для сервера?", "5.2"),
        ("Как добавить мероприятие в избранное?", "6.3.1"),
    ],
)
def test_a_question_the_programme_answers_finds_its_section(
    db, programme, embedder, calibrated, question, section
):
    result = search(question, embedder=embedder)
    assert result.found
    sections = Chunk.objects.filter(pk__in=[c.chunk_id for c in result.hits]).values_list(
        "section", flat=True
    )
    assert section in sections


@pytest.mark.parametrize(
    "question",
    [
        "Как испечь шарлотку с яблоками?",
        "Какой пароль от корпоративного VPN?",
        "Сколько стоит обед в нашей столовой?",
        "What's the weather like in Berlin tomorrow?",
        "How do I ask my manager for a raise?",
        # The programme's own words around a word it never mentions: refused only because the
        # unknown word weighs in the question's best possible BM25 (fusion.question_ceiling).
        "Какие требования к зарплате тестировщика?",
        "Как проводить испытания автомобиля на морозе?",
        "Требования к интерфейсу кофемашины?",
        "Какие условия ипотеки для сотрудников?",
    ],
)
def test_a_question_outside_the_knowledge_base_is_refused(
    db, programme, embedder, calibrated, question
):
    result = search(question, embedder=embedder)
    assert not result.found
    assert result.near_misses  # the closest chunks stay available for reformulation tiles
