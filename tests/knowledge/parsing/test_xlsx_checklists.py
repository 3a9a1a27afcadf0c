"""Checklist sheets: rows as items under their sections, with their spreadsheet row numbers."""

from __future__ import annotations

import io

import openpyxl

from knowledge.parsing.base import Block, ParsedDocument
from knowledge.parsing.registry import parse_document
from tests.knowledge.checklists import ROW_POSTCODE, ROW_SHORT_PASSWORD, checklist_workbook


def parse_rows(rows: list[list[object]], title: str = "Чек-лист") -> ParsedDocument:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = title
    for row in rows:
        sheet.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return parse_document(buffer.getvalue(), "checks.xlsx")


def tables(doc: ParsedDocument, sheet: str | None = None) -> list[Block]:
    return [b for b in doc.blocks if b.table is not None and sheet in (None, b.sheet)]


def row_of(doc: ParsedDocument, sheet: str, number: int) -> tuple[Block, list[str]]:
    """The table block holding row ``number`` of ``sheet``, and that row's cells."""
    for block in tables(doc, sheet):
        if block.row_start <= number <= block.row_end:
            return block, block.table.rows[number - block.row_start]
    raise AssertionError(f"row {number} is in no table")


def test_section_column_rows_are_grouped_under_a_heading_per_section():
    doc = parse_document(checklist_workbook(), "qa/Чек-лист.xlsx")
    headings = [(b.text, b.level, b.section) for b in doc.blocks if b.kind == "heading"]
    assert headings[:4] == [
        ("Регистрация", 1, "1"),
        ("Поля формы", 2, "1.1"),
        ("Пароль", 2, "1.2"),
        ("Подтверждение e-mail", 2, "1.3"),
    ]
    registration = tables(doc, "Регистрация")
    assert [(b.row_start, b.row_end) for b in registration] == [(5, 8), (9, 12), (13, 15)]
    for block in registration:
        assert block.kind == "test_case" and block.meta["checklist"] is True
        assert block.table.header == [
            "№",
            "Раздел",
            "Проверка",
            "Ожидаемый результат",
            "Статус",
            "Комментарий",
        ]
        assert block.heading_path == ["Регистрация", block.meta["checklist_section"]]
        # The merged section cell is read into every row of its section.
        assert {row[1] for row in block.table.rows} == {block.meta["checklist_section"]}


def test_each_row_keeps_its_spreadsheet_row_number():
    doc = parse_document(checklist_workbook(), "qa/Чек-лист.xlsx")
    block, row = row_of(doc, "Регистрация", ROW_SHORT_PASSWORD)
    assert block.heading_path == ["Регистрация", "Пароль"]
    assert row[:3] == ["5", "Пароль", "Пароль короче 8 символов"]
    block, row = row_of(doc, "Оформление заказа", ROW_POSTCODE)
    assert block.heading_path == ["Оформление заказа", "Доставка"]
    assert row[1] == "Ввод почтового индекса из 5 цифр"


def test_section_title_rows_become_headings_and_leave_the_tables():
    doc = parse_document(checklist_workbook(), "qa/Чек-лист.xlsx")
    checkout = tables(doc, "Оформление заказа")
    assert [b.heading_path[-1] for b in checkout] == ["Корзина", "Доставка", "Оплата"]
    # Rows 2, 6 and 9 are the title rows: the tables skip them.
    assert [(b.row_start, b.row_end) for b in checkout] == [(3, 5), (7, 8), (10, 12)]
    cells = {cell for block in checkout for row in block.table.rows for cell in row}
    assert not {"Корзина", "Доставка", "Оплата"} & cells


def test_a_blank_section_cell_continues_the_section_above():
    doc = parse_rows(
        [
            ["Модуль", "Проверка", "Ожидаемый результат"],
            ["Поиск", "Поиск по артикулу", "Найден один товар"],
            [None, "Поиск с опечаткой", "Предложено исправление"],
            ["Фильтры", "Фильтр по цене", "Показаны товары в диапазоне"],
        ]
    )
    first, second = tables(doc)
    assert first.heading_path == ["Чек-лист", "Поиск"]
    assert first.table.rows[1] == ["Поиск", "Поиск с опечаткой", "Предложено исправление"]
    assert (second.heading_path[-1], second.row_start) == ("Фильтры", 4)


def test_a_checklist_before_its_run_has_no_statuses_yet_and_is_still_one():
    doc = parse_rows(
        [
            ["№", "Проверка", "Ожидаемый результат", "Статус"],
            [1, "Вход с верным паролем", "Открыт личный кабинет", None],
            [2, "Вход с неверным паролем", "Сообщение «Неверный логин или пароль»", None],
        ]
    )
    (block,) = tables(doc)
    assert block.kind == "test_case" and block.meta["checklist"] is True
    assert "checklist_section" not in block.meta  # no sections named: one table, as it was


def test_a_check_alone_in_its_row_is_an_item_not_a_section():
    doc = parse_rows(
        [
            ["№", "Проверка", "Ожидаемый результат", "Статус"],
            ["Авторизация", None, None, None],
            [1, "Вход с верным паролем", "Открыт личный кабинет", "Passed"],
            [None, "Вход через SSO", None, None],
            [None, None, "Сессия продлена", None],  # an expected result continued: not a title
        ]
    )
    headings = [b.text for b in doc.blocks if b.kind == "heading"]
    assert headings == ["Чек-лист", "Авторизация"]
    (block,) = tables(doc)
    assert [row[1] for row in block.table.rows] == ["Вход с верным паролем", "Вход через SSO", ""]
    assert (block.row_start, block.row_end) == (3, 5)


def test_two_title_rows_in_a_row_are_a_section_and_its_subsection():
    doc = parse_rows(
        [
            ["№", "Проверка", "Статус"],
            ["Личный кабинет", None, None],
            ["Смена пароля", None, None],
            [1, "Старый пароль неверен", "Failed"],
            [2, "Новый пароль совпадает со старым", "Passed"],
        ]
    )
    (block,) = tables(doc)
    assert block.heading_path == ["Чек-лист", "Личный кабинет — Смена пароля"]


def test_an_ordinary_table_keeps_a_row_with_one_value():
    doc = parse_rows([["Товар", "Цена"], ["Итого", None], ["Чай", 120]], title="Цены")
    (block,) = tables(doc)
    assert block.kind == "table" and "checklist" not in block.meta
    assert block.table.rows[0] == ["Итого", ""]
