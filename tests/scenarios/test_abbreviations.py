"""Abbreviations read from the documents themselves (``scenarios.abbreviations``), and a text
read with the phrase each one it says stands for (``scenarios.terms.with_abbreviations``)."""

from __future__ import annotations

from scenarios.abbreviations import Abbreviation, defined
from scenarios.terms import read_terms, with_abbreviations


def test_a_phrase_then_its_abbreviation_in_brackets_defines_it_by_its_initials():
    found = defined(
        [
            "Стоянку оплачивают через систему быстрых платежей (СБП) или картой.",
            "Порядок описан в программе и методике испытаний (ПМИ).",
            "Открыть экран и нажать кнопку (рис. 3).",  # no abbreviation
            "Водитель вводит номер (ГРЗ).",  # the initials do not spell it
        ]
    )
    assert found == [
        Abbreviation("СБП", "систему быстрых платежей"),
        Abbreviation("ПМИ", "программе и методике испытаний"),
    ]


def test_an_abbreviation_then_its_definition_in_brackets_may_be_in_other_words():
    found = defined(
        [
            "Сервер отдаёт API (программный интерфейс приложения) в формате json.",
            "Курсы лежат в LMS (Learning management system).",
            "Версия ОС (Android 12) указана в паспорте.",  # a name, not a definition
        ]
    )
    assert found == [
        Abbreviation("API", "программный интерфейс приложения"),
        Abbreviation("LMS", "Learning management system"),
    ]


def test_a_text_saying_the_abbreviation_says_the_phrase_too_unless_it_is_a_name_with_a_number():
    sbp = [Abbreviation("СБП", "систему быстрых платежей")]
    text = "Оплата через СБП: показывать QR-код."
    assert {"быстрый", "платеж"} <= set(with_abbreviations(read_terms(text), text, sbp).weights)
    api = [Abbreviation("API", "программный интерфейс приложения")]
    level = "Минимальный уровень API 26."
    assert "интерфейс" not in with_abbreviations(read_terms(level), level, api).weights
    # Nothing is listed by hand: an abbreviation no document defines is a word like any other.
    assert with_abbreviations(read_terms(text), text, []) == read_terms(text)
