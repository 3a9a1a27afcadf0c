"""The matching rules of the coverage map and the numbering they rely on (pure functions)."""

from __future__ import annotations

from scenarios import matching, numbering
from scenarios.matching import Evidence


def _blocks(*items: tuple[str, str]) -> list[dict]:
    return [{"kind": kind, "text": text} for kind, text in items]


# --- numbering -------------------------------------------------------------------------------


def test_a_flat_document_takes_its_numbers_from_its_table_of_contents():
    blocks = _blocks(
        ("text", "СОДЕРЖАНИЕ"),
        ("text", "4. ТРЕБОВАНИЯ К ПРОГРАММЕ 8"),
        ("text", "4.2. Требования к интерфейсу 8"),
        ("heading", "ТРЕБОВАНИЯ К ПРОГРАММЕ"),
        ("heading", "Требования к интерфейсу"),
        ("heading", "Для клиента:"),  # a paragraph styled as a heading: not in the contents
        ("text", "Программный продукт должен иметь интерфейс android."),
    )
    found = numbering.sections(blocks)
    assert [(s.number, s.title) for s in found] == [
        ("4", "ТРЕБОВАНИЯ К ПРОГРАММЕ"),
        ("4.2", "Требования к интерфейсу"),
    ]
    assert found[1].lines == ["Для клиента:", "Программный продукт должен иметь интерфейс android."]
    assert found[1].path == ["ТРЕБОВАНИЯ К ПРОГРАММЕ", "Требования к интерфейсу"]
    assert numbering.section_of(found, 6) is found[1]


def test_a_numbered_paragraph_continuing_the_numbering_opens_a_section():
    blocks = _blocks(
        ("text", "4.1.1. Требования к составу выполняемых функций 8"),
        ("heading", "Требования к составу выполняемых функций"),
        ("text", "Программа должна быть клиент-серверной."),
        ("text", "4.1.2. Требования к организации входных данных"),
        ("text", "Для сервера: HTML страница."),
        ("text", "5.3. Рисунок из другого раздела"),  # another top-level number: not a heading
    )
    found = numbering.sections(blocks)
    assert [s.number for s in found] == ["4.1.1", "4.1.2"]
    assert found[1].lines == ["Для сервера: HTML страница.", "5.3. Рисунок из другого раздела"]


def test_a_document_with_heading_levels_keeps_the_parsers_numbers():
    blocks = [
        {"kind": "heading", "text": "МЕТОДЫ ИСПЫТАНИЙ", "level": 1, "section": "6"},
        {"kind": "heading", "text": "Изменение языка", "level": 2, "section": "6.1"},
        {"kind": "text", "text": "Во вкладке настроек нажать на кнопку языка.", "section": "6.1"},
    ]
    found = numbering.sections(blocks)
    assert [(s.number, s.level) for s in found] == [("6", 1), ("6.1", 2)]
    assert found[1].path == ["МЕТОДЫ ИСПЫТАНИЙ", "Изменение языка"]


def test_statements_are_list_items_with_their_lead_in():
    lines = [
        "Программа должна быть клиент-серверной.",
        "Клиентское приложение должно реализовывать следующие функции:",
        "- отправлять запрос серверу;",
        "- предоставлять функционал;",
        "1) Температура воздуха от 10 до 30 градусов;",
    ]
    assert numbering.items(lines) == [
        ("", "Программа должна быть клиент-серверной"),
        ("Клиентское приложение должно реализовывать следующие функции", "отправлять запрос серверу"),
        ("Клиентское приложение должно реализовывать следующие функции", "предоставлять функционал"),
        ("Клиентское приложение должно реализовывать следующие функции",
         "Температура воздуха от 10 до 30 градусов"),
    ]  # fmt: skip


# --- references ------------------------------------------------------------------------------


def test_section_references_are_read_in_russian_and_english():
    text = "Проверяется выполнение п. 4.2.1 и пункта 4.3. See section 5.1 of the requirements."
    assert matching.referenced_numbers(text) == {"4.2.1", "4.3", "5.1"}


def test_a_number_of_the_test_documents_own_counts_only_when_the_requirements_are_named():
    own = {"5.1", "6.2"}
    assert matching.referenced_numbers("Состав документации (см. п. 5.1).", own) == set()
    assert matching.referenced_numbers("Проверяется требование п. 5.1 ТЗ.", own) == {"5.1"}


def test_a_reference_covers_the_section_and_what_it_holds_but_a_bare_chapter_does_not():
    assert matching.refers_to({"4.1"}, "4.1.2")
    assert matching.refers_to({"4.1.2"}, "4.1.2")
    assert not matching.refers_to({"4.1.2"}, "4.1")
    assert not matching.refers_to({"4.1"}, "4.10")
    assert not matching.refers_to({"4"}, "4.2")


# --- headings and terms ----------------------------------------------------------------------


def test_a_test_titled_after_the_requirements_section_names_it():
    generic = {"требован"}
    unit = {"испытан", "выполнен", "требован", "интерфейс"}
    assert matching.names_heading([{"требован", "интерфейс"}], unit, generic)
    assert not matching.names_heading([{"требован", "надежн"}], unit, generic)
    assert not matching.names_heading([{"требован"}], unit, generic)  # generic words name nothing


def test_rare_terms_are_rare_among_the_sections_compared():
    units = [{"мероприят", "цветов", "тем"}, {"мероприят", "язык"}] + [{"мероприят"}] * 8
    idf = matching.local_idf(units)
    rare = matching.rare(idf, len(units))
    assert {"цветов", "тем", "язык"} <= rare
    assert "мероприят" not in rare
    shared, score = matching.shared_terms({"мероприят", "цветов", "тем"}, units[0], idf, rare)
    assert shared[:2] == ["тем", "цветов"] and 0.9 < score < 1.0


def test_what_covers_a_requirement():
    assert Evidence(reference=True).covers
    assert Evidence(heading=True).covers
    assert Evidence(terms=["цветов", "тем"], term_score=0.6).covers
    assert not Evidence(terms=["цветов"], term_score=0.9).covers  # one word is not enough
    assert not Evidence(terms=["цветов", "тем"], term_score=0.3).covers
    assert Evidence(terms=["a", "b", "c", "d"], term_score=0.36).covers
    assert Evidence(terms=["цветов", "тем"], term_score=0.3, retrieval_rank=1).covers
    assert not Evidence(terms=["цветов", "тем"], term_score=0.3, retrieval_rank=2).covers
    assert Evidence(terms=["a", "b", "c"], term_score=0.1, retrieval_rank=1).covers
    assert not Evidence(retrieval_rank=1, retrieval_score=0.9).covers  # the search alone is not
    assert Evidence(reference=True).reasons() == ["reference"]
    assert Evidence(heading=True, terms=["x"], retrieval_rank=1).reasons() == [
        "heading",
        "terms",
        "retrieval",
    ]
