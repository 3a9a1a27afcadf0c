"""The comparison as pieces of escaped HTML for the page: sections, block rows, merged tables.

Every piece of document text passes through ``html.escape`` here; templates mark these
strings safe and add nothing but structure. Runs of unchanged blocks fold into one line, and
unchanged sections into a collapsed summary, so a long document's changes stay in view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from django.utils.translation import gettext

from knowledge.parsing.base import Block, Table
from knowledge.versions.diff import BlockDiff, DocumentDiff, SectionDiff
from knowledge.versions.tables import CellDiff, RowDiff, TableDiff

FOLD_AFTER = 2  # unchanged blocks shown around changes before the rest folds away


@dataclass
class BlockRow:
    status: str  # same, added, removed, changed
    kind: str
    old_html: str = ""  # left column of side by side
    new_html: str = ""  # right column
    inline_html: str = ""  # the inline view
    table_html: str = ""  # a compared table: one merged table for both views


@dataclass
class Fold:
    """Unchanged blocks folded into one expandable line."""

    rows: list[BlockRow]
    status: str = "fold"


@dataclass
class SectionView:
    anchor: str
    status: str
    moved: bool
    renamed: bool
    renumbered: bool
    old_label: str
    new_label: str
    old_number: str
    title_html: str  # heading, with the rename marked
    title_text: str  # the heading as plain text (the newer one when renamed): lists of sections
    number: str
    level: int
    items: list[BlockRow | Fold] = field(default_factory=list)
    words_added: int = 0
    words_removed: int = 0

    @property
    def changed(self) -> bool:
        return self.status != "same" or self.moved


@dataclass
class RowLink:
    anchor: int
    status: str
    section: str
    text: str


@dataclass
class ComparisonView:
    sections: list[SectionView]
    changed_rows: list[RowLink]

    @property
    def changed_sections(self) -> list[SectionView]:
        return [s for s in self.sections if s.changed]


def render_comparison(diff: DocumentDiff) -> ComparisonView:
    sections = [_section(s) for s in diff.sections]
    rows = [
        RowLink(row.anchor, row.status, s.anchor, _row_preview(row))
        for s in diff.sections
        for b in s.blocks
        if b.table is not None
        for row in b.table.rows
        if row.status != "same"
    ]
    return ComparisonView(sections, rows)


def _section(diff: SectionDiff) -> SectionView:
    old, new = diff.old, diff.new
    # The page is in the interface's language ("Preamble" is the part before any heading).
    title_text = diff.section.title or gettext("Preamble")
    title_html = diff.title.inline_html() if diff.title is not None else escape(title_text)
    view = SectionView(
        anchor=diff.anchor,
        status=diff.status,
        moved=diff.moved,
        renamed=diff.renamed,
        renumbered=diff.renumbered,
        old_label=old.label if old else "",
        new_label=new.label if new else "",
        old_number=(old.number or "preamble") if old else "",
        title_html=title_html,
        title_text=title_text,
        number=diff.section.number,
        level=diff.section.level,
        words_added=diff.words_added,
        words_removed=diff.words_removed,
    )
    view.items = _fold([_block_row(b) for b in diff.blocks], whole=diff.status == "same")
    return view


def _fold(rows: list[BlockRow], *, whole: bool) -> list[BlockRow | Fold]:
    """Keep changes and up to FOLD_AFTER unchanged blocks around each; fold the rest."""
    if whole:
        return [Fold(rows)] if rows else []
    keep = [r.status != "same" for r in rows]
    near = [any(keep[max(0, k - FOLD_AFTER) : k + FOLD_AFTER + 1]) for k in range(len(rows))]
    out: list[BlockRow | Fold] = []
    run: list[BlockRow] = []
    for row, show in zip(rows, near, strict=True):
        if show:
            if run:
                out.append(Fold(run))
                run = []
            out.append(row)
        else:
            run.append(row)
    if run:
        out.append(Fold(run))
    return out


def _block_row(diff: BlockDiff) -> BlockRow:
    if diff.table is not None:
        return BlockRow(diff.status, diff.kind, table_html=table_html(diff.table))
    block = diff.new or diff.old
    if diff.status in ("same", "added", "removed") and block.table is not None:  # type: ignore[union-attr]
        # A table shown whole once, across both columns, rather than twice side by side.
        html = plain_table_html(block.table)  # type: ignore[union-attr]
        return BlockRow(diff.status, diff.kind, table_html=html)
    if diff.status == "same":
        html = block_html(diff.new)  # type: ignore[arg-type]
        return BlockRow("same", diff.kind, html, html, html)
    if diff.status == "added":
        html = block_html(diff.new)  # type: ignore[arg-type]
        return BlockRow("added", diff.kind, "", html, block_html(diff.new, mark="ins"))  # type: ignore[arg-type]
    if diff.status == "removed":
        html = block_html(diff.old)  # type: ignore[arg-type]
        return BlockRow("removed", diff.kind, html, "", block_html(diff.old, mark="del"))  # type: ignore[arg-type]
    words = diff.words
    assert words is not None
    return BlockRow(
        "changed",
        diff.kind,
        _wrap(diff.old, words.old_html()),  # type: ignore[arg-type]
        _wrap(diff.new, words.new_html()),  # type: ignore[arg-type]
        _wrap(diff.new, words.inline_html()),  # type: ignore[arg-type]
    )


def _wrap(block: Block, html: str) -> str:
    return f'<pre class="code">{html}</pre>' if block.kind == "code" else f"<p>{html}</p>"


def block_html(block: Block, mark: str = "") -> str:
    """One unchanged, added or removed block as escaped HTML; ``mark`` ("ins" or "del") wraps
    its text for the inline view."""
    if block.table is not None:
        return plain_table_html(block.table)
    text = escape(block.text, quote=False)
    if mark:
        text = f"<{mark}>{text}</{mark}>"
    if block.kind == "code":
        return f'<pre class="code">{text}</pre>'
    return "<p>" + text.replace("\n", "<br>") + "</p>"


def _cell(text: str) -> str:
    return escape(text, quote=False).replace("\n", "<br>")


def plain_table_html(table: Table) -> str:
    head = "".join(f"<th>{_cell(c)}</th>" for c in table.header)
    body = "".join(
        "<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in row) + "</tr>" for row in table.rows
    )
    return f'<table class="diff-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _cell_html(cell: CellDiff, status: str) -> str:
    if status == "added":
        return _cell(cell.new or "")
    if status == "removed":
        return _cell(cell.old or "")
    return cell.words.inline_html()


ROW_MARK = {"added": "+", "removed": "−", "changed": "~", "same": ""}


def table_html(diff: TableDiff) -> str:
    """One merged table: rows added, removed and changed marked, cells diffed word by word.

    Each row has the id ``row-<n>`` (numbered through the whole comparison) for deep links."""
    head = "".join(
        f'<th class="{"cell-changed" if c.changed else ""}">{c.words.inline_html()}</th>'
        for c in diff.header
    )
    body = []
    for row in diff.rows:
        cells = "".join(
            f'<td class="{"cell-changed" if row.status == "changed" and c.changed else ""}">'
            f"{_cell_html(c, row.status)}</td>"
            for c in row.cells
        )
        link = f'<a class="row-link" href="#row-{row.anchor}" title="Link to this row">{ROW_MARK[row.status]}{row.anchor}</a>'
        body.append(
            f'<tr id="row-{row.anchor}" class="row-{row.status}"><td class="rowno">{link}</td>{cells}</tr>'
        )
    return (
        '<table class="diff-table compared"><thead><tr><th class="rowno">#</th>'
        f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _row_preview(row: RowDiff) -> str:
    texts = [(c.new if row.status != "removed" else c.old) or "" for c in row.cells]
    changed = [t for c, t in zip(row.cells, texts, strict=True) if c.changed and t.strip()]
    text = " · ".join(changed or [t for t in texts if t.strip()])
    text = " ".join(text.split())
    return text[:60] + ("…" if len(text) > 60 else "")
