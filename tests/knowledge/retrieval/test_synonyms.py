"""The corpus's own synonyms: read from "Русский термин (English term, ABBR)", used to expand
a question's lexical search, so a question using only the English term finds the page that
uses only the Russian one."""

from __future__ import annotations

import pytest

from knowledge.models import Document, Synonym
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.weights import Hits, Retrieval
from knowledge.synonyms import expansions, read_pairs
from tests.knowledge.retrieval.conftest import add_document, make_source

GLOSSARY = """# Глоссарий

- Политика отсутствия багов (ZBP - Zero Bug Policy): правило команды о найденных ошибках.
- Матрица трассируемости (RTM - Requirement Traceability Matrix): связь требований и проверок.
"""

OTHER = """# Отчёт о дефекте

## Поля отчёта

Отчёт о дефекте содержит заголовок, шаги воспроизведения, ожидаемый и фактический результат.
"""


def test_pairs_are_read_with_their_abbreviations():
    pairs = read_pairs("# Матрица трассируемости (RTM - Requirement Traceability Matrix)")
    assert pairs == {
        ("матрица трассируемости", "rtm"),
        ("матрица трассируемости", "requirement traceability matrix"),
    }
    assert read_pairs("нас подводят нестабильные тесты (flaky tests)") == {
        ("нас подводят нестабильные тесты", "flaky tests"),
        ("подводят нестабильные тесты", "flaky tests"),
        ("нестабильные тесты", "flaky tests"),
    }
    assert not read_pairs("тестирование (A/B testing)")  # too general a Russian name
    assert not read_pairs("функция (см. выше)")  # no Latin name in the brackets


RULES = """# Правила команды

## Ошибки в спринте

Мы соблюдаем политику отсутствия багов: каждый найденный баг исправляется в текущем спринте,
а новая функциональность не начинается, пока открыт хоть один баг.
"""

DISTRACTORS = {
    "sprint.md": "# Спринт\n\n## Планирование\n\nВ начале спринта команда выбирает задачи из"
    " бэклога и оценивает их в стори поинтах.\n",
    "severity.md": "# Серьёзность дефекта\n\n## Уровни\n\nБлокирующий, критический, значительный"
    " и незначительный дефект различаются влиянием на работу системы.\n",
    "review.md": "# Ревью кода\n\n## Правила\n\nКаждое изменение смотрят два разработчика; замечания"
    " исправляют до слияния ветки.\n",
}


@pytest.mark.django_db
def test_a_question_using_only_the_english_term_finds_the_russian_page(embedder):
    source = make_source("Wiki")
    add_document(source, "glossary.md", GLOSSARY, embedder)
    rules = add_document(source, "rules.md", RULES, embedder)
    add_document(source, "report.md", OTHER, embedder)
    for path, text in DISTRACTORS.items():
        add_document(source, path, text, embedder)
    assert Synonym.objects.filter(term="zero bug polic").exists()
    question = "How does our team apply the zero bug policy?"
    assert "политика отсутствия багов" in expansions(question)
    assert "zero bug policy" in expansions("Что такое политика отсутствия багов?")

    def documents(use_synonyms: bool, lists: tuple[str, ...]) -> list[int]:
        options = SearchOptions(
            hits=Hits(k=3, per_document=1, cascade=False),
            lists=lists,
            retrieval=Retrieval() if use_synonyms else Retrieval(synonym_weight=0.0),
            min_score=-1.0,
        )
        return [h.document_id for h in search(question, options=options).hits]

    # The rules page never says "zero bug policy": the words of the English question reach it
    # only through the glossary's pair (the dense model may find it anyway, across languages).
    assert rules.pk in documents(True, ("lexical",))
    assert rules.pk not in documents(False, ("lexical",))
    assert rules.pk in documents(True, ("dense", "lexical"))[:2]


@pytest.mark.django_db
def test_a_removed_document_takes_its_synonyms_out_of_search(embedder):
    source = make_source("Wiki")
    glossary = add_document(source, "glossary.md", GLOSSARY, embedder)
    assert expansions("что такое RTM")
    Document.objects.filter(pk=glossary.pk).update(removed_at="2026-01-01T00:00:00Z")
    assert expansions("что такое RTM") == []


@pytest.mark.django_db
def test_a_term_is_found_anywhere_in_the_question_only_as_whole_words():
    Synonym.objects.create(term="Нагрузочное тестирование", equivalent="load testing")
    Synonym.objects.create(term="нагрузочный профиль", equivalent="load profile")
    Synonym.objects.create(term="стенд", equivalent="staging")
    Synonym.objects.create(term="стенд", equivalent="test bench")
    # Mid-question, another case ending; the second term shares only its first word.
    found = expansions("Как часто запускают НАГРУЗОЧНОЕ тестирование на стенде?")
    assert found == ["load testing", "staging", "test bench"]
    assert expansions("Нагрузочное") == []  # a part of a term is not the term
    # Only the synonyms of documents the user may read, and staff-added ones.
    source = make_source("Restricted")
    document = Document.objects.create(source=source, path="x.md", title="X")
    Synonym.objects.create(term="стенд", equivalent="sandbox", document=document)
    assert "sandbox" in expansions("стенд", [source.pk])
    assert expansions("стенд", []) == ["staging", "test bench"]
