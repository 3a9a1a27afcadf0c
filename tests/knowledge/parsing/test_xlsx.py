"""XlsxParser on workbooks built here with openpyxl (and, where openpyxl cannot, edited as XML)."""

from __future__ import annotations

import io
import zipfile
from datetime import date, datetime

import openpyxl
import pytest
from openpyxl.styles import Font

from knowledge.parsing.base import Block, ParsedDocument, ParseError
from knowledge.parsing.xlsx import XlsxParser


def save(workbook: openpyxl.Workbook) -> bytes:
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def parse(data: bytes, filename: str = "plans/checks.xlsx") -> ParsedDocument:
    return XlsxParser().parse(data, filename=filename)


def sheet_of(rows: list[list[object]], title: str = "Data") -> openpyxl.Workbook:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = title
    for row in rows:
        sheet.append(row)
    return workbook


def tables(doc: ParsedDocument) -> list[Block]:
    return [b for b in doc.blocks if b.table is not None]


def replace_in_member(data: bytes, member: str, old: bytes, new: bytes) -> bytes:
    """The workbook with one part's XML edited: what a program that calculates would have saved."""
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            content = source.read(item.filename)
            if item.filename == member:
                assert old in content
                content = content.replace(old, new)
            target.writestr(item, content)
    return buffer.getvalue()


def test_each_sheet_is_a_level_one_heading_over_its_own_table():
    workbook = sheet_of([["Name", "Role"], ["Ann", "QA"]], title="People")
    second = workbook.create_sheet("Servers")
    second.append(["Host", "Port"])
    second.append(["db1", 5432])
    doc = parse(save(workbook))
    assert [(b.kind, b.text, b.section, b.level) for b in doc.blocks if b.kind == "heading"] == [
        ("heading", "People", "1", 1),
        ("heading", "Servers", "2", 1),
    ]
    assert [(b.sheet, b.heading_path, b.section) for b in tables(doc)] == [
        ("People", ["People"], "1"),
        ("Servers", ["Servers"], "2"),
    ]
    assert tables(doc)[1].table.rows == [["db1", "5432"]]
    assert doc.metadata["sheets"] == ["People", "Servers"]


def test_header_is_the_first_row_with_two_filled_cells_and_a_title_above_it_is_text():
    doc = parse(save(sheet_of([["Release plan"], [], ["Task", "Owner"], ["Build", "Ann"]])))
    text, table = doc.blocks[1:]
    assert (text.kind, text.text, text.row_start) == ("text", "Release plan", 1)
    assert table.table.header == ["Task", "Owner"]
    assert (table.row_start, table.row_end, table.meta["header_row"]) == (4, 4, 3)


def test_a_title_merged_across_the_columns_is_text_above_the_header():
    workbook = sheet_of([["Smoke checks"], ["Area", "Check", "Result"], ["Login", "Opens", "ok"]])
    workbook.active.merge_cells("A1:C1")
    doc = parse(save(workbook))
    assert [(b.kind, b.text) for b in doc.blocks[1:2]] == [("text", "Smoke checks")]
    assert tables(doc)[0].table.header == ["Area", "Check", "Result"]


def test_rows_after_an_empty_row_are_a_new_block_under_the_same_header():
    rows = [["Task", "Owner"], ["Build", "Ann"], ["Test", "Bob"], [], [], ["Ship", "Eve"]]
    first, second = tables(parse(save(sheet_of(rows))))
    assert (first.row_start, first.row_end, first.table.rows) == (
        2,
        3,
        [["Build", "Ann"], ["Test", "Bob"]],
    )
    assert (second.row_start, second.row_end, second.table.rows) == (6, 6, [["Ship", "Eve"]])
    assert second.table.header == ["Task", "Owner"]
    assert second.text.startswith("| Task | Owner |\n| --- | --- |\n| Ship | Eve |")


def test_a_bold_row_after_an_empty_row_is_the_header_of_a_second_table():
    workbook = sheet_of([["Task", "Owner"], ["Build", "Ann"], [], ["Server", "Port"], ["db", 5432]])
    for cell in workbook.active[4]:
        cell.font = Font(bold=True)
    first, second = tables(parse(save(workbook)))
    assert first.table.header == ["Task", "Owner"]
    assert second.table.header == ["Server", "Port"]
    assert (second.row_start, second.table.rows, second.meta["header_row"]) == (
        5,
        [["db", "5432"]],
        4,
    )


def test_dates_numbers_and_percentages_read_as_people_write_them():
    workbook = sheet_of(
        [
            ["Day", "Moment", "Count", "Ratio", "Share", "Done"],
            [date(2024, 3, 1), datetime(2024, 3, 1, 14, 30), 3.0, 0.1 + 0.2, 0.125, True],
        ]
    )
    workbook.active["E2"].number_format = "0.0%"
    (table,) = tables(parse(save(workbook)))
    assert table.table.rows == [["2024-03-01", "2024-03-01 14:30", "3", "0.3", "12.5%", "TRUE"]]


