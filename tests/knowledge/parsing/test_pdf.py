"""PdfParser on real SEC 10-Q filings and on small PDFs built here with PyMuPDF.

Two filings are parsed once per module: Apple's Q3 2022 10-Q (EDGAR-converted, ruled tables,
no outline) with table detection, and Intel's Q1 2023 10-Q (Workiva, with an outline) without
it, since only its headings are under test. Damaged, encrypted, scanned and empty files are
built at run time, so each test shows exactly what it feeds the parser.
"""

from __future__ import annotations

import re

import pymupdf
import pytest

from knowledge.parsing.base import Block, ParsedDocument, ParseError
from knowledge.parsing.pdf import (
    ENCRYPTED,
    NO_PAGES,
    NO_TEXT_LAYER,
    NOT_VALID,
    PdfParser,
)
from tests.conftest import CORPUS

FILINGS = CORPUS / "sec10q_en" / "data" / "v1" / "docs"


@pytest.fixture(scope="module")
def apple() -> ParsedDocument:
    path = FILINGS / "2022 Q3 AAPL.pdf"
    return PdfParser().parse(path.read_bytes(), filename=path.name)


@pytest.fixture(scope="module")
def intel() -> ParsedDocument:
    path = FILINGS / "2023 Q1 INTC.pdf"
    return PdfParser(tables="").parse(path.read_bytes(), filename=path.name)


def table_with(doc: ParsedDocument, label: str) -> Block:
    return next(
        b for b in doc.blocks if b.kind == "table" and any(r[0] == label for r in b.table.rows)
    )


def blocks_containing(doc: ParsedDocument, phrase: str, kind: str = "text") -> list[Block]:
    return [b for b in doc.blocks if b.kind == kind and phrase in b.text]


# --- builders -------------------------------------------------------------------------------------


def pdf_bytes(build, pages: int = 1, **save) -> bytes:
    """A PDF of ``pages`` pages, each passed to ``build(page, number)``."""
    doc = pymupdf.open()
    for number in range(1, pages + 1):
        build(doc.new_page(), number)
    return doc.tobytes(**save)


def write_right(page: pymupdf.Page, right: float, y: float, text: str, size: float = 10) -> None:
    """Text right-aligned at ``right``, as statements print their numbers."""
    page.insert_text((right - pymupdf.get_text_length(text, fontsize=size), y), text, fontsize=size)


def ruled_table(page: pymupdf.Page, rows: list[list[str]], x: list[float], top: float) -> None:
    """A fully ruled grid: column edges ``x``, 20 pt rows, first column left, others right."""
    bottom = top + 20 * len(rows)
    for edge in x:
        page.draw_line((edge, top), (edge, bottom))
    for i in range(len(rows) + 1):
        page.draw_line((x[0], top + 20 * i), (x[-1], top + 20 * i))
    for i, row in enumerate(rows):
        y = top + 20 * i + 14
        page.insert_text((x[0] + 3, y), row[0], fontsize=10)
        for j, cell in enumerate(row[1:], start=1):
            write_right(page, x[j + 1] - 3, y, cell)


# --- real filings ---------------------------------------------------------------------------------


def test_every_block_of_a_real_filing_carries_its_page(apple: ParsedDocument) -> None:
    assert len(apple.blocks) > 300
    assert all(b.page is not None and 1 <= b.page <= 28 for b in apple.blocks)
    assert {b.page for b in apple.blocks} == set(range(1, 29))


def test_income_statement_is_a_markdown_table_with_its_column_headers(apple: ParsedDocument):
    block = table_with(apple, "Total net sales")
    assert block.page == 4
    assert block.table.header == [
        "",
        "Three Months Ended June 25, 2022",
        "Three Months Ended June 26, 2021",
        "Nine Months Ended June 25, 2022",
        "Nine Months Ended June 26, 2021",
    ]
    assert ["Total net sales", "82,959", "81,434", "304,182", "282,457"] in block.table.rows
    assert ["Products", "$63,355", "$63,948", "$245,241", "$232,309"] in block.table.rows
    assert block.text == block.table.to_markdown()
    assert block.text.splitlines()[1].startswith("| --- |")


def test_balance_sheet_header_names_both_dates(apple: ParsedDocument) -> None:
    block = table_with(apple, "Total assets")
    assert block.page == 6
    assert block.table.header == ["", "June 25, 2022", "September 25, 2021"]
    assert ["Total assets", "$336,309", "$351,002"] in block.table.rows


def test_most_tables_of_a_filing_have_a_header_row(apple: ParsedDocument) -> None:
    tables = [b for b in apple.blocks if b.kind == "table"]
    assert len(tables) >= 25
    assert sum(1 for b in tables if any(b.table.header)) >= 0.8 * len(tables)


def test_text_inside_a_table_is_not_repeated_as_paragraphs(apple: ParsedDocument) -> None:
    assert not blocks_containing(apple, "82,959")
    assert not blocks_containing(apple, "Three Months Ended")


