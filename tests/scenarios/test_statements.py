"""Requirement statements found by what they say and how (``scenarios.statements``), wherever
they stand in a requirements document (``scenarios.units.requirements``): one test per kind of
statement, on a parking app's ТЗ of our own."""

from __future__ import annotations

from types import SimpleNamespace

from scenarios import statements, units
from scenarios.numbering import sections


def _heading(number: str, text: str, level: int) -> dict:
    return {"kind": "heading", "text": text, "level": level, "section": number}


def _text(number: str, text: str, kind: str = "text") -> dict:
    return {"kind": kind, "text": text, "section": number}


def _statements(*blocks: dict) -> dict[str, list[tuple[str, str]]]:
    """section number -> [(form, text)] of the requirement statements the document states."""
    loaded = SimpleNamespace(sections=sections(list(blocks)))
    found: dict[str, list[tuple[str, str]]] = {}
    for statement in units.requirements(loaded):
        found.setdefault(statement.section.number, []).append((statement.form, statement.text))
    return found


TZ = [
    _heading("1", "ВВЕДЕНИЕ", 1),
    _heading("1.1", "Наименование программы", 2),
    _text("1.1", "Наименование программы – «Оплата парковки»."),
    _heading("1.2", "Область применения", 2),
    _text("1.2", "Приложение может использоваться водителями в центре города."),
    _heading("3", "НАЗНАЧЕНИЕ РАЗРАБОТКИ", 1),
    _heading("3.1", "Функциональное назначение", 2),
    _text("3.1", "Функциональным назначением программы является оплата стоянки с телефона."),
    _heading("4", "ТРЕБОВАНИЯ К ПРОГРАММЕ", 1),
    _heading("4.1", "Требования к составу выполняемых функций", 2),
    _text("4.1", "Сервер хранит историю оплат водителя."),
    _heading("8", "ПОРЯДОК КОНТРОЛЯ И ПРИЕМКИ", 1),
    _heading("8.1", "Виды испытаний", 2),
    _text("8.1", "Проводится проверка работы программы на тестовом стенде."),
    _heading("8.2", "Приемка", 2),
    _text("8.2", "Работа принимается только при условии успешной оплаты картой и через СБП."),
    _text("8.2", "Исполнитель: Петров П. П., группа 101."),
    _heading("9", "ЭКСПЛУАТАЦИЯ", 1),
    _heading("9.1", "Работа приложения", 2),
    _text("9.1", "Приложение позволяет водителю:"),
    _text("9.1", "- продлить стоянку;\n- получить квитанцию.", "list"),
    _text("9.1", "Оплата не допускается без выбора зоны."),
    _text("9.1", "Квитанция приходит на почту."),
    _heading("9.2", "Производительность", 2),
    _text(
        "9.2",
        "| Параметр | Значение |\n|---|---|\n| Время ответа сервера | не более 2 с |",
        "table",
    ),
    _heading("9.3", "Пользователи", 2),
    _text("9.3", "Как водитель, я хочу продлить стоянку из уведомления, чтобы не возвращаться."),
]


def test_a_statement_of_a_part_titled_as_requirements_is_one_whatever_its_form():
    assert _statements(*TZ)["4.1"] == [("part", "Сервер хранит историю оплат водителя")]


def test_a_purpose_outside_the_requirements_part_is_a_requirement():
    assert _statements(*TZ)["3.1"] == [
        ("purpose", "Функциональным назначением программы является оплата стоянки с телефона")
    ]


def test_an_acceptance_criterion_is_a_requirement_and_the_lines_beside_it_are_not():
    assert _statements(*TZ)["8.2"] == [
        ("acceptance", "Работа принимается только при условии успешной оплаты картой и через СБП")
    ]


def test_the_items_of_a_list_of_functions_and_an_obligation_are_requirements():
    assert _statements(*TZ)["9.1"] == [
        ("function", "продлить стоянку"),
        ("function", "получить квитанцию"),
        ("obligation", "Оплата не допускается без выбора зоны"),
    ]


def test_a_row_of_a_table_of_parameters_with_a_limit_is_a_requirement():
    rows = _statements(*TZ)["9.2"]
    assert [form for form, _ in rows] == ["limit"]
    assert "не более 2 с" in rows[0][1]


def test_a_user_story_is_a_requirement():
    assert [form for form, _ in _statements(*TZ)["9.3"]] == ["story"]


def test_a_name_a_scope_and_a_description_of_the_tests_state_no_requirement():
    found = _statements(*TZ)
    for number in ("1.1", "1.2", "8.1"):
        assert number not in found, found.get(number)


def test_the_forms_in_english():
    assert statements.form("", "The server shall keep every payment for 90 days.") == "obligation"
    assert statements.form("", "Response time is at most 2 s.") == "limit"
    assert statements.form("", "Given a paid session, when it ends, then a receipt is sent.") == (
        "acceptance"
    )
    assert statements.form("", "As a driver, I want to extend my session.") == "story"
    assert statements.form("", "The app is intended to pay for parking.") == "purpose"
    assert statements.form("", "This document describes the parking app.") == ""


def test_a_requirements_document_without_a_part_so_titled_states_them_throughout():
    found = _statements(
        _heading("1", "Экран оплаты", 1),
        _text("1", "Экран показывает сумму и кнопку «Оплатить»."),
    )
    assert found == {"1": [("part", "Экран показывает сумму и кнопку «Оплатить»")]}
