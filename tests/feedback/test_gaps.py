"""Content gaps: refused questions grouped by meaning with the portal's real embedder (USE)."""

from __future__ import annotations

import numpy as np
import pytest

from feedback import analytics
from feedback.clustering import cluster, group_questions, top_words
from feedback.gaps import content_gaps, question_vectors
from feedback.models import QuestionVector
from tests.feedback.conftest import make_answer

REFUSAL = "В документах базы знаний нет ответа на этот вопрос."
HOLIDAYS = [
    "Как оформить отпуск?",
    "Сколько дней отпуска положено в году?",
    "Как перенести отпуск на другой месяц?",
]
VPN = [
    "Как подключиться к VPN из дома?",
    "Не работает VPN на ноутбуке",
]
CANTEEN = ["Во сколько открывается столовая?"]


@pytest.fixture(scope="module")
def embedder():
    from knowledge.embedding import get_embedder

    return get_embedder()


def test_clustering_merges_only_groups_similar_enough():
    vectors = np.array([[1, 0], [0.96, 0.28], [0, 1], [0.28, 0.96], [-1, 0]], dtype=float)
    groups = sorted(sorted(g) for g in cluster(vectors, threshold=0.9))
    assert groups == [[0, 1], [2, 3], [4]]
    assert len(cluster(vectors, threshold=-1.0)) == 1
    assert cluster(np.zeros((0, 2)), 0.5) == []


def test_top_words_prefer_what_sets_a_group_apart():
    everything = [*HOLIDAYS, *VPN, *CANTEEN]
    assert top_words(HOLIDAYS, everything)[0] == "отпуск"
    assert "vpn" in top_words(VPN, everything)[:2]


def test_refused_questions_group_into_topics_named_by_their_central_question(bob, embedder):
    asked = [*HOLIDAYS, HOLIDAYS[0], HOLIDAYS[0].upper() + "  ", *VPN, *CANTEEN]
    for question in asked:
        make_answer(bob, question, outcome="refusal", answer=REFUSAL)
    make_answer(bob, "Что такое дефект?")  # answered: not a gap
    topics = content_gaps(
        analytics.questions(analytics.ReportFilters.from_query({})), embedder=embedder
    )
    by_question = {q: t for t in topics for q, _ in t.questions}
    assert "Что такое дефект?" not in by_question
    assert len({id(by_question[q]) for q in HOLIDAYS}) == 1
    assert len({id(by_question[q]) for q in VPN}) == 1
    assert by_question[HOLIDAYS[0]] is not by_question[VPN[0]]
    assert by_question[CANTEEN[0]] not in (by_question[HOLIDAYS[0]], by_question[VPN[0]])
    holidays = topics[0]  # the most asked first
    assert holidays is by_question[HOLIDAYS[0]] and holidays.asked == 5
    assert holidays.label in HOLIDAYS
    assert holidays.questions[0] == ("Как оформить отпуск?", 3)  # case and blanks folded
    assert "отпуск" in holidays.words


def test_each_distinct_question_is_embedded_once(db, embedder):
    texts = ["как оформить отпуск?", "не работает vpn"]
    first = question_vectors(texts, embedder)
    assert QuestionVector.objects.count() == 2

    class Refuses:  # the stored vectors must be used: embedding again would fail
        model_id = embedder.model_id

        def embed_documents(self, texts):
            raise AssertionError(f"embedded again: {texts}")

    again = question_vectors(texts, Refuses())
    assert np.allclose(first, again, atol=1e-6)


def test_group_questions_keeps_the_biggest_topics():
    vectors = np.eye(5)
    topics = group_questions(list("abcde"), [1, 5, 2, 1, 1], vectors, limit=2)
    assert [(t.label, t.asked) for t in topics] == [("b", 5), ("c", 2)]