def test_known_phrases_are_on_their_pages(apple: ParsedDocument) -> None:
    (heading,) = blocks_containing(apple, "Business Seasonality", kind="heading")
    assert heading.page == 17
    (paragraph,) = blocks_containing(apple, "The Company repurchased $21.7 billion")
    assert paragraph.page == 17
    assert paragraph.heading_path == ["Quarterly Highlights"]


def test_lines_of_a_paragraph_are_one_block(apple: ParsedDocument) -> None:
    (paragraph,) = blocks_containing(apple, "include the accounts of Apple Inc. and its")
    # The paragraph's first and last of eight lines, joined with a space where the lines broke.
    assert paragraph.text.startswith("The condensed consolidated financial statements include")
    assert "and its wholly owned subsidiaries" in paragraph.text
    assert (
        "Annual Report on Form 10-K for the fiscal year ended September 25, 2021" in paragraph.text
    )
    assert "\n" not in paragraph.text


def test_running_footer_is_dropped(apple: ParsedDocument) -> None:
    footer = re.compile(r"Apple Inc\. \| Q3 2022 Form 10-Q \| \d+")
    assert not [b for b in apple.blocks if footer.search(b.text)]


def test_filing_without_outline_gets_bold_headings(apple: ParsedDocument) -> None:
    titles = [b.text for b in apple.blocks if b.kind == "heading"]
    assert "Note 2 – Revenue" in titles
    assert "Item 4. Controls and Procedures" in titles
    # Bold table labels ("Net sales:") stay inside their tables.
    assert not [t for t in titles if t.endswith(":")]


def test_title_and_metadata_of_a_filing(apple: ParsedDocument) -> None:
    # The metadata title is the EDGAR accession number: the cover's largest heading is used.
    assert apple.title == "Apple Inc."
    assert apple.language == "english"
    assert apple.metadata["pages"] == 28
    assert apple.metadata["created"] == "2022-07-29T06:03:21-04:00"
    assert apple.metadata["modified"] == "2022-07-29T06:03:28-04:00"
    assert apple.metadata["author"].startswith("EDGAR Online")


def test_outline_entries_become_numbered_headings_on_their_pages(intel: ParsedDocument) -> None:
    headings = [b for b in intel.blocks if b.kind == "heading"]
    assert len(headings) == 55
    income = next(b for b in headings if b.text == "Statement of Income")
    assert (income.page, income.level, income.section) == (6, 2, "5.1")
    assert income.heading_path == ["Financial Statements", "Statement of Income"]
    basis = next(b for b in headings if b.text == "Basis of Presentation")
    assert (basis.page, basis.level) == (11, 3)
    after = intel.blocks[intel.blocks.index(basis) + 1]
    assert after.heading_path[-1] == "Basis of Presentation"
    assert intel.title == "04.01.2023 10Q Document"


# --- built documents ------------------------------------------------------------------------------


def test_ruled_table_gets_its_header_and_rows() -> None:
    rows = [["Item", "2023", "2022"], ["Revenue", "1,200", "1,100"], ["Cost", "(800)", "700"]]
    rows += [["Tax", "50", "45"], ["Total", "350", "355"]]

    def build(page: pymupdf.Page, number: int) -> None:
        page.insert_text((72, 60), "Results of the year in brief.", fontsize=10)
        ruled_table(page, rows, [72, 250, 350, 450], top=80)

    doc = PdfParser(tables="lines").parse(pdf_bytes(build), filename="t.pdf")
    (table,) = [b for b in doc.blocks if b.kind == "table"]
    assert table.table.header == ["Item", "2023", "2022"]
    assert table.table.rows == rows[1:]
    assert [b.text for b in doc.blocks if b.kind == "text"] == ["Results of the year in brief."]


def test_one_column_grid_stays_text() -> None:
    def build(page: pymupdf.Page, number: int) -> None:
        ruled_table(page, [["Amounts"], ["1,200"], ["1,100"], ["900"], ["800"]], [72, 72, 300], 80)

    doc = PdfParser(tables="lines").parse(pdf_bytes(build), filename="t.pdf")
    assert not [b for b in doc.blocks if b.kind == "table"]
    assert "1,100" in " ".join(b.text for b in doc.blocks)


def test_hyphenated_line_ends_are_joined() -> None:
    def build(page: pymupdf.Page, number: int) -> None:
        page.insert_text((72, 72), "The report gives infor-\nmation on the risks.")

    doc = PdfParser().parse(pdf_bytes(build), filename="t.pdf")
    assert [b.text for b in doc.blocks] == ["The report gives information on the risks."]


def test_bullet_lines_become_one_markdown_list() -> None:
    def build(page: pymupdf.Page, number: int) -> None:
        page.insert_text((72, 72), "Highlights of the quarter:")
        page.insert_text((72, 100), "• Revenue grew by a tenth\n• Costs fell\n• Cash held steady")

    doc = PdfParser().parse(pdf_bytes(build), filename="t.pdf")
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("text", "Highlights of the quarter:"),
        ("list", "- Revenue grew by a tenth\n- Costs fell\n- Cash held steady"),
    ]


