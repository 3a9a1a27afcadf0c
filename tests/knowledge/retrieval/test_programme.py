"""Structural filters on the real test programme (ПМИ, a GOST-style DOCX): a section named in
the question restricts the search to it and its subsections; "test cases" to test-case and
table chunks. The document is ingested once for the module."""

from __future__ import annotations

import pytest

from knowledge.models import Chunk
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.weights import Hits

ALL = SearchOptions(hits=Hits(k=20, per_document=50, cascade=False), min_score=-1.0)


def sections_of(chunk_ids: list[int]) -> list[set[str]]:
    rows = Chunk.objects.filter(pk__in=chunk_ids).values_list("section", "sections")
    return [{section, *sections} - {""} for section, sections in rows]


def within(sections: set[str], prefix: str) -> bool:
    return bool(sections) and all(s == prefix or s.startswith(prefix + ".") for s in sections)


@pytest.mark.parametrize(
    ("question", "section"),
    [
        ("Какие условия проведения испытаний указаны в разделе 5.4?", "5.4"),
        ("Что проверяется в п. 6.3?", "6.3"),
        ("What does section 3.2 require?", "3.2"),
    ],
)
def test_a_named_section_returns_only_that_section_and_its_subsections(
    db, programme, embedder, question, section
):
    result = search(question, options=ALL, embedder=embedder)
    assert result.filters.sections == [section]
    assert result.hits
    # Every candidate, not only the final hits: the filter applies in SQL before ranking.
    for sections in sections_of([c.chunk_id for c in result.candidates]):
        assert within(sections, section), sections
    # The section has subsections and the search reaches them.
    found = set().union(*sections_of([c.chunk_id for c in result.hits]))
    expected = set(
        Chunk.objects.filter(document=programme, section__startswith=section).values_list(
            "section", flat=True
        )
    )
    assert found & expected


def test_without_the_section_the_same_words_reach_other_sections(db, programme, embedder):
    result = search("Какие условия проведения испытаний?", options=ALL, embedder=embedder)
    assert result.filters.sections == []
    assert not all(within(s, "5.4") for s in sections_of([c.chunk_id for c in result.hits]))


@pytest.mark.parametrize(
    "question",
    [
        "Покажи тест-кейсы для поиска по мероприятиям",
        "test cases for changing the colour theme",
        "таблица регистрации изменений",
    ],
)
def test_asking_for_test_cases_returns_only_test_case_or_table_chunks(
    db, programme, embedder, question
):
    result = search(question, options=ALL, embedder=embedder)
    assert result.hits
    kinds = set(
        Chunk.objects.filter(pk__in=[c.chunk_id for c in result.candidates]).values_list(
            "block_type", flat=True
        )
    )
    assert kinds <= {"test_case", "table"}, kinds
    # The programme is mostly text: the filter, not the corpus, is what keeps the rest out.
    assert Chunk.objects.filter(document=programme, block_type="text").count() > len(kinds)


def test_test_cases_of_a_section_with_no_other_words_are_listed_in_document_order(
    db, programme, embedder
):
    result = search("покажи тест-кейсы из раздела 9", embedder=embedder)
    assert result.browse
    rows = list(
        Chunk.objects.filter(pk__in=[c.chunk_id for c in result.hits]).values_list(
            "block_type", "section", "position"
        )
    )
    assert rows
    assert all(kind in ("test_case", "table") for kind, _, _ in rows)
    assert all(section == "9" or section.startswith("9.") for _, section, _ in rows)
