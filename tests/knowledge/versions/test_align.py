"""Sections aligned across versions: renumbering, renamed headings, moves, additions, removals."""

from __future__ import annotations

from knowledge.versions.diff import compare_documents

from .helpers import doc

LOREM = "The account holder is responsible for every activity that happens under the account and its credentials."


def _outline(diff):
    return [
        (s.status, s.old.title if s.old else None, s.new.title if s.new else None, s.moved)
        for s in diff.sections
    ]


def test_inserted_section_renumbers_the_rest_without_changing_them():
    old = doc(("h", 1, "Intro"), ("text", "Hello."), ("h", 1, "Scope"), ("text", "All of it."))
    new = doc(
        ("h", 1, "Intro"),
        ("text", "Hello."),
        ("h", 1, "Terms"),
        ("text", "Words."),
        ("h", 1, "Scope"),
        ("text", "All of it."),
    )
    diff = compare_documents(old, new)
    assert _outline(diff) == [
        ("same", "Intro", "Intro", False),
        ("added", None, "Terms", False),
        ("same", "Scope", "Scope", False),
    ]
    scope = diff.sections[2]
    assert scope.renumbered and (scope.old.number, scope.new.number) == ("2", "3")
    assert scope.anchor == "sec-3"
    assert diff.summary.as_text() == "1 section added; +1 / −0 words"


def test_renamed_heading_is_matched_by_its_content():
    old = doc(("h", 1, "Account Security"), ("text", LOREM))
    new = doc(("h", 1, "User Account Safety"), ("text", LOREM))
    diff = compare_documents(old, new)
    [section] = diff.sections
    assert section.status == "changed" and section.renamed and section.match.how == "content"
    assert "<del>" in section.title.inline_html()


def test_typed_numbers_and_letters_do_not_split_a_section():
    old = doc(("h", 1, "C. Acceptable Use"), ("text", "Be nice."))
    new = doc(("h", 1, "Acceptable Use"), ("text", "Be nice."))
    [section] = compare_documents(old, new).sections
    assert section.status == "same" and not section.renamed


def test_section_moved_ahead_of_its_neighbour_is_reported_as_moved():
    old = doc(
        ("h", 1, "Alpha"),
        ("text", "a text"),
        ("h", 1, "Beta"),
        ("text", "b text"),
        ("h", 1, "Gamma"),
        ("text", "c text"),
    )
    new = doc(
        ("h", 1, "Gamma"),
        ("text", "c text"),
        ("h", 1, "Alpha"),
        ("text", "a text"),
        ("h", 1, "Beta"),
        ("text", "b text"),
    )
    diff = compare_documents(old, new)
    assert _outline(diff) == [
        ("same", "Gamma", "Gamma", True),
        ("same", "Alpha", "Alpha", False),
        ("same", "Beta", "Beta", False),
    ]
    assert diff.summary.sections_moved == 1 and diff.summary.text_changed


def test_unrelated_sections_in_the_same_place_are_removed_and_added_not_paired():
    old = doc(
        ("h", 1, "Tests"),
        ("h", 2, "Launch the rocket"),
        ("text", "Press the launch button, the rocket flies towards the planet."),
    )
    new = doc(
        ("h", 1, "Tests"),
        ("h", 2, "Search events"),
        ("text", "Tap the magnifier and type a query to find matching events."),
    )
    statuses = [s.status for s in compare_documents(old, new).sections]
    assert statuses == ["same", "removed", "added"]


def test_paragraph_edit_inside_a_section_is_a_word_diff():
    old = doc(
        ("h", 1, "Name"), ("text", "The programme is called Gravity."), ("text", "Unchanged.")
    )
    new = doc(("h", 1, "Name"), ("text", "The programme is called Events."), ("text", "Unchanged."))
    [section] = compare_documents(old, new).sections
    [changed] = section.changed_blocks
    assert (
        changed.words.inline_html()
        == "The programme is called <del>Gravity</del><ins>Events</ins>."
    )
    assert (section.words_added, section.words_removed) == (1, 1)


def test_same_text_is_no_text_changes():
    one = doc(("h", 1, "A"), ("text", "Same  words."))
    two = doc(("h", 1, "A"), ("text", "Same words."))
    summary = compare_documents(one, two).summary
    assert not summary.text_changed and summary.as_text() == "No text changes"
