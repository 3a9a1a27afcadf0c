"""DocxParser on the real GOST documents of the corpus and on small documents built here.

The built documents are made at run time with python-docx, plus raw WordprocessingML where
python-docx has no API (outline levels, content controls, text boxes), so no binary fixture is
committed and each test shows the exact structure it is about.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections import Counter
from pathlib import Path

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import OxmlElement, parse_xml
from docx.oxml.ns import qn

from knowledge.parsing.base import Block, ParsedDocument, ParseError
from knowledge.parsing.docx import DocxParser

CORPUS = Path("/work/shared/corpus")
PMI = CORPUS / "specs_hse_app_ru" / "Программа и методика испытаний.docx"
TZ = CORPUS / "specs_hse_app_ru" / "ТЗ-Шакруа-Максим-БПИ182.docx"

NS = (
    'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:v="urn:schemas-microsoft-com:vml"'
)


# --- builders -------------------------------------------------------------------------------------


def parse(document) -> ParsedDocument:
    buffer = io.BytesIO()
    document.save(buffer)
    return DocxParser().parse(buffer.getvalue(), filename="built.docx")


def xml(fragment: str):
    """One WordprocessingML element from text, with the namespaces the tests use."""
    tag_end = re.search(r"[ />]", fragment[1:]).start() + 1
    return parse_xml(fragment[:tag_end] + " " + NS + fragment[tag_end:])


def append(document, element) -> None:
    """Append a body-level element (paragraph, table, content control) before the sectPr."""
    document.element.body.sectPr.addprevious(element)


def paragraph_xml(text: str, ppr: str = "") -> str:
    return f"<w:p><w:pPr>{ppr}</w:pPr><w:r><w:t xml:space='preserve'>{text}</w:t></w:r></w:p>"


def add_style(document, name: str, *, style_id: str = "", ppr: str = "", based_on: str = ""):
    """A paragraph style as another program might write it: any name, id and outline level."""
    style = document.styles.add_style(name, WD_STYLE_TYPE.PARAGRAPH)
    if style_id:
        style.element.set(qn("w:styleId"), style_id)
    if based_on:
        style.base_style = document.styles[based_on]
    if ppr:
        style.element.append(xml(f"<w:pPr>{ppr}</w:pPr>"))
    return style


def styled(document, text: str, style_id: str):
    append(document, xml(paragraph_xml(text, f'<w:pStyle w:val="{style_id}"/>')))


def headings(parsed: ParsedDocument) -> list[tuple[int, str, str]]:
    return [(b.level, b.section, b.text) for b in parsed.blocks if b.kind == "heading"]


def of_kind(parsed: ParsedDocument, kind: str) -> list[Block]:
    return [b for b in parsed.blocks if b.kind == kind]


def all_text(parsed: ParsedDocument) -> str:
    return "\n".join(b.text for b in parsed.blocks)


# --- the real test programme (ПМИ) ----------------------------------------------------------------


@pytest.fixture(scope="module")
def pmi() -> ParsedDocument:
    return DocxParser().parse(PMI.read_bytes(), filename=PMI.name)


def test_real_test_programme_has_the_heading_tree_of_its_styles(pmi):
    assert Counter(b.level for b in of_kind(pmi, "heading")) == {1: 9, 2: 16, 3: 10}
    sections = {title: section for _level, section, title in headings(pmi)}
    assert sections["ОБЪЕКТ ИСПЫТАНИЙ"] == "1"
    assert sections["Наименование"] == "1.1"
    assert sections["ЦЕЛЬ ИСПЫТАНИЙ"] == "2"
    assert sections["Требования к функциональным характеристикам"] == "3.1"
    assert sections["Требования к составу выполняемых функций"] == "3.1.1"
    assert sections["Изменение цветовой темы"] == "6.3.4"
    assert sections["АЛГОРИТМ ПОЛЬЗОВАНИЯ"] == "9.1"


def test_real_test_programme_numbers_agree_with_words_own_table_of_contents(pmi):
    # Word rendered the TOC (kept in a content control) from the same heading tree; every
    # numbered entry there must carry the number we computed for that heading.
    toc = [b.text for b in pmi.blocks if b.meta.get("origin") == "toc"]
    entries = [re.match(r"^(\d+(?:\.\d+)*)\. (.+) \d+$", line) for line in toc]
    numbered = {m.group(2): m.group(1) for m in entries if m}
    assert len(numbered) == 31
    computed = {title: section for _level, section, title in headings(pmi)}
    assert {title: computed[title] for title in numbered} == numbered


def test_real_test_programme_blocks_carry_their_enclosing_section(pmi):
    current: Block | None = None
    for block in pmi.blocks:
        if block.kind == "heading":
            current = block
            assert block.heading_path[-1] == block.text
            assert len(block.heading_path) == block.level
        elif current is None:
            assert (block.section, block.heading_path) == ("", [])
        else:
            assert (block.section, block.heading_path) == (current.section, current.heading_path)


def test_real_test_programme_tables_come_out_with_their_header_rows(pmi):
    tables = of_kind(pmi, "table")
    assert len(tables) == 4
    for block in tables:
        assert block.text == block.table.to_markdown()
        lines = block.text.splitlines()
        assert lines[0].startswith("| ") and set(lines[1]) <= {"|", " ", "-"}
    assert tables[0].table.header[0].startswith("СОГЛАСОВАНО")
    assert tables[0].table.header[2].startswith("УТВЕРЖДАЮ")
    # The change log marks three rows "repeat as header row"; they become one header.
    change_log = tables[3].table.header
    assert change_log[0] == "Лист регистрации изменений / Номера листов (страниц) / Изм."
    assert change_log[-2:] == ["Подп.", "Дата"]


def test_real_test_programme_metadata_title_and_language(pmi):
    assert pmi.title == "Программа и методика испытаний"  # no core title, no Title paragraph
    assert pmi.language == "russian"
    assert pmi.metadata == {
        "created": "2018-05-13T15:59:00+00:00",
        "modified": "2019-05-20T06:54:00+00:00",
        "author": "Пользователь",
        "last_modified_by": "алекс шакура",
        "revision": 16,
    }


def test_real_specification_stamp_text_boxes_are_read_once():
    parsed = DocxParser().parse(TZ.read_bytes(), filename=TZ.name)
    # Two stamps, each a group of five text boxes stored twice (drawing and its VML fallback).
    boxes = [b for b in parsed.blocks if b.meta.get("origin") == "textbox"]
    assert [b.text.splitlines() for b in boxes] == [
        ["Подп. и дата", "Инв. № дубл.", "Взам. инв. №", "Подп. и дата", "Инв. № подл"]
    ] * 2
    assert all_text(parsed).count("Инв. № подл") == 2


# --- headings -------------------------------------------------------------------------------------


def test_heading_numbers_follow_the_style_tree_not_typed_numbers():
    document = docx.Document()
    document.add_heading("5. Introduction", level=1)
    document.add_paragraph("3.2 This typed number is body text")
    document.add_heading("7.3 Scope", level=2)
    document.add_heading("Second chapter", level=1)
    document.add_heading("1.1.1 Deep without a parent", level=3)
    parsed = parse(document)
    assert headings(parsed) == [
        (1, "1", "Introduction"),
        (2, "1.1", "Scope"),
        (1, "2", "Second chapter"),
        (3, "2.1.1", "Deep without a parent"),
    ]
    typed = next(b for b in parsed.blocks if b.text.startswith("3.2"))
    assert (typed.kind, typed.section, typed.heading_path) == ("text", "1", ["Introduction"])
    assert parsed.blocks[-1].heading_path == ["Second chapter", "Deep without a parent"]


def test_outline_level_makes_a_heading_through_the_paragraph_or_its_style_chain():
    document = docx.Document()
    add_style(document, "Chapter", style_id="Chapter", ppr='<w:outlineLvl w:val="0"/>')
    add_style(document, "Chapter Red", style_id="ChapterRed", based_on="Chapter")
    add_style(
        document,
        "Contents Title",
        style_id="ContentsTitle",
        based_on="Heading 1",
        ppr='<w:outlineLvl w:val="9"/>',
    )
    styled(document, "Contents", "ContentsTitle")  # level 9 is body text, like "TOC Heading"
    styled(document, "Chapter one", "Chapter")
    append(document, xml(paragraph_xml("Direct outline two", '<w:outlineLvl w:val="1"/>')))
    styled(document, "Chapter two", "ChapterRed")
    append(
        document,
        xml(paragraph_xml("Body", '<w:pStyle w:val="Heading1"/><w:outlineLvl w:val="9"/>')),
    )
    parsed = parse(document)
    assert headings(parsed) == [
        (1, "1", "Chapter one"),
        (2, "1.1", "Direct outline two"),
        (1, "2", "Chapter two"),
    ]
    assert [b.text for b in of_kind(parsed, "text")] == ["Contents", "Body"]


def test_localised_names_and_bare_style_ids_make_headings():
    document = docx.Document()
    add_style(document, "Заголовок 1", style_id="ru1")
    add_style(document, "Заголовок 2", style_id="ru2")
    add_style(document, "Stil ohne Namen", style_id="3")  # Russian Word's id for Heading 3
    add_style(document, "heading 4 custom", style_id="Heading4x")  # neither name nor id match
    styled(document, "Раздел", "ru1")
    styled(document, "Подраздел", "ru2")
    styled(document, "Пункт", "3")
    styled(document, "Not a heading", "Heading4x")
    styled(document, "Undefined style id", "Heading2")  # style missing from styles.xml
    parsed = parse(document)
    assert headings(parsed) == [
        (1, "1", "Раздел"),
        (2, "1.1", "Подраздел"),
        (3, "1.1.1", "Пункт"),
        (2, "1.2", "Undefined style id"),
    ]


def test_title_paragraph_names_the_document_and_opens_no_section():
    document = docx.Document()
    document.core_properties.title = ""
    document.add_heading("Release notes", level=0)  # python-docx level 0 is the Title style
    document.add_heading("Changes", level=1)
    parsed = parse(document)
    assert parsed.title == "Release notes"
    assert headings(parsed) == [(1, "1", "Changes")]
    assert parsed.blocks[0].meta == {"role": "title"}

    document.core_properties.title = "Core title wins"
    assert parse(document).title == "Core title wins"


# --- content controls, text boxes, lists ----------------------------------------------------------


def test_content_control_text_is_kept_in_reading_order():
    document = docx.Document()
    document.add_heading("Before", level=1)
    append(
        document,
        xml(
            "<w:sdt><w:sdtPr><w:docPartObj><w:docPartGallery w:val='Table of Contents'/>"
            "</w:docPartObj></w:sdtPr><w:sdtContent>"
            + paragraph_xml("Contents")
            + paragraph_xml("1. Scope\t3")
            + "</w:sdtContent></w:sdt>"
        ),
    )
    append(
        document,
        xml("<w:sdt><w:sdtContent>" + paragraph_xml("Field paragraph") + "</w:sdtContent></w:sdt>"),
    )
    append(
        document,
        xml(
            "<w:p><w:r><w:t xml:space='preserve'>Customer: </w:t></w:r>"
            "<w:sdt><w:sdtContent><w:r><w:t>ACME</w:t></w:r></w:sdtContent></w:sdt></w:p>"
        ),
    )
    append(
        document,
        xml(
            "<w:sdt><w:sdtPr><w:showingPlcHdr/></w:sdtPr><w:sdtContent>"
            + paragraph_xml("Click here to enter text.")
            + "</w:sdtContent></w:sdt>"
        ),
    )
    document.add_paragraph("After")
    parsed = parse(document)
    assert [(b.text, b.meta.get("origin", "")) for b in parsed.blocks[1:]] == [
        ("Contents", "toc"),
        ("1. Scope 3", "toc"),
        ("Field paragraph", "content_control"),
        ("Customer: ACME", ""),
        ("After", ""),
    ]


def textbox_run(text: str) -> str:
    """A text box as Word 2010+ writes it: a drawing, and the same box again as VML fallback."""
    box = f"<w:txbxContent>{paragraph_xml(text)}</w:txbxContent>"
    return (
        "<w:r><mc:AlternateContent><mc:Choice Requires='wps'><w:drawing><wp:anchor>"
        "<a:graphic><a:graphicData><wps:wsp><wps:txbx>" + box + "</wps:txbx></wps:wsp>"
        "</a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice>"
        "<mc:Fallback><w:pict><v:shape><v:textbox>" + box + "</v:textbox></v:shape></w:pict>"
        "</mc:Fallback></mc:AlternateContent></w:r>"
    )


def test_text_box_text_becomes_one_block_without_duplicating_it():
    document = docx.Document()
    document.add_heading("Approval", level=1)
    append(
        document,
        xml(
            "<w:p><w:r><w:t>Signed by the board</w:t></w:r>"
            + textbox_run("APPROVED 2019")
            + "<w:r><w:pict><v:shape><v:textbox><w:txbxContent>"
            + paragraph_xml("Old VML note")
            + "</w:txbxContent></v:textbox></v:shape></w:pict></w:r></w:p>"
        ),
    )
    parsed = parse(document)
    assert [(b.kind, b.text, b.meta) for b in parsed.blocks[1:]] == [
        ("text", "Signed by the board", {}),
        ("text", "APPROVED 2019\nOld VML note", {"origin": "textbox"}),
    ]
    assert parsed.blocks[-1].section == "1"


def test_alternate_content_is_read_once_from_its_first_choice():
    document = docx.Document()
    append(
        document,
        xml(
            "<w:p><w:r><w:t xml:space='preserve'>Done: </w:t></w:r><mc:AlternateContent>"
            "<mc:Choice Requires='w14'><w:r><w:t>☒</w:t></w:r></mc:Choice>"
            "<mc:Choice Requires='w15'><w:r><w:t>[second choice]</w:t></w:r></mc:Choice>"
            "<mc:Fallback><w:r><w:t>[x]</w:t></w:r></mc:Fallback>"
            "</mc:AlternateContent></w:p>"
        ),
    )
    append(
        document,
        xml(
            "<w:p><w:r><mc:AlternateContent><mc:Fallback><w:pict><v:shape><v:textbox>"
            "<w:txbxContent>" + paragraph_xml("Fallback-only box") + "</w:txbxContent>"
            "</v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>"
        ),
    )
    assert all_text(parse(document)) == "Done: ☒\nFallback-only box"


def test_text_box_alone_in_a_document_is_its_text():
    document = docx.Document()
    append(document, xml("<w:p>" + textbox_run("Only a stamp") + "</w:p>"))
    assert all_text(parse(document)) == "Only a stamp"


def test_numbered_paragraphs_become_one_nested_markdown_list():
    document = docx.Document()
    document.add_paragraph("Requirements:")
    document.add_paragraph("first", style="List Bullet")
    document.add_paragraph("nested by style", style="List Bullet 2")
    document.add_paragraph("")  # spacing between items does not end the list
    numbered = '<w:numPr><w:ilvl w:val="1"/><w:numId w:val="3"/></w:numPr>'
    append(document, xml(paragraph_xml("nested by ilvl", numbered)))
    document.add_paragraph("second", style="List Number")
    off = '<w:pStyle w:val="ListBullet"/><w:numPr><w:numId w:val="0"/></w:numPr>'
    append(document, xml(paragraph_xml("numbering switched off", off)))
    document.add_paragraph("List Paragraph without numbering", style="List Paragraph")
    document.add_paragraph("- typed dash stays text")
    parsed = parse(document)
    assert [(b.kind, b.text) for b in parsed.blocks] == [
        ("text", "Requirements:"),
        ("list", "- first\n  - nested by style\n  - nested by ilvl\n- second"),
        ("text", "numbering switched off"),
        ("text", "List Paragraph without numbering"),
        ("text", "- typed dash stays text"),
    ]


# --- tables ---------------------------------------------------------------------------------------


def fill(table, rows: list[list[str]]) -> None:
    for r, values in enumerate(rows):
        for c, value in enumerate(values):
            if value:
                table.cell(r, c).text = value


def test_merged_cells_repeat_down_and_stay_blank_across():
    document = docx.Document()
    table = document.add_table(rows=4, cols=3)
    fill(table, [["Group", "Item", "Price"], [], [], ["", "", "9"]])
    table.cell(1, 0).merge(table.cell(1, 1)).text = "Spanning two columns"
    table.cell(1, 2).text = "5"
    table.cell(2, 0).merge(table.cell(3, 0)).text = "Fruit"
    table.cell(2, 1).text = "Apple"
    table.cell(3, 1).text = "Pear"
    table.cell(2, 2).text = "7"
    parsed = parse(document)
    (block,) = of_kind(parsed, "table")
    assert block.table.header == ["Group", "Item", "Price"]
    assert block.table.rows == [
        ["Spanning two columns", "", "5"],
        ["Fruit", "Apple", "7"],
        ["Fruit", "Pear", "9"],
    ]
    assert block.text == block.table.to_markdown()


def test_nested_table_is_flattened_into_its_cell():
    document = docx.Document()
    table = document.add_table(rows=2, cols=2)
    fill(table, [["Name", "Contacts"], ["Ann"]])
    cell = table.cell(1, 1)
    cell.text = "Reach her at:"
    inner = cell.add_table(rows=2, cols=2)
    fill(inner, [["phone", "123"], ["mail", "ann@example.com"]])
    (block,) = of_kind(parse(document), "table")
    assert block.table.rows == [["Ann", "Reach her at:\nphone | 123\nmail | ann@example.com"]]
    assert "Reach her at:<br>phone \\| 123<br>mail \\| ann@example.com" in block.text


def test_rows_marked_as_header_rows_make_the_header():
    document = docx.Document()
    table = document.add_table(rows=3, cols=2)
    fill(table, [["Pages", ""], ["changed", "new"], ["3", "4"]])
    table.cell(0, 0).merge(table.cell(0, 1))
    for row in table.rows[:2]:
        row._tr.get_or_add_trPr().append(OxmlElement("w:tblHeader"))
    (block,) = of_kind(parse(document), "table")
    assert block.table.header == ["Pages / changed", "new"]
    assert block.table.rows == [["3", "4"]]


def test_table_without_text_is_dropped():
    document = docx.Document()
    document.add_paragraph("Text")
    document.add_table(rows=3, cols=3)
    assert [b.kind for b in parse(document).blocks] == ["text"]


# --- test cases -----------------------------------------------------------------------------------


def test_table_of_steps_and_expected_results_is_a_test_case_of_its_heading():
    document = docx.Document()
    document.add_heading("Функции", level=1)
    document.add_heading("Авторизация", level=2)
    table = document.add_table(rows=2, cols=3)
    fill(table, [["Шаг", "Действие", "Ожидаемый результат"], ["1", "Ввести пароль", "Вход"]])
    document.add_paragraph("Таблица 2 – Тест-кейс 3: Поиск мероприятий")
    table = document.add_table(rows=2, cols=2)
    fill(table, [["№", "Описание"], ["1", "Найти по тегу"]])
    document.add_paragraph("Обычная таблица")
    table = document.add_table(rows=2, cols=2)
    fill(table, [["Параметр", "Значение"], ["ОЗУ", "1 Гб"]])
    parsed = parse(document)
    cases = of_kind(parsed, "test_case")
    assert [c.meta for c in cases] == [
        {"function": "Авторизация", "parent_section": "1.1"},
        {"function": "Поиск мероприятий", "parent_section": "1.1"},
    ]
    assert cases[0].table.header == ["Шаг", "Действие", "Ожидаемый результат"]
    assert cases[0].text == cases[0].table.to_markdown()
    assert [b.table.header for b in of_kind(parsed, "table")] == [["Параметр", "Значение"]]


def test_section_headed_as_test_case_becomes_one_test_case_block():
    document = docx.Document()
    document.add_heading("Модуль оплаты", level=1)
    document.add_heading("Тест-кейсы", level=2)  # a container of test cases, not one
    document.add_heading("Тест-кейс 1: Оплата картой", level=3)
    document.add_paragraph("Предусловие: карта привязана.")
    document.add_paragraph("Открыть корзину", style="List Number")
    document.add_paragraph("Ожидаемый результат: заказ оплачен.")
    document.add_heading("Test case 2", level=3)
    document.add_paragraph("Pay with an expired card; payment is refused.")
    document.add_heading("Итоги", level=1)
    document.add_paragraph("Все тесты пройдены.")
    parsed = parse(document)
    assert [(b.kind, b.section) for b in parsed.blocks] == [
        ("heading", "1"),
        ("heading", "1.1"),
        ("heading", "1.1.1"),
        ("test_case", "1.1.1"),
        ("heading", "1.1.2"),
        ("test_case", "1.1.2"),
        ("heading", "2"),
        ("text", "2"),
    ]
    first, second = of_kind(parsed, "test_case")
    assert first.text == (
        "Предусловие: карта привязана.\n\n- Открыть корзину\n\nОжидаемый результат: заказ оплачен."
    )
    assert first.meta == {"function": "Оплата картой", "parent_section": "1.1"}
    assert first.heading_path == ["Модуль оплаты", "Тест-кейсы", "Тест-кейс 1: Оплата картой"]
    # "Test case 2" names no function: the nearest heading that is not a test-case label does.
    assert second.meta == {"function": "Модуль оплаты", "parent_section": "1.1"}


# --- metadata -------------------------------------------------------------------------------------


def test_core_properties_become_metadata_and_language_follows_the_text():
    document = docx.Document()
    props = document.core_properties
    props.author, props.last_modified_by, props.revision = "Ann", "Bob", 7
    document.add_paragraph("The quick brown fox jumps over the lazy dog.")
    parsed = parse(document)
    assert parsed.language == "english"
    assert parsed.title == "built"  # neither a core title nor a Title paragraph
    assert parsed.metadata["author"] == "Ann"
    assert parsed.metadata["last_modified_by"] == "Bob"
    assert parsed.metadata["revision"] == 7
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", parsed.metadata["created"])


def test_package_without_core_properties_gets_no_invented_metadata():
    document = docx.Document()
    document.add_paragraph("Текст без свойств документа.")
    buffer = io.BytesIO()
    document.save(buffer)
    data = rewrite_zip(
        buffer.getvalue(),
        drop={"docProps/core.xml"},
        edit={"_rels/.rels": lambda t: re.sub(r"<Relationship [^>]*core-properties[^>]*/>", "", t)},
    )
    parsed = DocxParser().parse(data, filename="Без свойств.docx")
    assert (parsed.metadata, parsed.title, parsed.language) == ({}, "Без свойств", "russian")


def test_damaged_core_property_is_left_out_not_fatal():
    document = docx.Document()
    document.add_paragraph("Text")
    buffer = io.BytesIO()
    document.save(buffer)
    empty_date = re.compile(r"(<dcterms:created[^>]*>)[^<]*")
    data = rewrite_zip(
        buffer.getvalue(), edit={"docProps/core.xml": lambda t: empty_date.sub(r"\1", t)}
    )
    metadata = DocxParser().parse(data, filename="x.docx").metadata
    assert "created" not in metadata and "modified" in metadata


# --- bad input ------------------------------------------------------------------------------------


def rewrite_zip(data: bytes, drop: set[str] = frozenset(), edit: dict | None = None) -> bytes:
    """The same zip with some members dropped and some members' text edited."""
    edit = edit or {}
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for name in source.namelist():
            if name in drop:
                continue
            content = source.read(name)
            if name in edit:
                content = edit[name](content.decode()).encode()
            target.writestr(name, content)
    return out.getvalue()


