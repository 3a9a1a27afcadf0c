"""The chunker: structure kept, tables never cut mid-row, sizes and overlap as configured."""

from __future__ import annotations

from knowledge.chunking import Chunker, ChunkingConfig, count_tokens
from knowledge.parsing.base import ParsedDocument, Table
from tests.knowledge.versions.helpers import doc


def _doc(*items: tuple) -> ParsedDocument:
    """Build a document from ("h", level, title) and (kind, text|table) items."""
    return doc(*items)


def _sentences(n: int, word: str = "слово") -> str:
    return " ".join(
        f"Предложение {i} содержит {word} и ещё несколько слов для длины." for i in range(n)
    )


def test_long_table_is_split_by_rows_with_the_header_repeated_and_no_row_cut():
    rows = [[f"R{i}", f"шаг {i} " * 8, f"ожидаемый результат {i} " * 6] for i in range(120)]
    table = Table(["ID", "Шаги", "Ожидаемый результат"], rows)
    chunks = Chunker(ChunkingConfig(max_tokens=300)).chunk(
        _doc(("h", 1, "Тесты"), ("table", table))
    )
    chunks = [c for c in chunks if c.block_type != "row"]  # row units: see the next test
    assert len(chunks) > 3
    seen: list[str] = []
    for chunk in chunks:
        lines = chunk.text.splitlines()
        assert lines[0] == "| ID | Шаги | Ожидаемый результат |"
        assert lines[1].startswith("| --- |")
        for line in lines[2:]:
            assert line.startswith("| R") and line.endswith(" |")  # a whole row, never half
            seen.append(line.split(" | ")[0][2:])
        assert chunk.block_type == "table"
        assert chunk.token_count <= 300
    assert seen == [f"R{i}" for i in range(120)]  # every row exactly once, in order


def test_long_tables_get_row_units_with_caption_header_and_their_piece():
    rows = [[f"R{i}", f"значение {i}"] for i in range(5)]
    table = Table(["Поле", "Значение"], rows)
    document = _doc(("h", 1, "Поля"), ("text", "Таблица 2 – Поля класса"), ("table", table))
    chunks = Chunker(ChunkingConfig(rows_per_unit=2)).chunk(document)
    pieces = [c for c in chunks if c.block_type == "table"]
    units = [c for c in chunks if c.block_type == "row"]
    assert len(pieces) == 1 and len(units) == 3  # rows 1-2, 3-4, 5
    parent = chunks.index(pieces[0])
    for unit in units:
        lines = unit.text.splitlines()
        assert lines[0] == "Таблица 2 – Поля класса"
        assert lines[2] == "| Поле | Значение |"
        assert unit.meta["parent_position"] == parent
        assert unit.heading_path == pieces[0].heading_path
    assert units[2].text.endswith("| R4 | значение 4 |")
    assert units[2].meta["table_rows"] == [5, 5]
    # A short table is focused enough: no units.
    short = Table(["A", "B"], [["1", "2"], ["3", "4"]])
    assert not [c for c in Chunker().chunk(_doc(("table", short))) if c.block_type == "row"]


def test_table_smaller_than_the_limit_stays_whole_with_its_caption():
    table = Table(["A", "B"], [["1", "2"], ["3", "4"]])
    doc = _doc(("h", 1, "Раздел"), ("text", "Таблица 1 – Значения параметров"), ("table", table))
    chunks = Chunker().chunk(doc)
    table_chunks = [c for c in chunks if c.block_type == "table"]
    assert len(table_chunks) == 1
    assert table_chunks[0].text.startswith("Таблица 1 – Значения параметров\n\n| A | B |")


def test_tiny_sections_merge_under_the_same_parent_only():
    doc = _doc(
        ("h", 1, "Общие сведения"),
        ("h", 2, "Наименование"),
        ("text", "Мобильное приложение."),
        ("h", 2, "Назначение"),
        ("text", "Для студентов."),
        ("h", 1, "Требования"),
        ("text", _sentences(3)),
    )
    chunks = Chunker(ChunkingConfig(max_tokens=400, min_tokens=50)).chunk(doc)
    first = chunks[0]
    assert "Мобильное приложение." in first.text and "Для студентов." in first.text
    assert first.sections == ["1.1", "1.2"]
    assert first.heading_path == ["Общие сведения", "Наименование"]
    # The next top-level section has another parent: never merged into the same chunk.
    assert all("Требования" not in c.heading_path or "Для студентов." not in c.text for c in chunks)
    assert chunks[-1].section == "2"


