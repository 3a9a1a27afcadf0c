"""Parent expansion for the prompt: for the best documents among the hits, the section that
encloses the best hit of each, read from the version's parsed blocks.

A chunk is cut for retrieval (500-1000 tokens); an answer often needs its neighbours - the
rest of the steps of a procedure, the table's caption, the paragraph the list belongs to.
Starting from the hit's own section, the expansion climbs to the parent section while the
whole parent fits in the budget (``KB_EXPAND_CHARS``, ~4000 characters). When even the hit's
own section is too long, a window of whole blocks around the hit is taken instead. The text
is Markdown: headings as ``#`` lines, tables as they were parsed.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings

from knowledge.models import Chunk, DocumentVersion
from knowledge.parsing.base import Block, ParsedDocument
from knowledge.retrieval.types import Candidate


@dataclass
class ExpandedSection:
    """The text around the best hit of one document, for the prompt."""

    document_id: int
    document_title: str
    version_id: int
    version_label: str
    section: str  # the section's number ("2.1"); "" before the first numbered heading
    heading_path: list[str]  # the section's titles, root first
    text: str
    chunk_ids: list[int] = field(default_factory=list)  # chunks of the version wholly inside
    hit_ids: list[int] = field(default_factory=list)  # the hits among them
    truncated: bool = False  # the section was longer than the budget: a window around the hit

    @property
    def heading(self) -> str:
        return " › ".join(self.heading_path)


def expand_chars() -> int:
    return int(getattr(settings, "EXPAND_CHARS", 4000))


def expand(
    hits: Sequence[Candidate], *, documents: int = 2, max_chars: int | None = None
) -> list[ExpandedSection]:
    """The enclosing sections of the best hit of each of the best ``documents`` documents,
    best document first; each text at most ``max_chars`` (default ``KB_EXPAND_CHARS``).

    Documents whose version has no parsed blocks are left out (their chunks speak alone).
    """
    budget = max_chars if max_chars is not None else expand_chars()
    rows = Chunk.objects.filter(pk__in=[h.chunk_id for h in hits]).values(
        "pk", "document_id", "version_id", "block_start", "block_end"
    )
    chunk_rows = {row["pk"]: row for row in rows}
    best: dict[int, dict] = {}  # document id -> the row of its best hit, in hit order
    for hit in hits:
        row = chunk_rows.get(hit.chunk_id)
        if row is not None and row["document_id"] not in best:
            best[row["document_id"]] = row
        if len(best) == documents:
            break
    hit_ids = {h.chunk_id for h in hits}
    sections = []
    for row in best.values():
        section = _expand_one(row, hit_ids, budget)
        if section is not None:
            sections.append(section)
    return sections


# A version's parsed blocks, kept per process by (version, when it became ready): the best
# documents of the questions asked are few, and their parse is the largest thing an answer
# reads (the ТЗ's is over a megabyte of JSON). A reindex stores a new parse and a new time.
_BLOCKS: OrderedDict[tuple[int, object], list[Block]] = OrderedDict()
BLOCKS_KEPT = 32


def _blocks(version: DocumentVersion) -> list[Block]:
    key = (version.pk, version.ready_at)
    found = _BLOCKS.get(key)
    if found is None:
        parsed = (
            DocumentVersion.objects.filter(pk=version.pk).values_list("parsed", flat=True).first()
        )
        found = ParsedDocument.from_dict(parsed).blocks if parsed else []
        _BLOCKS[key] = found
        while len(_BLOCKS) > BLOCKS_KEPT:
            _BLOCKS.popitem(last=False)
    else:
        _BLOCKS.move_to_end(key)
    return found


def _expand_one(row: dict, hit_ids: set[int], budget: int) -> ExpandedSection | None:
    version = (
        DocumentVersion.objects.select_related("document")
        .filter(pk=row["version_id"])
        .only("ready_at", "label", "number", "document__title")
        .first()
    )
    if version is None:
        return None
    blocks = _blocks(version)
    if not blocks:
        return None
    first = min(row["block_start"], len(blocks) - 1)
    last = min(max(row["block_end"], first), len(blocks) - 1)
    start, end, path, truncated = _section_range(blocks, first, last, budget)
    text = _text(blocks[start : end + 1])
    if len(text) > budget:  # one block alone is longer than the budget
        text, truncated = text[:budget].rstrip() + " …", True
    covered = list(
        Chunk.objects.filter(
            version_id=row["version_id"], block_start__gte=start, block_end__lte=end
        )
        .order_by("position")
        .values_list("pk", flat=True)
    )
    if row["pk"] not in covered:
        covered.append(row["pk"])  # the hit is in the text even when only a window of it fits
    heading = blocks[start] if blocks[start].kind == "heading" else None
    return ExpandedSection(
        document_id=row["document_id"],
        document_title=version.document.title,
        version_id=row["version_id"],
        version_label=version.display_label,
        section=heading.section if heading else blocks[first].section,
        heading_path=path,
        text=text,
        chunk_ids=covered,
        hit_ids=[pk for pk in covered if pk in hit_ids],
        truncated=truncated,
    )


def _section_range(
    blocks: list[Block], first: int, last: int, budget: int
) -> tuple[int, int, list[str], bool]:
    """Block range (inclusive) of the largest enclosing section of blocks first..last that fits
    the budget, its heading path, and whether it had to be cut to a window instead."""
    path = list(blocks[first].heading_path)
    best: tuple[int, int, list[str]] | None = None
    for depth in range(len(path), -1, -1):
        prefix = path[:depth]
        start, end = _extent(blocks, first, last, prefix)
        if not _fits(blocks, start, end, budget):
            break
        best = (start, end, prefix)
        if depth == 0:
            break
    if best is not None:
        return (*best, False)
    start, end = _extent(blocks, first, last, path)
    lo, hi = _window(blocks, first, last, start, end, budget)
    return lo, hi, path, True


def _extent(blocks: list[Block], first: int, last: int, prefix: list[str]) -> tuple[int, int]:
    """The contiguous blocks around first..last whose heading path starts with ``prefix``."""

    def inside(block: Block) -> bool:
        return block.heading_path[: len(prefix)] == prefix

    start = first
    while start > 0 and inside(blocks[start - 1]):
        start -= 1
    end = last
    while end + 1 < len(blocks) and inside(blocks[end + 1]):
        end += 1
    return start, end


def _window(
    blocks: list[Block], first: int, last: int, start: int, end: int, budget: int
) -> tuple[int, int]:
    """Whole blocks around first..last within start..end, grown one block at a time on
    alternate sides while the text fits."""
    lo, hi = first, last
    grew = True
    while grew:
        grew = False
        if lo > start and _fits(blocks, lo - 1, hi, budget):
            lo, grew = lo - 1, True
        if hi < end and _fits(blocks, lo, hi + 1, budget):
            hi, grew = hi + 1, True
    return lo, hi


def _fits(blocks: list[Block], lo: int, hi: int, budget: int) -> bool:
    """len(_text(blocks[lo:hi + 1])) <= budget, without building a long section's text."""
    size = -2
    for block in blocks[lo : hi + 1]:
        part = _render(block)
        if part.strip():
            size += len(part) + 2
            if size > budget:
                return False
    return True


def _render(block: Block) -> str:
    if block.kind == "heading":
        number = f"{block.section} " if block.section else ""
        return f"{'#' * max(1, min(block.level, 6))} {number}{block.text}"
    return block.text


def _text(blocks: Sequence[Block]) -> str:
    return "\n\n".join(part for part in map(_render, blocks) if part.strip())