def zip_of(files: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return out.getvalue()


def minimal_docx_bytes() -> bytes:
    document = docx.Document()
    document.add_paragraph("Some text")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


BAD_INPUTS = {
    "truncated": (lambda: PMI.read_bytes()[:200_000], "not a valid Word document"),
    "not a zip": (lambda: b"%PDF-1.7 this is no Word document", "not a valid Word document"),
    "empty file": (lambda: b"", "not a valid Word document"),
    "zip of text": (lambda: zip_of({"notes.txt": "hello"}), "not a Word document"),
    "spreadsheet": (
        lambda: zip_of({"[Content_Types].xml": "<Types/>", "xl/workbook.xml": "<workbook/>"}),
        "not a Word document",
    ),
    "broken xml": (
        lambda: rewrite_zip(
            minimal_docx_bytes(), edit={"word/document.xml": lambda t: t[: len(t) // 2]}
        ),
        "not a valid Word document",
    ),
    "document part missing": (
        lambda: rewrite_zip(minimal_docx_bytes(), drop={"word/document.xml"}),
        "not a valid Word document",
    ),
    # An encrypted .docx is an OLE compound file with an "EncryptedPackage" stream; the parser
    # recognises it by the OLE signature and that stream name, which is all this stands for.
    "password-protected": (
        lambda: (
            b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
            + bytes(504)
            + "EncryptedPackage".encode("utf-16-le")
        ),
        "password-protected",
    ),
    "word 97 .doc": (
        lambda: (
            b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504) + "WordDocument".encode("utf-16-le")
        ),
        r"old-format Word document \(\.doc\)",
    ),
}


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_unreadable_file_raises_parse_error_in_plain_words(case):
    make, message = BAD_INPUTS[case]
    with pytest.raises(ParseError, match=message) as raised:
        DocxParser().parse(make(), filename="bad.docx")
    assert type(raised.value) is ParseError


def test_a_package_unpacking_past_the_total_budget_is_refused_and_pictures_do_not_count(settings):
    # The budget is lowered rather than a 128 MB document built: what is tested is that the
    # parts are counted as they are read, and that pictures are never unpacked.
    settings.ZIP_TOTAL_MB = 2
    buffer = io.BytesIO(minimal_docx_bytes())
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.writestr("word/media/zeros.bin", bytes(3 * 2**20), zipfile.ZIP_DEFLATED)
    assert DocxParser().parse(buffer.getvalue(), filename="picture.docx")
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.writestr("word/extra.xml", bytes(3 * 2**20), zipfile.ZIP_DEFLATED)
    with pytest.raises(ParseError, match=r"unpacks to more than 2 MB; it was not read further"):
        DocxParser().parse(buffer.getvalue(), filename="bomb.docx")


def test_document_without_text_raises_parse_error():
    document = docx.Document()
    document.add_paragraph("   ")
    document.add_paragraph("")
    document.add_table(rows=2, cols=2)
    with pytest.raises(ParseError, match="^The document contains no text$"):
        parse(document)