def test_long_section_is_packed_under_the_limit_with_overlap_between_its_chunks():
    paragraphs = [("text", _sentences(6, word=f"тема{i}")) for i in range(12)]
    config = ChunkingConfig(max_tokens=250, overlap=0.12)
    chunks = Chunker(config).chunk(_doc(("h", 1, "Длинный раздел"), *paragraphs))
    assert len(chunks) >= 4
    for chunk in chunks:
        assert chunk.token_count <= 250 + int(250 * 0.12) + 5
        assert chunk.heading_path == ["Длинный раздел"] and chunk.section == "1"
    for before, after in zip(chunks, chunks[1:], strict=False):
        last_sentence = before.text.rsplit(". ", 1)[-1].strip()
        assert last_sentence[:30] in after.text  # the tail is carried over
    overlap_tokens = count_tokens(chunks[1].text.split("\n\n")[0])
    assert 0 < overlap_tokens <= 250 * 0.15


def test_every_chunk_knows_its_heading_path_and_no_chunk_is_empty():
    doc = _doc(
        ("text", "Вступление до первого заголовка."),
        ("h", 1, "A"),
        ("text", _sentences(2)),
        ("h", 2, "B"),
        ("list", "- один\n- два"),
        ("h", 3, "C"),
        ("code", "```python\nprint(1)\n```"),
    )
    chunks = Chunker(ChunkingConfig(min_tokens=0)).chunk(doc)
    assert [c.section for c in chunks] == ["", "1", "1.1", "1.1.1"]
    assert [c.block_type for c in chunks] == ["text", "text", "list", "code"]
    assert chunks[3].heading_path == ["A", "B", "C"]
    assert all(c.text.strip() for c in chunks)


def test_a_single_enormous_row_is_kept_whole_rather_than_cut():
    table = Table(["Колонка"], [["очень " * 500], ["коротко"]])
    chunks = Chunker(ChunkingConfig(max_tokens=100)).chunk(_doc(("h", 1, "T"), ("table", table)))
    assert any("очень очень" in c.text and c.text.count("\n") == 2 for c in chunks)
    assert any(c.text.endswith("| коротко |") for c in chunks)


def test_a_document_of_headings_only_becomes_one_chunk_of_its_titles():
    chunks = Chunker().chunk(_doc(("h", 1, "Мобильное тестирование"), ("h", 2, "Android")))
    assert len(chunks) == 1
    assert chunks[0].text == "# Мобильное тестирование\n## Android"
    assert chunks[0].sections == ["1", "1.1"] and chunks[0].meta == {"headings_only": True}


def _workbook_chunks(data: bytes, config: ChunkingConfig | None = None) -> list:
    from knowledge.parsing.registry import parse_document

    return Chunker(config).chunk(parse_document(data, "checks.xlsx"))


def test_every_checklist_row_is_an_item_with_its_own_spreadsheet_row():
    from tests.knowledge.checklists import CHECKOUT, REGISTRATION, checklist_workbook

    chunks = _workbook_chunks(checklist_workbook())
    items = [c for c in chunks if c.block_type == "row"]
    assert len(items) == sum(len(rows) for _, rows in REGISTRATION + CHECKOUT)
    password = next(c for c in items if "Пароль короче 8 символов" in c.text)
    assert (password.sheet, password.row_start, password.row_end) == ("Регистрация", 9, 9)
    lines = password.text.splitlines()
    # The item read alone: its sheet and section, the header row, its own row only.
    assert lines[0] == "Регистрация › Пароль"
    assert lines[2].startswith("| № | Раздел | Проверка | Ожидаемый результат |")
    assert len(lines) == 5 and lines[4].startswith("| 5 | Пароль | Пароль короче 8 символов |")
    assert password.meta["checklist"] is True
    parent = chunks[password.meta["parent_position"]]
    assert parent.block_type == "test_case" and (parent.row_start, parent.row_end) == (9, 12)
    # Row units stay off for ordinary tables but a checklist's items do not need them.
    off = _workbook_chunks(checklist_workbook(), ChunkingConfig(row_unit_min_rows=0))
    assert len([c for c in off if c.block_type == "row"]) == len(items)


