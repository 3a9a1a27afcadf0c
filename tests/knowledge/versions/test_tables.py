"""Tables compared row by row: added, removed, changed cells; rows matched by key or content."""

from __future__ import annotations

from knowledge.parsing.base import Table
from knowledge.versions.tables import diff_tables


def _statuses(diff):
    return [(r.status, r.old_number, r.new_number) for r in diff.rows]


def test_rows_added_removed_and_changed_by_key_column():
    old = Table(
        ["ID", "Step", "Expected"],
        [["T1", "open", "ok"], ["T2", "save", "saved"], ["T3", "quit", "bye"]],
    )
    new = Table(
        ["ID", "Step", "Expected"],
        [["T1", "open", "ok"], ["T3", "quit", "closed"], ["T4", "undo", "undone"]],
    )
    diff = diff_tables(old, new)
    assert _statuses(diff) == [
        ("same", 1, 1),
        ("removed", 2, None),
        ("changed", 3, 2),
        ("added", None, 3),
    ]
    changed = diff.rows[2]
    assert [c.changed for c in changed.cells] == [False, False, True]
    assert changed.cells[2].words.inline_html() == "<del>bye</del><ins>closed</ins>"
    assert not diff.header_changed


def test_renamed_key_still_pairs_the_row_by_its_content():
    old = Table(
        ["Section", "What"],
        [
            [
                "E. Copyright & DMCA Policy",
                "How GitHub responds to claims of infringement on GitHub.",
            ]
        ],
    )
    new = Table(
        ["Section", "What"],
        [
            [
                "F. Copyright & DMCA Policy",
                "How GitHub responds to claims of infringement on GitHub.",
            ]
        ],
    )
    diff = diff_tables(old, new)
    assert _statuses(diff) == [("changed", 1, 1)]
    assert diff.rows[0].cells[0].words.inline_html().startswith("<del>E</del><ins>F</ins>")


def test_rows_without_a_key_column_match_by_content_and_header_changes_count():
    old = Table(["a", "b"], [["x", "1"], ["x", "2"]])
    new = Table(["a", "c"], [["x", "1"], ["x", "2"], ["x", "3"]])
    diff = diff_tables(old, new)
    assert diff.header_changed
    assert _statuses(diff) == [("same", 1, 1), ("same", 2, 2), ("added", None, 3)]
    assert diff.count("added") == 1 and diff.changed


def test_identical_tables_have_no_changes():
    table = Table(["a"], [["1"], ["2"]])
    assert not diff_tables(table, Table(["a"], [["1"], ["2"]])).changed
