"""Word-level diff inside a paragraph: aligned tokens, merged changes, escaped HTML."""

from __future__ import annotations

from knowledge.versions.words import count_words, diff_words, normalise_text, similarity


def test_changed_word_is_marked_deleted_then_inserted():
    diff = diff_words(
        "Наименование темы разработки – GravityScience.", "Наименование темы разработки – События."
    )
    assert (
        diff.inline_html()
        == "Наименование темы разработки – <del>GravityScience</del><ins>События</ins>."
    )
    assert (diff.added, diff.removed) == (1, 1)
    assert diff.old_html() == "Наименование темы разработки – <del>GravityScience</del>."
    assert diff.new_html() == "Наименование темы разработки – <ins>События</ins>."


def test_rewritten_phrase_reads_as_one_deletion_and_one_insertion():
    diff = diff_words(
        "we will give you notice of changes", "we will post notice of material changes"
    )
    html = diff.inline_html()
    assert "<del>give you</del><ins>post</ins>" in html
    assert "<ins>material </ins>" in html
    assert diff.old_text() == "we will give you notice of changes"
    assert diff.new_text() == "we will post notice of material changes"


def test_text_is_escaped_so_markup_in_a_document_stays_text():
    diff = diff_words("<b>old</b> & co", '<script>alert("x")</script> & co')
    html = diff.inline_html()
    assert "<script>" not in html and "<b>" not in html
    assert 'script&gt;alert("x")&lt;/script' in html and "&amp; co" in html


def test_whitespace_and_emphasis_are_formatting_not_text():
    assert normalise_text("Short  **version**:\u00a0We") == "Short version: We"
    assert not diff_words("Short **version**:  we", "Short version: we").changed


def test_line_breaks_of_a_list_survive_as_br():
    diff = diff_words("- one\n- two", "- one\n- three")
    assert "<br>" in diff.inline_html()
    assert "<del>two</del><ins>three</ins>" in diff.inline_html()


def test_counts_and_similarity():
    assert count_words("Москва 2019, г. Москва") == 4
    assert similarity("a b c d", "a b c d") == 1.0
    assert similarity("alpha beta gamma", "delta epsilon zeta") == 0.0
