"""From search hits to numbered sources and the messages sent to the LLM."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q
from django.urls import reverse

from chat.answer.extractive import Passage, best_quote
from chat.answer.prompts import PROFILE_BLOCK, SOURCE_ENTRY, SOURCES_BLOCK, SYSTEM_RULES, fence
from knowledge.ingest.second import stored_vectors
from knowledge.models import Chunk
from knowledge.question import Question
from knowledge.retrieval import SearchResult, expand
from knowledge.text import matching


@dataclass
class PromptSource:
    number: int
    chunk_id: int | None
    document_id: int
    version_id: int
    title: str
    version_label: str
    heading: str
    section: str
    url: str
    text: str  # what the LLM reads (the chunk, or its enclosing section for the best documents)
    quote: str  # a short excerpt shown under the answer
    score: float
    scores: dict = field(default_factory=dict)
    note: str = ""

    @property
    def passage(self) -> Passage:
        return Passage(
            self.number, self.title, self.heading, self.chunk_text, self.is_table, self.meaning
        )

    chunk_text: str = ""
    is_table: bool = False
    # The cosine of each unit of ``chunk_text`` (knowledge.units) to the question in e5's
    # space; empty while the chunk has no second vectors.
    meaning: tuple[float, ...] = ()


def chunk_url(chunk: Chunk) -> str:
    base = reverse("document", args=[chunk.document_id])
    return f"{base}?version={chunk.version_id}&chunk={chunk.pk}#chunk-{chunk.pk}"


def item_url(item: Chunk) -> str:
    """A checklist item: the viewer highlights its row and scrolls to it."""
    base = reverse("document", args=[item.document_id])
    first_row = (item.meta.get("table_rows") or [1])[0]
    anchor = f"b-{item.block_start}-r{first_row}"
    return f"{base}?version={item.version_id}&chunk={item.pk}#{anchor}"


# Where in a workbook a source is; a fixed text, so in the question's language.
_SHEET_ROWS = {
    "ru": ("Лист «{sheet}», строка {first}", "Лист «{sheet}», строки {first}–{last}"),
    "en": ("Sheet «{sheet}», row {first}", "Sheet «{sheet}», rows {first}–{last}"),
}


def sheet_location(chunk: Chunk, language: str) -> str:
    """ "Лист «Регистрация», строка 9" for a chunk of a spreadsheet; "" for other chunks."""
    if not chunk.sheet or chunk.row_start is None:
        return ""
    one, many = _SHEET_ROWS.get(language, _SHEET_ROWS["en"])
    last = chunk.row_end if chunk.row_end is not None else chunk.row_start
    text = one if last == chunk.row_start else many
    return text.format(sheet=chunk.sheet, first=chunk.row_start, last=last)


def _items(hits, question: Question) -> dict[int, Chunk]:
    """Checklist table piece id -> the one item (row unit) it is cited as, for the pieces a
    question points at one row of: the row sharing more of the question's words (lemmas,
    ``knowledge.text.matching``) than any other row, or, when no row shares any, the row
    unit whose meaning found the piece. A question about the whole section (its words in every
    row alike) is cited as the piece."""
    pieces = {
        (c.version_id, c.position): c.pk
        for c in Chunk.objects.filter(pk__in=[hit.chunk_id for hit in hits], meta__checklist=True)
        .exclude(block_type=Chunk.BlockType.ROW)
        .only("pk", "version_id", "position")
    }
    if not pieces:
        return {}
    wanted = Q()
    for version_id, position in pieces:
        wanted |= Q(version_id=version_id, meta__parent_position=position)
    asked = {term.lemma for term in question.terms}
    rows: dict[int, list[tuple[int, Chunk]]] = {}
    for row in Chunk.objects.filter(wanted, block_type=Chunk.BlockType.ROW):
        piece = pieces.get((row.version_id, row.meta.get("parent_position")))
        if piece is not None:
            # Only the row's own line: caption and header are the same in every item.
            line = row.text.rstrip().rsplit("\n", 1)[-1]
            rows.setdefault(piece, []).append((len(asked & matching.text_lemmas(line)), row))
    found = {hit.chunk_id: hit.unit_id for hit in hits if hit.unit_id}
    items: dict[int, Chunk] = {}
    for piece, scored in rows.items():
        scored.sort(key=lambda pair: -pair[0])
        best = scored[0][0]
        if best and (len(scored) == 1 or best > scored[1][0]):
            items[piece] = scored[0][1]
        elif not best and piece in found:
            items[piece] = next((r for _, r in scored if r.pk == found[piece]), None)
    return {piece: item for piece, item in items.items() if item is not None}


def build_sources(result: SearchResult, *, reading: Question) -> list[PromptSource]:
    """Number the hits [1]..[N] in rank order; the prompt text is the chunk, expanded to its
    enclosing section for the best two documents (up to KB_EXPAND_CHARS each).

    A checklist's table piece is cited as one item when the question points at one (its row
    unit found the piece, or one row shares the most words with the question): the row, with
    the header row, is the quote and the passage, and the link and location name its row.
    """
    ids = [hit.chunk_id for hit in result.hits]
    chunks = {c.pk: c for c in Chunk.objects.filter(pk__in=ids).for_reading("document", "version")}
    items = _items(result.hits, reading)
    expanded = _expanded_texts(result)
    cited_ids = [(items.get(c.pk) or c).pk for c in chunks.values()]
    meaning = unit_cosines(result, cited_ids)
    language = reading.language
    sources = []
    for hit in result.hits:
        chunk = chunks.get(hit.chunk_id)
        if chunk is None:
            continue
        item = items.get(chunk.pk)
        cited = item or chunk
        heading = " › ".join(chunk.heading_path)
        if location := sheet_location(cited, language):
            heading = f"{heading} — {location}" if heading else location
        number = len(sources) + 1
        sources.append(
            PromptSource(
                number=number,
                chunk_id=chunk.pk,
                document_id=chunk.document_id,
                version_id=chunk.version_id,
                title=chunk.document.title,
                version_label=chunk.version.display_label,
                heading=heading,
                section=chunk.section,
                url=item_url(item) if item else chunk_url(chunk),
                text=expanded.get(chunk.pk, chunk.text),
                quote=best_quote(reading, cited.text, limit=280),
                score=hit.score,
                scores=hit.explain(),
                chunk_text=cited.text,
                is_table=chunk.block_type in ("table", "test_case"),
                meaning=tuple(float(x) for x in meaning.get(cited.pk, ())),
            )
        )
    return sources


def unit_cosines(result: SearchResult, chunk_ids: list[int]) -> dict:
    """The cosine of each unit of these chunks to the question in e5's space: the search's own
    for its candidates, read from the second vectors for the others (a checklist item, a table
    piece its row unit found)."""
    if result.meaning_vector is None:
        return {}
    found = {i: result.unit_scores[i] for i in chunk_ids if i in result.unit_scores}
    missing = [i for i in chunk_ids if i not in found]
    for i, vectors in stored_vectors(missing).items():
        found[i] = vectors @ result.meaning_vector
    return found


def _expanded_texts(result: SearchResult) -> dict[int, str]:
    texts: dict[int, str] = {}
    for section in expand(result.hits):
        for chunk_id in section.chunk_ids:
            texts.setdefault(chunk_id, section.text)
    return texts


def source_entry(source: PromptSource, text: str) -> str:
    """One numbered source of the prompt: its title, heading and version, and ``text`` fenced."""
    version = f" (version {source.version_label})" if source.version_label else ""
    return SOURCE_ENTRY.format(
        number=source.number,
        # Titles and headings come from documents too: neutralised like their text.
        title=fence(" ".join(source.title.split())),
        heading=fence(" ".join((source.heading or "—").split())),
        version=version,
        text=fence(text),
    )


def full_texts(sources: list[PromptSource]) -> dict[int, str]:
    """Each source's whole text (its section, or its chunk when an earlier source already
    brings the same section): what is sent when the context holds it all."""
    texts: dict[int, str] = {}
    seen: set[str] = set()
    for source in sources:
        texts[source.number] = source.text if source.text not in seen else source.chunk_text
        seen.add(source.text)
    return texts


def build_messages(
    question: str,
    sources: list[PromptSource],
    history: list[tuple[str, str, str]],
    *,
    profile,
    refusal: str,
    texts: dict[int, str] | None = None,
) -> list[dict[str, str]]:
    """System instruction first, the recent history, then the sources (fenced data) and the
    question. ``texts``: what is sent of each source by number (``chat.answer.budget``; a source
    missing from it is left out); None: every source whole."""
    system = SYSTEM_RULES.format(refusal=refusal)
    if profile is not None and profile.system_instruction.strip():
        system += PROFILE_BLOCK.format(
            name=profile.name, instruction=profile.system_instruction.strip()
        )
    messages = [{"role": "system", "content": system}]
    for past_question, past_answer, _ in history:
        messages.append({"role": "user", "content": past_question})
        messages.append({"role": "assistant", "content": past_answer[:2000]})
    texts = full_texts(sources) if texts is None else texts
    entries = [source_entry(s, texts[s.number]) for s in sources if s.number in texts]
    messages.append(
        {
            "role": "user",
            "content": SOURCES_BLOCK.format(sources="\n\n".join(entries), question=question),
        }
    )
    return messages
