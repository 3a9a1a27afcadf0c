"""From search hits to numbered sources and the messages sent to the LLM."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.urls import reverse

from chat.extractive import Passage, best_quote
from chat.prompts import PROFILE_BLOCK, SOURCE_ENTRY, SOURCES_BLOCK, SYSTEM_RULES
from knowledge.models import Chunk
from knowledge.retrieval.types import SearchResult


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
        return Passage(self.number, self.title, self.heading, self.chunk_text, self.is_table)

    chunk_text: str = ""
    is_table: bool = False


def chunk_url(chunk: Chunk) -> str:
    base = reverse("document", args=[chunk.document_id])
    return f"{base}?version={chunk.version_id}&chunk={chunk.pk}#chunk-{chunk.pk}"


def build_sources(result: SearchResult, *, question: str) -> list[PromptSource]:
    """Number the hits [1]..[N] in rank order; the prompt text is the chunk, expanded to its
    enclosing section for the best two documents (up to KB_EXPAND_CHARS each)."""
    ids = [hit.chunk_id for hit in result.hits]
    chunks = {
        c.pk: c for c in Chunk.objects.filter(pk__in=ids).select_related("document", "version")
    }
    expanded = _expanded_texts(result)
    sources = []
    for hit in result.hits:
        chunk = chunks.get(hit.chunk_id)
        if chunk is None:
            continue
        number = len(sources) + 1
        sources.append(
            PromptSource(
                number=number,
                chunk_id=chunk.pk,
                document_id=chunk.document_id,
                version_id=chunk.version_id,
                title=chunk.document.title,
                version_label=chunk.version.display_label,
                heading=" › ".join(chunk.heading_path),
                section=chunk.section,
                url=chunk_url(chunk),
                text=expanded.get(chunk.pk, chunk.text),
                quote=best_quote(question, chunk.text, limit=280),
                score=hit.score,
                scores=hit.explain(),
                chunk_text=chunk.text,
                is_table=chunk.block_type in ("table", "test_case"),
            )
        )
    return sources


def _expanded_texts(result: SearchResult) -> dict[int, str]:
    try:
        from knowledge.retrieval.expand import expand
    except ImportError:  # parent expansion not available: the chunks alone go to the prompt
        return {}
    texts: dict[int, str] = {}
    for section in expand(result.hits):
        for chunk_id in section.chunk_ids:
            texts.setdefault(chunk_id, section.text)
    return texts


def _fence(text: str) -> str:
    # A document cannot close the fence early and smuggle text out of the data block.
    return text.replace(">>>", "> > >").replace("<<<", "< < <").replace("</sources>", "</ sources>")


def build_messages(
    question: str,
    sources: list[PromptSource],
    history: list[tuple[str, str, str]],
    *,
    profile,
    refusal: str,
) -> list[dict[str, str]]:
    """System instruction first, the recent history, then the sources (fenced data) and the question."""
    system = SYSTEM_RULES.format(refusal=refusal)
    if profile is not None and profile.system_instruction.strip():
        system += PROFILE_BLOCK.format(
            name=profile.name, instruction=profile.system_instruction.strip()
        )
    messages = [{"role": "system", "content": system}]
    for past_question, past_answer, _ in history:
        messages.append({"role": "user", "content": past_question})
        messages.append({"role": "assistant", "content": past_answer[:2000]})
    entries = []
    seen_texts: set[str] = set()
    for source in sources:
        text = source.text if source.text not in seen_texts else source.chunk_text
        seen_texts.add(text)
        version = f" (version {source.version_label})" if source.version_label else ""
        entries.append(
            SOURCE_ENTRY.format(
                number=source.number,
                # Titles and headings come from documents too: neutralised like their text.
                title=_fence(" ".join(source.title.split())),
                heading=_fence(" ".join((source.heading or "—").split())),
                version=version,
                text=_fence(text),
            )
        )
    messages.append(
        {
            "role": "user",
            "content": SOURCES_BLOCK.format(sources="\n\n".join(entries), question=question),
        }
    )
    return messages
