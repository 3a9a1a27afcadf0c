"""The diff engine on the real version histories (parsed from the files, no database)."""

from __future__ import annotations

import pytest

from knowledge.versions.diff import compare_documents
from knowledge.versions.excerpts import changes_text
from knowledge.versions.render import render_comparison

from .helpers import HSE, TOS, order, parsed


def _compare(folder, old: str, new: str):
    return compare_documents(parsed(folder, old), parsed(folder, new))


def _texts(section):
    return [
        (b.old.text if b.old else "", b.new.text if b.new else "") for b in section.changed_blocks
    ]


def test_order_file_lists_eight_versions_of_each_hse_document_and_53_of_the_tos():
    assert len(order(HSE, "ПМИ")) == 8 and len(order(HSE, "TZ")) == 8
    assert len(order(TOS)) == 53
    # Dates tie: the order file, not the name, says which of the two 2019-05-14 came first.
    pmi = order(HSE, "ПМИ")
    assert pmi.index("ПМИ_2019-05-14_3cba122.docx") < pmi.index("ПМИ_2019-05-14_30e82c5.docx")


def test_pmi_aa30d6d_renames_the_programme():
    pmi = order(HSE, "ПМИ")
    new = "ПМИ_2019-05-04_aa30d6d.docx"
    diff = _compare(HSE, pmi[pmi.index(new) - 1], new)
    summary = diff.summary
    assert (summary.sections_added, summary.sections_removed) == (0, 0)
    [name] = [s for s in diff.sections if s.new and s.new.title == "Наименование"]
    assert name.status == "changed" and name.anchor == "sec-1-1"
    [(before, after)] = _texts(name)
    assert (
        "«Кроссплатформенная обучающая игра с моделированием реактивного движения и космических тел»"
        in before
    )
    assert after == "Наименование программы – «Приложение активности и уведомления ВШЭ»."
    html = name.changed_blocks[0].words.inline_html()
    assert "<ins>Приложение активности и уведомления ВШЭ</ins>" in html
    # The title page's table says it too: one row changed, cell by cell.
    preamble = diff.sections[0]
    assert preamble.section.is_preamble and preamble.status == "changed"
    changed_rows = [
        row
        for b in preamble.blocks
        if b.table is not None
        for row in b.table.rows
        if row.status == "changed"
    ]
    assert changed_rows and any(
        "ПРИЛОЖЕНИЕ АКТИВНОСТИ" in (c.new or "") and "КРОССПЛАТФОРМЕННАЯ" in (c.old or "")
        for row in changed_rows
        for c in row.cells
    )
    assert summary.changed == ["Preamble", "1.1 Наименование"]


def test_pmi_3cba122_rewrites_the_scope_against_8ef4ea7():
    diff = _compare(HSE, "ПМИ_2019-05-07_8ef4ea7.docx", "ПМИ_2019-05-14_3cba122.docx")
    by_title = {s.section.title: s for s in diff.sections}
    scope = by_title["Область применения"]
    assert scope.status == "changed" and scope.anchor == "sec-1-2"
    before = " ".join(old for old, _ in _texts(scope))
    after = " ".join(new for _, new in _texts(scope))
    assert "проводить досуг и развивать логическое мышление" in before
    assert "вспомогательный инструмент для организации мероприятий НИУ ВШЭ" in after
    assert by_title["Наименование"].status == "same"  # the renaming came earlier
    # The test sections of the game are gone and the events app's are new.
    removed = {s.section.title for s in diff.sections if s.status == "removed"}
    added = {s.section.title for s in diff.sections if s.status == "added"}
    assert "Запуск ракеты для совершения полета с учётом заданных условий" in removed
    assert {
        "Добавление мероприятия в избранное",
        "Поиск по мероприятиям",
        "АЛГОРИТМ ПОЛЬЗОВАНИЯ",
    } <= added
    assert len(removed) == 15
    changed_paragraphs = sum(len(s.changed_blocks) for s in diff.sections)
    assert 150 <= changed_paragraphs <= 250  # "about 200 changed paragraphs"
    assert diff.summary.words_removed > diff.summary.words_added > 400


def test_formatting_only_versions_have_no_text_changes():
    for old, new in (
        ("TZ_2019-05-15_8bb41a2.docx", "TZ_2019-05-15_ec34822.docx"),
        ("TZ_2019-05-04_e735602.docx", "TZ_2019-05-05_d8f6d47.docx"),
    ):
        diff = _compare(HSE, old, new)
        assert diff.summary.as_text() == "No text changes"
        assert not diff.changed_sections
        text = changes_text(
            diff, document="ТЗ", old_label=old, new_label=new, url="/c/", max_chars=2000
        )
        assert "No text changes" in text and "only their formatting differs" in text


def test_tz_8bb41a2_changes_only_the_sheet_count():
    diff = _compare(HSE, "TZ_2019-05-15_13d5bd9.docx", "TZ_2019-05-15_8bb41a2.docx")
    [section] = diff.changed_sections
    [block] = section.changed_blocks
    assert block.words.inline_html() == "Листов <del>17</del><ins>14</ins>"
    assert diff.summary.as_text() == "1 section changed; +1 / −1 words"


def test_pmi_13d5bd9_moves_the_title_page_to_2019():
    diff = _compare(HSE, "ПМИ_2019-05-14_30e82c5.docx", "ПМИ_2019-05-15_13d5bd9.docx")
    inline = [
        b.words.inline_html() for s in diff.changed_sections for b in s.changed_blocks if b.words
    ]
    assert "Москва <del>2018</del><ins>2019</ins>" in inline


def test_tos_first_and_last_versions_align_despite_renumbering_and_renames():
    names = order(TOS)
    diff = _compare(TOS, names[0], names[-1])
    matched = {(s.old.title, s.new.title) for s in diff.sections if s.old and s.new}
    # Renumbered (1.1.x -> 1.x), lettered headings relettered, one heading reworded and moved.
    assert ("Governing Law", "Governing Law") in matched
    assert (
        "E. Copyright Infringement and DMCA Policy",
        "F. Copyright Infringement and DMCA Policy",
    ) in matched
    ownership = next(
        s for s in diff.sections if s.new and s.new.title.startswith("Ownership of Content")
    )
    assert ownership.old.title == "Ownership of Content and Right to Post" and ownership.moved
    assert any(s.status == "added" and s.new.title == "Access Reciprocity" for s in diff.sections)
    view = render_comparison(diff)
    assert view.changed_rows  # the summary table's rows changed too
    anchors = [s.anchor for s in view.sections]
    assert len(anchors) == len(set(anchors))


def test_tos_versions_that_only_renest_headings_have_no_text_changes():
    # 2021-06-14 dropped a heading level (1.1.4 -> 1.4) and changed no words.
    diff = _compare(TOS, "tos__2021-05-25_57833bc.md", "tos__2021-06-14_3063a03.md")
    assert diff.summary.as_text() == "No text changes"
    assert any(s.renumbered for s in diff.sections)


@pytest.mark.parametrize("pair", [("tos__2025-03-24_65318a5.md", "tos__2025-09-29_a4234fc.md")])
def test_tos_2025_adds_the_access_reciprocity_section(pair):
    diff = _compare(TOS, *pair)
    [added] = [s for s in diff.sections if s.status == "added"]
    assert added.new.title == "Access Reciprocity" and added.anchor == "sec-1-6-8"
    assert diff.summary.sections_added == 1
