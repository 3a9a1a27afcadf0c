"""The query router: filters read from the question, the words left for ranking."""

from __future__ import annotations

from datetime import date

import pytest

from knowledge.question import read
from knowledge.retrieval.router import read_dates, route


@pytest.mark.parametrize(
    ("question", "section"),
    [
        ("Что сказано в разделе 2.1 про отказы?", "2.1"),
        ("раздел 2.1", "2.1"),
        ("Требования из п. 4.3", "4.3"),
        ("что в пункте 5.4.2?", "5.4.2"),
        ("подраздел 3.1.1: состав функций", "3.1.1"),
        ("What does section 3.2 say about reliability?", "3.2"),
        ("chapter 6 test methods", "6"),
        ("§ 7.1 обязанности", "7.1"),
    ],
)
def test_section_references_become_a_section_filter(question, section):
    routed = route(read(question))
    assert routed.filters.sections == [section]
    assert section not in routed.text  # the reference itself is not a word to rank by


def test_the_words_around_a_section_reference_are_kept_for_ranking():
    routed = route(read("Что сказано в разделе 2.1 про отказы?"))
    assert "отказы" in routed.text
    assert "разделе" not in routed.text


def test_two_section_references_are_both_kept():
    assert route(read("сравни раздел 2.1 и раздел 3.2")).filters.sections == ["2.1", "3.2"]


def test_a_number_without_a_section_word_is_not_a_section():
    routed = route(read("Сколько стоит 2.1 литра молока?"))
    assert routed.filters.sections == []
    assert routed.filters.is_empty()


@pytest.mark.parametrize(
    "question",
    [
        "Покажи тест-кейсы по авторизации",
        "тест кейсы поиска",
        "тестовые случаи для входа",
        "list the test cases for login",
        "test-case for search",
    ],
)
def test_test_cases_mean_test_case_or_table_chunks(question):
    assert route(read(question)).filters.block_types == ["test_case", "table"]


@pytest.mark.parametrize(
    "question", ["Покажи таблицу требований", "таблица совместимости", "tables of results"]
)
def test_tables_mean_table_chunks(question):
    assert route(read(question)).filters.block_types == ["table"]


@pytest.mark.parametrize(
    "question",
    [
        "Что такое тест-кейс?",
        "Как правильно писать тест-кейсы?",
        "Чем отличаются тест-кейсы от чек-листов?",
        "What is a test case?",
        "How to write good test cases",
    ],
)
def test_a_question_about_the_notion_itself_is_not_a_block_filter(question):
    routed = route(read(question))
    assert routed.filters.block_types == []
    assert "test" in routed.text.lower() or "тест" in routed.text.lower()


def test_the_block_words_are_not_ranked_once_they_are_a_filter():
    routed = route(read("Покажи тест-кейсы по авторизации"))
    assert "тест" not in routed.text.lower()
    assert "авторизации" in routed.text


def test_a_question_without_block_words_has_no_block_filter():
    assert route(read("Как добавить мероприятие в избранное?")).filters.block_types == []


def test_test_cases_of_a_section_set_both_filters():
    routed = route(read("тест-кейсы из раздела 6.3"))
    assert routed.filters.sections == ["6.3"]
    assert routed.filters.block_types == ["test_case", "table"]


def test_source_names_become_a_source_filter_on_word_boundaries():
    names = {"qa wiki": 3, "specs": 5, "hr": 9}
    routed = route(read("Что в QA Wiki про регресс?"), source_names=names)
    assert routed.filters.source_ids == [3]
    # "specs" inside another word does not count; names shorter than 3 letters never do
    assert route(read("respecsful hr question"), source_names=names).filters.source_ids == []


def test_a_version_label_is_read():
    assert route(read("Что изменилось в версии 2.3?")).version_labels == ["2.3"]
    assert route(read("what did version 1.0 say")).version_labels == ["1.0"]
    assert route(read("чем v3 лучше")).version_labels == ["3"]
    assert route(read("Как добавить мероприятие?")).version_labels == []


@pytest.mark.parametrize(
    ("question", "dates"),
    [
        ("ПМИ от 2019-05-04", [date(2019, 5, 4)]),
        ("ПМИ от 04.05.2019", [date(2019, 5, 4)]),
        ("ПМИ от 4 мая 2019 года", [date(2019, 5, 4)]),
        ("the terms of 9 June 2017", [date(2017, 6, 9)]),
        ("что изменилось между 4 и 14 мая 2019", [date(2019, 5, 4), date(2019, 5, 14)]),
        ("от 31.02.2019", []),  # no such day
    ],
)
def test_version_dates_are_read(question, dates):
    assert route(read(question)).dates == dates


def test_a_date_without_year_uses_the_default_year():
    assert read_dates("версия от 4 мая", default_year=2019) == [date(2019, 5, 4)]
    assert read_dates("версия от 4 мая") == []