def test_merged_cells_repeat_their_value_across_the_merge():
    workbook = sheet_of([["Area", "Check", "Note"], ["Login", "Valid password", "ok"]])
    sheet = workbook.active
    sheet.append([None, "Wrong password", "locks after 3"])
    sheet.merge_cells("A2:A3")
    sheet.merge_cells("B5:C5")
    sheet["B5"] = "Spans two columns"
    sheet["A5"] = "Logout"
    first, second = tables(parse(save(workbook)))
    assert [row[0] for row in first.table.rows] == ["Login", "Login"]
    assert second.table.rows == [["Logout", "Spans two columns", "Spans two columns"]]


def test_a_formula_is_read_as_the_value_excel_saved_for_it():
    workbook = sheet_of([["Price", "Qty", "Total"], [10, 4, "=A2*B2"]])
    # openpyxl saves formulas without results; put in the <v> a calculating program would write.
    data = replace_in_member(
        save(workbook), "xl/worksheets/sheet1.xml", b"<f>A2*B2</f><v></v>", b"<f>A2*B2</f><v>40</v>"
    )
    doc = parse(data)
    assert tables(doc)[0].table.rows == [["10", "4", "40"]]
    assert doc.warnings == []


def test_a_formula_without_a_saved_value_is_a_warning_and_the_literal_cells_still_read():
    doc = parse(save(sheet_of([["Price", "Qty", "Total"], [10, 4, "=A2*B2"]])))
    assert tables(doc)[0].table.rows == [["10", "4", ""]]
    assert len(doc.warnings) == 1
    assert "1 formula cell(s) have no saved value (C2)" in doc.warnings[0]


def test_a_checklist_with_a_status_column_is_a_test_case_named_after_its_sheet():
    rows = [["#", "Проверка", "Статус"], [1, "Вход", "Passed"], [2, "Выход", "Не пройден"]]
    (block,) = tables(parse(save(sheet_of(rows, title="Авторизация"))))
    assert block.kind == "test_case"
    assert block.meta["function"] == "Авторизация"


def test_a_sheet_with_steps_and_expected_results_is_a_test_case():
    rows = [["ID", "Шаги", "Ожидаемый результат"], ["TC-1", "Открыть форму", "Форма открыта"]]
    (block,) = tables(parse(save(sheet_of(rows, title="Регистрация"))))
    assert (block.kind, block.meta["function"]) == ("test_case", "Регистрация")


def test_an_ordinary_table_with_a_status_column_is_not_a_test_case():
    rows = [["Task", "Status"], ["Build", "Open"], ["Ship", "Closed"]]
    (block,) = tables(parse(save(sheet_of(rows))))
    assert block.kind == "table"
    assert "function" not in block.meta


def test_hidden_sheet_is_kept_and_its_blocks_say_so():
    workbook = sheet_of([["A", "B"], ["1", "2"]], title="Visible")
    hidden = workbook.create_sheet("Lookup")
    hidden.append(["Code", "Name"])
    hidden.append(["RU", "Russia"])
    hidden.sheet_state = "hidden"
    doc = parse(save(workbook))
    lookup = [b for b in doc.blocks if b.sheet == "Lookup"]
    assert [b.kind for b in lookup] == ["heading", "table"]
    assert all(b.meta.get("hidden") for b in lookup)
    assert doc.metadata["hidden_sheets"] == ["Lookup"]


def test_title_comes_from_workbook_properties_else_the_file_name():
    workbook = sheet_of([["A", "B"], ["1", "2"]])
    assert parse(save(workbook), filename="plans/q3 checks.xlsx").title == "q3 checks"
    workbook.properties.title = "Q3 regression"
    assert parse(save(workbook)).title == "Q3 regression"


def test_truncated_workbook_is_refused_as_damaged():
    data = save(sheet_of([["A", "B"], ["1", "2"]]))
    with pytest.raises(ParseError, match=r"^The file is not a valid Excel workbook \(it may be"):
        parse(data[: len(data) // 2])


def test_workbook_with_broken_sheet_xml_is_refused_as_damaged():
    data = save(sheet_of([["A", "B"], ["1", "2"]]))
    broken = replace_in_member(data, "xl/worksheets/sheet1.xml", b"</sheetData>", b"<row")
    with pytest.raises(ParseError, match="not a valid Excel workbook"):
        parse(broken)


def test_bytes_that_are_not_a_workbook_are_refused():
    with pytest.raises(ParseError, match="not a valid Excel workbook"):
        parse(b"Name,Role\nAnn,QA\n")


def test_ole_container_with_an_encrypted_package_is_reported_as_password_protected():
    # The shape of an encrypted .xlsx (an OLE file holding an "EncryptedPackage" stream), not a
    # real encrypted workbook: nothing here can encrypt one.
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(500) + "EncryptedPackage".encode("utf-16-le")
    with pytest.raises(ParseError, match="^The workbook is password-protected$"):
        parse(ole)


def test_ole_container_without_an_encrypted_package_is_an_old_xls_workbook():
    with pytest.raises(ParseError, match=r"Excel 97-2003 workbook \(\.xls\)"):
        parse(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(500))


def test_workbook_without_values_has_no_text():
    workbook = openpyxl.Workbook()
    workbook.active["B2"].font = Font(bold=True)
    with pytest.raises(ParseError, match="^The document contains no text$"):
        parse(save(workbook))
