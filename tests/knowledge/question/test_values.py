"""What a value of a kind looks like in a text (``knowledge.question.values``)."""

from __future__ import annotations

import pytest

from knowledge.question.values import holds_value


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Вложение не больше 512 килобайт.", "size"),
        ("Образ занимает 2 гигабайта.", "size"),
        ("Экран от 5,5 дюйма.", "size"),
        ("Ответ приходит за 200 мс.", "duration"),
        ("Подписка стоит 10 долларов.", "price"),
    ],
)
def test_a_value_given_in_a_unit_of_its_kind_is_found(text, kind):
    assert holds_value(text, kind)


def test_a_sentence_without_a_figure_states_no_size():
    assert not holds_value("Размер вложения ограничен настройками сервера.", "size")


@pytest.mark.parametrize(
    "text",
    [
        "Группа состоит из трёх-восьми человек.",
        "Проверку ведут двумя способами.",
        "Отчёт пишут пятеро.",
        "Нужны сотни устройств.",
        "Лимит: пятьсот запросов.",
    ],
)
def test_a_number_in_words_is_a_number_in_any_case(text):
    assert holds_value(text, "number")


@pytest.mark.parametrize(
    "text",
    [
        "Стоимость зависит от тарифа.",
        "Триггер запускает сборку.",
        "Однако сторона заказчика против.",
        "Семья устройств расширяется.",
    ],
)
def test_a_word_that_only_begins_like_a_numeral_is_none(text):
    assert not holds_value(text, "number")
