"""What a table is made of, read from its cells alone (no Django): used by chunking to decide
how a table's row units are embedded.

A table of figures (a statement of operations, a price list, a test run's timings) is read by
its row labels and column headers: a Markdown grid of pipes and numbers tells a sentence
encoder next to nothing about which row holds what, while "Total operating expenses: Three
Months Ended July 1, 2023 $13,415" does. A table of words (terms and definitions, steps and
expected results) already reads as text, and is embedded as it is written.
"""

from __future__ import annotations

import re

from knowledge.parsing.base import Table

# A cell that is a figure: an amount, a share, a count, a date, with currency signs, thousands
# separators and parentheses for negatives ("$ (1,234.5)", "12 %", "2,877").
_FIGURE = re.compile(r"[$€£¥₽]?\s*\(?[-+−–—]?\s*[$€£¥₽]?\s*\d[\d\s,.]*\)?\s*%?")
# A cell that says "nothing here" ("—", "-", "n/a"): neither a figure nor a word.
_NIL = re.compile(r"[-−–—]+|n/?a", re.IGNORECASE)
# At least this share of a table's value cells (every non-empty, non-nil cell but a row's
# first) must be figures for the table to count as a table of figures.
FIGURE_SHARE = 0.6


def is_figure_cell(cell: str) -> bool:
    """True when ``cell`` (stripped) is a figure (see ``_FIGURE``)."""
    return bool(_FIGURE.fullmatch(cell.strip()))


def is_figure_table(table: Table) -> bool:
    """True when most of ``table``'s value cells are figures: a row's first non-empty cell is
    its label and does not count, nor do nil cells; a table with no value cells is not a
    table of figures."""
    values = 0
    figures = 0
    for row in table.rows:
        cells = [c.strip() for c in row if c.strip()]
        for cell in cells[1:]:
            if _NIL.fullmatch(cell):
                continue
            values += 1
            figures += is_figure_cell(cell)
    return values > 0 and figures >= FIGURE_SHARE * values


# A Markdown pipe table's cell boundary: a pipe not escaped by ``md_cell``.
_PIPE = re.compile(r"(?<!\\)\|")
_SEPARATOR = re.compile(r"\s*:?-{3,}:?\s*")


def markdown_cells(row: str) -> list[str]:
    """The cells of one Markdown pipe-table row, stripped (an escaped pipe stays in its cell)."""
    return [c.strip() for c in _PIPE.split(row.strip().strip("|"))]


def row_labels(markdown: str) -> list[str]:
    """The labels of the rows of the Markdown pipe tables in ``markdown``: each row's first
    filled cell, when it is not a figure or a nil cell, and the header row's first cell, which
    often names the rows ("Inventories (1):"; not a column header further right, such as a
    date); never the separator line. In table order, each once."""
    labels: list[str] = []
    header = True  # the next pipe line is a table's header row
    for line in markdown.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            header = True
            continue
        cells = markdown_cells(line)
        if any(cells) and all(_SEPARATOR.fullmatch(c) for c in cells if c):
            continue
        label = cells[0] if header else next((c for c in cells if c), "")
        header = False
        if label and not is_figure_cell(label) and not _NIL.fullmatch(label):
            label = label.replace("\\|", "|")
            if label not in labels:
                labels.append(label)
    return labels
