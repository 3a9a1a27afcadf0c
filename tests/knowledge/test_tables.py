"""Tables of figures told from tables of words by their cells, and the labels of a table's
rows (knowledge.tables)."""

from __future__ import annotations

import pytest

from knowledge.parsing.base import Table
from knowledge.tables import is_figure_cell, is_figure_table, row_labels


@pytest.mark.parametrize(
    "cell", ["$60,584", "21,213", "(265)", "$ (1,234.5)", "12 %", "9%", "1.27", "2023", "−4"]
)
def test_amounts_shares_and_counts_are_figures(cell):
    assert is_figure_cell(cell)


@pytest.mark.parametrize("cell", ["Да", "n/a", "—", "Q3 2023", "iPhone", "Менее 2%", ""])
def test_words_and_nil_cells_are_not_figures(cell):
    assert not is_figure_cell(cell)


def test_a_statement_of_operations_is_a_table_of_figures():
    table = Table(
        ["", "Three Months Ended July 1, 2023", "Three Months Ended June 25, 2022"],
        [
            ["Net sales:", "", ""],
            ["Products", "$60,584", "$63,355"],
            ["Other income/(expense), net", "(265)", "(10)"],
            ["Restructuring", "—", "—"],
        ],
    )
    assert is_figure_table(table)


def test_a_table_of_words_is_not_one_even_with_a_number_or_two():
    table = Table(
        ["Условие", "Правило 1", "Правило 2", "Правило 3"],
        [
            ["Состоит в браке?", "Да", "Да", "Нет"],
            ["Хороший студент?", "Да", "Нет", "Да"],
            ["Действия", "-", "-", "-"],
            ["Скидка ($)", "60", "25", "50"],
        ],
    )
    assert not is_figure_table(table)  # nil cells count neither way: 3 figures of 9 values


def test_a_table_of_labels_only_is_not_a_table_of_figures():
    assert not is_figure_table(Table(["Шаг"], [["Открыть"], ["Закрыть"]]))
    assert not is_figure_table(Table(["A", "B"], [["x", "—"], ["y", "n/a"]]))


def test_row_labels_are_the_first_filled_cells_and_the_headers_first_cell():
    markdown = (
        "Certain balance sheet components:\n\n"
        "| Inventories (1): | July 30, 2023 | January 29, 2023 |\n"
        "| --- | --- | --- |\n"
        "| Raw materials | $1,632 | $2,430 |\n"
        "|  | 1,058 | 466 |\n"
        "| — | 1 | 2 |\n"
        "| Total inventories | $4,319 | $5,159 |\n"
        "| Raw materials | $1 | $2 |\n"
        "| Input \\| output | 3 | 4 |\n"
    )
    # Figures and nil cells are no labels, a repeated label counts once, an escaped pipe is
    # part of the cell.
    assert row_labels(markdown) == [
        "Inventories (1):",
        "Raw materials",
        "Total inventories",
        "Input | output",
    ]


def test_a_column_header_is_not_a_row_label_and_each_table_has_its_own_header():
    markdown = (
        "|  | July 30, 2023 | January 29, 2023 |\n| --- | --- | --- |\n| Cash | 1 | 2 |\n\n"
        "Text between the tables.\n\n"
        "| Поле | Тип |\n| :--- | ---: |\n| Link | string |\n"
    )
    assert row_labels(markdown) == ["Cash", "Поле", "Link"]