def test_row_units_of_a_spreadsheet_table_cite_their_own_rows():
    import io

    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Серверы"
    sheet.append(["Хост", "Порт"])
    for i in range(5):
        sheet.append([f"db{i}", 5432 + i])
    buffer = io.BytesIO()
    workbook.save(buffer)
    chunks = _workbook_chunks(buffer.getvalue(), ChunkingConfig(rows_per_unit=2))
    units = [c for c in chunks if c.block_type == "row"]
    assert [(u.row_start, u.row_end) for u in units] == [(2, 3), (4, 5), (6, 6)]
    assert "checklist" not in units[0].meta


def test_a_row_units_vector_is_computed_over_its_rows_read_as_sentences():
    from knowledge.chunking import row_sentences
    from knowledge.ingest.pipeline import embedding_text

    header = ["", "Three Months Ended July 1, 2023", "Three Months Ended June 25, 2022"]
    rows = [["iPhone", "$39,669", "$40,665"], ["Mac", "6,840", ""], ["iPad", "5,791", "7,224"]]
    table = Table(header, rows + [["Services", "21,213", "19,604"]])
    caption = "Net sales by category (in millions):"
    assert row_sentences(table, 0, 2, caption) == (
        "Net sales by category (in millions):\n"
        "iPhone: Three Months Ended July 1, 2023 $39,669; Three Months Ended June 25, 2022 $40,665\n"
        "Mac: Three Months Ended July 1, 2023 6,840"
    )
    document = _doc(("h", 1, "Products"), ("text", caption), ("table", table))
    config = ChunkingConfig(rows_per_unit=2, row_sentences=True)
    units = [c for c in Chunker(config).chunk(document) if c.block_type == "row"]
    assert units[0].text.splitlines()[2].startswith("|  | Three Months Ended")  # searched as is
    embedded = embedding_text("Apple Inc.", units[0])
    assert embedded.startswith("Apple Inc. › Products\n\nNet sales by category")
    assert "iPhone: Three Months Ended July 1, 2023 $39,669;" in embedded
    assert "|" not in embedded  # not the Markdown grid
    # Off for tables of figures too: the unit's vector is computed over its Markdown.
    config = ChunkingConfig(rows_per_unit=2, figure_sentences=False)
    plain = [c for c in Chunker(config).chunk(document) if c.block_type == "row"]
    assert "| iPhone | $39,669 | $40,665 |" in embedding_text("Apple Inc.", plain[0])


def test_row_units_of_a_table_of_figures_are_embedded_as_sentences_by_default():
    from knowledge.ingest.pipeline import embedding_text

    header = ["", "June 30, 2023", "December 31, 2022"]
    rows = [["Inventories", "2,500", "3,742"], ["Total current assets", "$ 184,257", "—"]]
    figures = Table(header, rows + [["Goodwill", "(1,234)", "67,886"], ["Other", "12 %", "n/a"]])
    words = Table(
        ["Термин", "Определение", "Пример"],
        [[f"Термин {i}", f"что он значит {i}", f"пример {i}"] for i in range(4)],
    )
    document = _doc(
        ("h", 1, "Balance sheets"), ("table", figures), ("h", 1, "Глоссарий"), ("table", words)
    )
    units = [c for c in Chunker().chunk(document) if c.block_type == "row"]
    of_figures = [u for u in units if u.heading_path == ["Balance sheets"]]
    of_words = [u for u in units if u.heading_path == ["Глоссарий"]]
    assert len(of_figures) == 2 and len(of_words) == 2
    embedded = embedding_text("Microsoft", of_figures[0])
    assert "Inventories: June 30, 2023 2,500; December 31, 2022 3,742" in embedded
    assert "|" not in embedded
    # A table of words reads as text already: its units are embedded as they are written.
    assert all("embed_text" not in u.meta for u in of_words)
    assert "| Термин 0 | что он значит 0 | пример 0 |" in embedding_text("Wiki", of_words[0])