def test_running_header_and_page_numbers_repeat_and_are_dropped() -> None:
    def build(page: pymupdf.Page, number: int) -> None:
        page.insert_text((72, 40), "ACME Corp | Quarterly report", fontsize=8)
        page.insert_text((72, 300), f"Body text of page {number}.", fontsize=10)
        page.insert_text((300, 800), str(number), fontsize=8)

    doc = PdfParser().parse(pdf_bytes(build, pages=4), filename="t.pdf")
    assert [(b.page, b.text) for b in doc.blocks] == [
        (n, f"Body text of page {n}.") for n in range(1, 5)
    ]


def test_larger_type_makes_headings_when_there_is_no_outline() -> None:
    def build(page: pymupdf.Page, number: int) -> None:
        page.insert_text((72, 72), f"Chapter {number}", fontsize=18)
        page.insert_text(
            (72, 110), "Plain body text set in the body size of the document.", fontsize=10
        )

    doc = PdfParser().parse(pdf_bytes(build, pages=2), filename="manual.pdf")
    assert [(b.kind, b.text, b.section) for b in doc.blocks] == [
        ("heading", "Chapter 1", "1"),
        ("text", "Plain body text set in the body size of the document.", "1"),
        ("heading", "Chapter 2", "2"),
        ("text", "Plain body text set in the body size of the document.", "2"),
    ]
    assert doc.title == "Chapter 1"


def test_outline_entry_without_matching_text_still_opens_a_section() -> None:
    def build(page: pymupdf.Page, number: int) -> None:
        page.insert_text((72, 72), f"Text of page {number}.")

    raw = pymupdf.open(stream=pdf_bytes(build, pages=2), filetype="pdf")
    raw.set_toc([[1, "Introduction", 1], [1, "Appendix", 2]])
    doc = PdfParser().parse(raw.tobytes(), filename="t.pdf")
    assert [(b.kind, b.text, b.page, b.heading_path) for b in doc.blocks] == [
        ("heading", "Introduction", 1, ["Introduction"]),
        ("text", "Text of page 1.", 1, ["Introduction"]),
        ("heading", "Appendix", 2, ["Appendix"]),
        ("text", "Text of page 2.", 2, ["Appendix"]),
    ]


def test_owner_password_alone_does_not_stop_reading() -> None:
    # EDGAR filings are encrypted like this: no password is needed to open them.
    data = pdf_bytes(
        lambda page, n: page.insert_text((72, 72), "Readable."),
        encryption=pymupdf.PDF_ENCRYPT_AES_256,
        owner_pw="owner",
        permissions=pymupdf.PDF_PERM_PRINT,
    )
    assert [b.text for b in PdfParser().parse(data, filename="t.pdf").blocks] == ["Readable."]


# --- bad input ------------------------------------------------------------------------------------


def parse_error(data: bytes) -> str:
    with pytest.raises(ParseError) as caught:
        PdfParser().parse(data, filename="bad.pdf")
    return str(caught.value)


def some_text(page: pymupdf.Page, number: int) -> None:
    page.insert_text((72, 72), f"Page {number} says something worth indexing. " * 3)


def test_not_a_pdf_is_refused_in_plain_words() -> None:
    assert parse_error(b"PK\x03\x04 this is a zip, not a PDF") == NOT_VALID
    assert parse_error(b"") == NOT_VALID
    assert parse_error(b"%PDF-1.7\n" + b"\x00" * 200) == NOT_VALID


def test_truncated_pdf_is_refused() -> None:
    data = pdf_bytes(some_text, pages=6)
    assert parse_error(data[: len(data) // 2]) == NOT_VALID
    assert parse_error(data[: len(data) // 5]) == NOT_VALID


def test_password_protected_pdf_is_refused() -> None:
    data = pdf_bytes(
        some_text, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner"
    )
    assert parse_error(data) == ENCRYPTED


def test_scan_without_text_layer_is_refused() -> None:
    def scanned(page: pymupdf.Page, number: int) -> None:
        pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 60, 80), False)
        pixmap.clear_with(200)
        page.insert_image(page.rect, pixmap=pixmap)

    assert parse_error(pdf_bytes(scanned, pages=2)) == NO_TEXT_LAYER


def test_scanned_pages_among_text_pages_are_reported() -> None:
    def mixed(page: pymupdf.Page, number: int) -> None:
        if number == 2:
            page.draw_rect(pymupdf.Rect(50, 50, 300, 300), fill=(0.5, 0.5, 0.5))
        else:
            some_text(page, number)

    doc = PdfParser().parse(pdf_bytes(mixed, pages=3), filename="t.pdf")
    assert {b.page for b in doc.blocks} == {1, 3}
    assert doc.warnings == ["Pages without text (scans or blank pages): 2"]


def test_pdf_without_pages_is_refused() -> None:
    empty = (
        b"%PDF-1.4\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n"
        b"2 0 obj <</Type /Pages /Kids [] /Count 0>> endobj\n"
        b"trailer <</Root 1 0 R>>\n%%EOF\n"
    )
    assert parse_error(empty) == NO_PAGES
