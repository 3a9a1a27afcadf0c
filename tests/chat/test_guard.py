"""Personal data redaction (pure function) and citation checking."""

from __future__ import annotations

import pytest

from chat.answer.citations import cited_numbers, clean_citations
from chat.pipeline.guard import redact


@pytest.mark.parametrize(
    ("text", "kinds", "gone"),
    [
        ("напишите на ivan.petrov@example.com", ["e-mail"], "ivan.petrov@example.com"),
        ("звоните +7 (916) 123-45-67 вечером", ["phone"], "123-45-67"),
        ("или 8 800 555 35 35", ["phone"], "555 35 35"),
        ("мобильный 89161234567", ["phone"], "89161234567"),
        ("call (415) 555-0100", ["phone"], "555-0100"),
        ("карта 4111 1111 1111 1111", ["card"], "4111 1111 1111 1111"),
        ("паспорт серии 45 06 123456", ["passport"], "45 06 123456"),
        ("СНИЛС 112-233-445 95", ["SNILS"], "112-233-445 95"),
        ("ИНН 7707083893", ["INN"], "7707083893"),
    ],
)
def test_personal_data_is_redacted(settings, text, kinds, gone):
    settings.PII_REDACTION = True
    result = redact(text)
    assert result.kinds == kinds
    assert gone not in result.text
    assert f"[{kinds[0]}]" in result.text


@pytest.mark.parametrize(
    "text",
    [
        "раздел 2.1.3 версии 2019-05-04",
        "12 шагов и 1 200 000 рублей",
        "версия от 04.05.2019, сборка 1.2.3.4567, адрес 192.168.10.200",
        "номер карты 4111 1111 1111 1112 не проходит проверку Луна",
    ],
)
def test_numbers_that_are_not_personal_data_stay(settings, text):
    settings.PII_REDACTION = True
    assert redact(text).text == text


def test_redaction_can_be_switched_off(settings):
    settings.PII_REDACTION = False
    assert redact("ivan@example.com").text == "ivan@example.com"


def test_citations_outside_the_sources_are_removed():
    text, removed = clean_citations("Да [1][4], и ещё [2, 7]. Итог [3].", available=3)
    assert text == "Да [1], и ещё [2]. Итог [3]."
    assert removed == [4, 7]
    assert cited_numbers(text) == {1, 2, 3}
