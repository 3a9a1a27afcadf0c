"""Chunking: the blocks of a parsed document -> chunks of ~max_tokens with their structure.

Rules (the ingestion issue): chunks follow headings and paragraphs; consecutive text of one
section is packed up to ``max_tokens`` with ``overlap`` carried between chunks of the same
section; a table is never cut mid-row, and a long table is split by rows with its header row
repeated in every piece; sections smaller than ``min_tokens`` merge with the next section under
the same parent; every chunk knows its heading path, its section number and every section it
covers. A "token" here is a word or a punctuation mark, a stable proxy for model tokens.

Every text is bounded (``knowledge.textbounds``): a run without a blank longer than
``LONG_TOKEN_CHARS`` is cut into pieces before packing, and a chunk longer than
``CHUNK_MAX_CHARS`` is cut into consecutive chunks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from knowledge.parsing.base import Block, ParsedDocument, Table
from knowledge.tables import is_figure_table
from knowledge.textbounds import CHUNK_MAX_CHARS, has_long_token, split_long_tokens, within_ceiling

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?…;:])\s+|\n+")
FLOW_KINDS = {"text", "list", "code"}
TABLE_KINDS = {"table", "test_case"}
ROW_UNIT = "row"  # a chunk that is a few rows of a table, searched for its parent piece
# Chunks whose rows' labels are stored (``meta["labels"]``) for knowledge.retrieval.labels.
LABELLED_KINDS = frozenset(TABLE_KINDS | {ROW_UNIT})


def count_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


@dataclass(frozen=True)
class ChunkingConfig:
    max_tokens: int = 800
    min_tokens: int = 120
    overlap: float = 0.12
    caption_tokens: int = 60  # a paragraph this short right before a table is its caption
    # Tables of at least this many rows also get row units: a few rows with the table's caption
    # and header row, embedded and indexed on their own (a vector of a whole table says little
    # about one row); search answers with the table piece they belong to. 0: no row units.
    row_unit_min_rows: int = 4
    rows_per_unit: int = 2
    # Row units' vectors over their rows read as sentences (``row_sentences``), not Markdown:
    # for every table, or only for tables of figures (``knowledge.tables.is_figure_table``).
    row_sentences: bool = False
    figure_sentences: bool = True


@dataclass
class ChunkDraft:
    text: str
    heading_path: list[str]
    section: str
    sections: list[str]
    block_type: str
    block_start: int
    block_end: int
    token_count: int
    page: int | None = None
    sheet: str = ""
    row_start: int | None = None
    row_end: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Flow:
    """Text of one or more sections being packed into a chunk."""

    heading_path: list[str]
    section: str
    sections: list[str]
    parts: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    block_start: int = -1
    block_end: int = -1
    page: int | None = None
    tokens: int = 0

    def add(self, text: str, kind: str, index: int, page: int | None) -> None:
        self.parts.append(text)
        self.kinds.append(kind)
        self.block_start = index if self.block_start < 0 else self.block_start
        self.block_end = index
        self.page = page if self.page is None else self.page
        self.tokens += count_tokens(text)


class Chunker:
    """Stateless apart from its configuration; ``chunk`` may be called from many threads."""

    def __init__(self, config: ChunkingConfig | None = None) -> None:
        self.config = config or ChunkingConfig()

    def chunk(self, document: ParsedDocument) -> list[ChunkDraft]:
        run = _Run(self.config)
        for index, found in enumerate(document.blocks):
            block = _bounded(found)
            if block.kind == "heading":
                run.heading(block)
            elif block.kind in TABLE_KINDS:
                run.table(block, index)
            elif block.text.strip():
                run.flow(block, index)
        run.flush(final=True)
        drafts = [draft for draft in run.drafts if draft.text.strip()]
        if not drafts:
            return _within_ceiling(_headings_only(document))
        return _within_ceiling(self._with_row_units(drafts, run.table_pieces))

    def _with_row_units(self, drafts: list[ChunkDraft], pieces: list[tuple]) -> list[ChunkDraft]:
        """The drafts with the row units of the long tables right after the piece they belong
        to (``meta["parent_position"]``: the piece's position in the version). A checklist's
        rows are items: one unit per row, however short its table."""
        of_piece = {id(piece): (table, caption, rows) for piece, table, caption, rows in pieces}
        out: list[ChunkDraft] = []
        for draft in drafts:
            out.append(draft)
            found = of_piece.get(id(draft))
            step = self._unit_rows(draft, found[0]) if found else 0
            if not step:
                continue
            table, caption, (first, last) = found
            if draft.meta.get("checklist") and not caption:
                # An item read alone still says which sheet and section it belongs to.
                caption = " › ".join(draft.heading_path)
            parent = len(out) - 1
            for start in range(first, last, step):
                end = min(last, start + step)
                text = table.to_markdown(table.rows[start:end])
                body = f"{caption}\n\n{text}" if caption else text
                meta = {"parent_position": parent, "table_rows": [start + 1, end]}
                if self._as_sentences(draft, table):
                    meta["embed_text"] = row_sentences(table, start, end, caption)
                if draft.meta.get("checklist"):
                    meta["checklist"] = True
                rows = draft.row_start, draft.row_start
                if draft.row_start is not None:  # the piece's first row is table row ``first``
                    rows = draft.row_start + start - first, draft.row_start + end - 1 - first
                out.append(
                    replace(
                        draft,
                        text=body,
                        block_type=ROW_UNIT,
                        token_count=count_tokens(body),
                        row_start=rows[0],
                        row_end=rows[1],
                        meta=meta,
                    )
                )
        return out

    def _as_sentences(self, draft: ChunkDraft, table: Table) -> bool:
        """Whether this piece's row units are embedded as their rows read as sentences: a
        table of figures always (``knowledge.tables``), any other table when configured; a
        checklist's items never (each is one line already)."""
        if draft.meta.get("checklist"):
            return False
        if self.config.row_sentences:
            return True
        return self.config.figure_sentences and is_figure_table(table)

    def _unit_rows(self, draft: ChunkDraft, table: Table) -> int:
        """Rows per unit for this table piece; 0: no units."""
        if draft.meta.get("checklist"):
            return 1 if len(table.rows) > 1 else 0  # a one-row table is its only item already
        if self.config.row_unit_min_rows and len(table.rows) >= self.config.row_unit_min_rows:
            return max(1, self.config.rows_per_unit)
        return 0


class _Run:
    def __init__(self, config: ChunkingConfig) -> None:
        self.config = config
        self.drafts: list[ChunkDraft] = []
        self.buffer: _Flow | None = None
        self.path: list[str] = []
        self.section = ""
        self.pending_titles: list[str] = []
        self.last_flow: tuple[Block, int] | None = None
        self.table_pieces: list[tuple[ChunkDraft, Table, str, tuple[int, int]]] = []

    # --- events ---------------------------------------------------------------------------

    def heading(self, block: Block) -> None:
        previous_path = self.path
        self.path, self.section = list(block.heading_path), block.section
        self.last_flow = None
        if self.buffer is None:
            return
        small = self.buffer.tokens < self.config.min_tokens
        # "Under the same parent": a sibling, or a child of the section being packed.
        parent = previous_path[:-1]
        related = self.path[: len(parent)] == parent and len(self.path) >= len(previous_path)
        if small and related:
            self.buffer.sections.append(block.section)
            self.buffer.parts.append(f"{'#' * min(6, max(1, block.level))} {block.text}")
            self.buffer.kinds.append("heading")
            self.buffer.tokens += count_tokens(block.text)
        else:
            self.flush()

    def flow(self, block: Block, index: int) -> None:
        cfg = self.config
        for piece in _split_long(block.text, cfg.max_tokens, by_lines=block.kind != "text"):
            size = count_tokens(piece)
            if self.buffer is not None and self.buffer.tokens + size > cfg.max_tokens:
                carry = (
                    self._overlap_tail(self.buffer) if self.buffer.section == self.section else ""
                )
                self.flush()
                if carry:
                    self._open().add(carry, "overlap", index, block.page)
            self._open().add(piece, block.kind, index, block.page)
        self.last_flow = (block, index)

    def table(self, block: Block, index: int) -> None:
        # A parser that knows the table's caption says so; else a short paragraph right above.
        caption = str(block.meta.get("caption") or "")
        if (
            not caption
            and self.last_flow
            and count_tokens(self.last_flow[0].text) <= self.config.caption_tokens
        ):
            caption = self.last_flow[0].text
        self.flush()
        table = block.table
        if table is None:
            self._emit_table_piece(block, index, caption, block.text, None)
            return
        for first, last in _row_groups(table, self.config.max_tokens - count_tokens(caption)):
            text = table.to_markdown(table.rows[first:last])
            self._emit_table_piece(block, index, caption, text, (first, last))
            self.table_pieces.append((self.drafts[-1], table, caption, (first, last)))
        self.last_flow = None

    # --- output ---------------------------------------------------------------------------

    def _open(self) -> _Flow:
        if self.buffer is None:
            self.buffer = _Flow(
                list(self.path), self.section, [self.section] if self.section else []
            )
        return self.buffer

    def _overlap_tail(self, flow: _Flow) -> str:
        budget = int(self.config.max_tokens * self.config.overlap)
        sentences = (
            [s for s in _SENTENCE_END.split(flow.parts[-1]) if s.strip()] if flow.parts else []
        )
        tail: list[str] = []
        used = 0
        for sentence in reversed(sentences):
            size = count_tokens(sentence)
            if used + size > budget:
                break
            tail.insert(0, sentence.strip())
            used += size
        return " ".join(tail)

    def flush(self, final: bool = False) -> None:
        flow, self.buffer = self.buffer, None
        if flow is None or not any(k not in ("heading", "overlap") for k in flow.kinds):
            return
        kinds = {k for k in flow.kinds if k not in ("heading", "overlap")}
        block_type = kinds.pop() if len(kinds) == 1 else "text"
        text = "\n\n".join(flow.parts)
        self.drafts.append(
            ChunkDraft(
                text=text,
                heading_path=flow.heading_path,
                section=flow.section,
                sections=_unique(flow.sections),
                block_type=block_type,
                block_start=flow.block_start,
                block_end=flow.block_end,
                token_count=count_tokens(text),
                page=flow.page,
                meta={"overlap": True} if "overlap" in flow.kinds else {},
            )
        )

    def _emit_table_piece(
        self, block: Block, index: int, caption: str, text: str, rows: tuple[int, int] | None
    ) -> None:
        body = f"{caption}\n\n{text}" if caption else text
        meta = dict(block.meta)
        row_start, row_end = block.row_start, block.row_end
        if (
            rows is not None
            and block.table is not None
            and len(block.table.rows) > rows[1] - rows[0]
        ):
            meta["table_rows"] = [rows[0] + 1, rows[1]]
            if block.row_start is not None:
                # The block's first data row is row_start; header rows come before it.
                row_start, row_end = block.row_start + rows[0], block.row_start + rows[1] - 1
        self.drafts.append(
            ChunkDraft(
                text=body,
                heading_path=list(block.heading_path),
                section=block.section,
                sections=[block.section] if block.section else [],
                block_type=block.kind,
                block_start=index,
                block_end=index,
                token_count=count_tokens(body),
                page=block.page,
                sheet=block.sheet,
                row_start=row_start,
                row_end=row_end,
                meta=meta,
            )
        )


# What a row unit's vector is computed over: its rows read as sentences ("iPhone: Three Months
# Ended July 1, 2023 $39,669; ..."), after a caption of at most this many characters. A Markdown
# grid of pipes and numbers says little to a sentence encoder: the row's label and the column
# headers next to its values are what a question names.
EMBED_CAPTION_CHARS = 300
EMBED_HEADER_CHARS = 60


def row_sentences(table: Table, start: int, end: int, caption: str = "") -> str:
    """The rows ``start``..``end`` of ``table`` as one line each: the first cell, then every
    other non-empty cell after its column header."""
    header = [" ".join(h.split())[:EMBED_HEADER_CHARS] for h in table.header]
    lines = [" ".join(caption.split())[:EMBED_CAPTION_CHARS]] if caption.strip() else []
    for row in table.rows[start:end]:
        cells = [" ".join(c.split()) for c in row]
        label = next((c for c in cells if c), "")
        parts = []
        for i, cell in enumerate(cells):
            if not cell or cell == label:
                continue
            name = header[i] if i < len(header) else ""
            parts.append(f"{name} {cell}".strip())
        lines.append(f"{label}: {'; '.join(parts)}" if parts else label)
    return "\n".join(line for line in lines if line)


def _row_groups(table: Table, budget: int) -> list[tuple[int, int]]:
    """Row ranges [first, last) whose Markdown, header included, fits ``budget`` tokens."""
    header_cost = count_tokens(table.to_markdown([]))
    groups: list[tuple[int, int]] = []
    start, used = 0, header_cost
    for i, row in enumerate(table.rows):
        cost = count_tokens(" | ".join(row)) + 2
        if i > start and used + cost > budget:
            groups.append((start, i))
            start, used = i, header_cost
        used += cost
    groups.append((start, len(table.rows)))
    return groups


def _split_long(text: str, max_tokens: int, *, by_lines: bool = False) -> list[str]:
    """A block longer than ``max_tokens`` split at sentence or line ends (never mid-word).

    Lists and code are split only at line ends and keep their line breaks.
    """
    if count_tokens(text) <= max_tokens:
        return [text]
    joiner = "\n" if by_lines else " "
    units = text.split("\n") if by_lines else re.split(r"(?<=[.!?…])\s+|\n", text)
    pieces: list[str] = []
    current: list[str] = []
    used = 0
    for sentence in units:
        size = count_tokens(sentence)
        if current and used + size > max_tokens:
            pieces.append(joiner.join(current))
            current, used = [], 0
        if size > max_tokens:  # one enormous "sentence": cut by words
            words = sentence.split()
            step = max(1, int(len(words) * max_tokens / size))
            pieces.extend(" ".join(words[i : i + step]) for i in range(0, len(words), step))
            continue
        current.append(sentence)
        used += size
    if current:
        pieces.append(joiner.join(current))
    return [p for p in pieces if p.strip()]


def _bounded(block: Block) -> Block:
    """The block with every over-long token of its text, table and caption cut
    (``split_long_tokens``); the block itself when it has none."""
    table = block.table
    cells = [*table.header, *(c for row in table.rows for c in row)] if table else []
    caption = str(block.meta.get("caption") or "")
    if not any(has_long_token(t) for t in (block.text, caption, *cells)):
        return block
    if table is not None:
        table = replace(
            table,
            header=[split_long_tokens(c) for c in table.header],
            rows=[[split_long_tokens(c) for c in row] for row in table.rows],
        )
    meta = {**block.meta, "caption": split_long_tokens(caption)} if caption else block.meta
    return replace(block, text=split_long_tokens(block.text), table=table, meta=meta)


def _within_ceiling(drafts: list[ChunkDraft]) -> list[ChunkDraft]:
    """The drafts with each one longer than ``CHUNK_MAX_CHARS`` cut into consecutive drafts of
    the same place (``within_ceiling``); a row unit's parent position follows its piece."""
    if all(len(d.text) <= CHUNK_MAX_CHARS for d in drafts):
        return drafts
    out: list[ChunkDraft] = []
    moved: dict[int, int] = {}  # old position -> new position of its first part
    for position, draft in enumerate(drafts):
        moved[position] = len(out)
        for part in within_ceiling(draft.text):
            meta = dict(draft.meta)
            if "embed_text" in meta:
                meta["embed_text"] = meta["embed_text"][:CHUNK_MAX_CHARS]
            out.append(replace(draft, text=part, token_count=count_tokens(part), meta=meta))
    for draft in out:
        if "parent_position" in draft.meta:
            draft.meta["parent_position"] = moved[draft.meta["parent_position"]]
    return out


def _headings_only(document: ParsedDocument) -> list[ChunkDraft]:
    """A document of headings alone (a wiki's section page) becomes one chunk of its titles."""
    headings = [
        (i, b) for i, b in enumerate(document.blocks) if b.kind == "heading" and b.text.strip()
    ]
    if not headings:
        return []
    text = "\n".join(f"{'#' * min(6, max(1, b.level))} {b.text}" for _, b in headings)
    first = headings[0][1]
    return [
        ChunkDraft(
            text=text,
            heading_path=list(first.heading_path),
            section=first.section,
            sections=_unique([b.section for _, b in headings]),
            block_type="text",
            block_start=headings[0][0],
            block_end=headings[-1][0],
            token_count=count_tokens(text),
            page=first.page,
            meta={"headings_only": True},
        )
    ]


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))
