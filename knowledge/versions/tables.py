"""Tables compared row by row: a row added, removed, or changed cell by cell.

Rows are matched by a key column when the tables have one (the first column whose cells are
filled and unique in both tables: an id, a name, a section letter), otherwise by their whole
content; difflib keeps the order, and rows left over inside a changed stretch pair up with their
most similar counterpart (>= 0.5), the rest being added or removed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from difflib import SequenceMatcher

from knowledge.parsing.base import Table
from knowledge.versions.words import WordDiff, diff_words, normalise_text, similarity

ROW_THRESHOLD = 0.5


@dataclass
class CellDiff:
    old: str | None
    new: str | None
    words: WordDiff

    @property
    def changed(self) -> bool:
        return self.words.changed


@dataclass
class RowDiff:
    status: str  # same, added, removed, changed
    old_number: int | None  # 1-based row number in the old table (None when added)
    new_number: int | None
    cells: list[CellDiff]
    anchor: int = 0  # page-wide row number, set by the comparison ("#row-<n>")

    @property
    def changed_cells(self) -> int:
        return sum(1 for c in self.cells if c.changed)


@dataclass
class TableDiff:
    header: list[CellDiff]
    rows: list[RowDiff] = field(default_factory=list)

    @property
    def header_changed(self) -> bool:
        return any(c.changed for c in self.header)

    def count(self, status: str) -> int:
        return sum(1 for r in self.rows if r.status == status)

    @property
    def changed(self) -> bool:
        return self.header_changed or any(r.status != "same" for r in self.rows)

    @property
    def words_added(self) -> int:
        return sum(c.words.added for c in self._cells())

    @property
    def words_removed(self) -> int:
        return sum(c.words.removed for c in self._cells())

    def _cells(self):
        yield from self.header
        for row in self.rows:
            yield from row.cells


def _cells(old: list[str] | None, new: list[str] | None) -> list[CellDiff]:
    a, b = old or [], new or []
    width = max(len(a), len(b))
    out = []
    for k in range(width):
        left = a[k] if k < len(a) else None
        right = b[k] if k < len(b) else None
        out.append(CellDiff(left, right, diff_words(left or "", right or "")))
    return out


def _key_column(old: Table, new: Table) -> int | None:
    width = min(
        min((len(r) for r in old.rows), default=0), min((len(r) for r in new.rows), default=0)
    )
    for k in range(width):
        keys_old = [normalise_text(r[k]).casefold() for r in old.rows]
        keys_new = [normalise_text(r[k]).casefold() for r in new.rows]
        filled = all(keys_old) and all(keys_new)
        if filled and len(set(keys_old)) == len(keys_old) and len(set(keys_new)) == len(keys_new):
            return k
    return None


def _row_text(row: list[str]) -> str:
    return " | ".join(normalise_text(c) for c in row)


def diff_tables(old: Table, new: Table) -> TableDiff:
    """Header cell by cell; rows matched by key column or content, in order."""
    result = TableDiff(header=_cells(old.header, new.header))
    key = _key_column(old, new)

    def row_key(row: list[str]) -> str:
        return normalise_text(row[key]).casefold() if key is not None else _row_text(row)

    keys_old = [row_key(r) for r in old.rows]
    keys_new = [row_key(r) for r in new.rows]
    matcher = SequenceMatcher(None, keys_old, keys_new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                result.rows.append(_pair(old, new, i, j))
        else:
            result.rows += _pair_stretch(old, new, range(i1, i2), range(j1, j2))
    return result


def _pair(old: Table, new: Table, i: int, j: int) -> RowDiff:
    cells = _cells(old.rows[i], new.rows[j])
    status = "changed" if any(c.changed for c in cells) else "same"
    return RowDiff(status, i + 1, j + 1, cells)


def _pair_stretch(old: Table, new: Table, olds: range, news: range) -> list[RowDiff]:
    """Inside a changed stretch: each old row pairs with the most similar new row after the
    last pairing (>= ROW_THRESHOLD); unpaired rows are removed or added, in order."""
    out: list[RowDiff] = []
    next_new = news.start
    for i in olds:
        best, best_score = None, ROW_THRESHOLD
        for j in range(next_new, news.stop):
            score = similarity(_row_text(old.rows[i]), _row_text(new.rows[j]))
            if score >= best_score and (best is None or score > best_score):
                best, best_score = j, score
        if best is None:
            out.append(RowDiff("removed", i + 1, None, _cells(old.rows[i], None)))
            continue
        for j in range(next_new, best):
            out.append(RowDiff("added", None, j + 1, _cells(None, new.rows[j])))
        out.append(_pair(old, new, i, best))
        next_new = best + 1
    for j in range(next_new, news.stop):
        out.append(RowDiff("added", None, j + 1, _cells(None, new.rows[j])))
    return out
