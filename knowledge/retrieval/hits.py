"""Search hits as people and tools see them: document, version, section, link, text.

Shared by ``manage.py search`` and the JSON API, so both print the same thing for a hit.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from django.urls import reverse

from knowledge.models import Chunk
from knowledge.retrieval.fusion import cap_per_document
from knowledge.retrieval.types import Candidate, SearchResult


def chunk_url(document_id: int, version_id: int, chunk_id: int) -> str:
    """The document viewer at this version, scrolled to the chunk and highlighting it."""
    base = reverse("document", args=[document_id])
    return f"{base}?version={version_id}&chunk={chunk_id}#chunk-{chunk_id}"


@dataclass
class Hit:
    rank: int
    chunk_id: int
    document_id: int
    document: str  # the document's title
    source: str
    version_id: int
    version: str  # the version's label ("v3", "2021-03-17 5e1f0a9")
    section: str
    heading_path: list[str]
    block_type: str
    url: str
    score: float
    text: str

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["score"] = round(self.score, 4)
        return data


def describe(candidates: list[Candidate]) -> list[Hit]:
    """The chunks behind ``candidates``, in their order (chunks gone since are left out)."""
    chunks = Chunk.objects.filter(pk__in=[c.chunk_id for c in candidates]).for_reading(
        "document", "version", "source"
    )
    by_id = {chunk.pk: chunk for chunk in chunks}
    hits = []
    for candidate in candidates:
        chunk = by_id.get(candidate.chunk_id)
        if chunk is None:
            continue
        hits.append(
            Hit(
                rank=len(hits) + 1,
                chunk_id=chunk.pk,
                document_id=chunk.document_id,
                document=chunk.document.title,
                source=chunk.source.name,
                version_id=chunk.version_id,
                version=chunk.version.display_label,
                section=chunk.section,
                heading_path=list(chunk.heading_path),
                block_type=chunk.block_type,
                url=chunk_url(chunk.document_id, chunk.version_id, chunk.pk),
                score=candidate.score,
                text=chunk.text,
            )
        )
    return hits


def explained(result: SearchResult, per_document: int) -> list[dict[str, Any]]:
    """Every candidate of ``result`` with each stage's rank and score as its record holds them
    (``Candidate.explain``), what became of it, its document and section: ``search --json
    --explain`` and ``/api/v1/search?explain=1``."""
    outcome = outcomes(result, per_document)
    described = {h.chunk_id: h for h in describe(result.candidates)}
    rows = []
    for c in result.candidates:
        hit = described.get(c.chunk_id)
        rows.append(
            {
                **c.explain(),
                "result": outcome[c.chunk_id],
                "document": hit.document if hit else "",
                "section": hit.section if hit else "",
            }
        )
    return rows


def outcomes(result: SearchResult, per_document: int) -> dict[int, str]:
    """What became of each candidate: a hit, below the minimum score, over the per-document
    cap, or beyond the final N."""
    kept = {c.chunk_id for c in cap_per_document(result.candidates, per_document)}
    outcome = {
        c.chunk_id: "beyond N" if c.chunk_id in kept else "document cap" for c in result.candidates
    }
    for rank, c in enumerate(result.hits, 1):
        outcome[c.chunk_id] = f"hit {rank}"
    for c in result.near_misses:
        outcome[c.chunk_id] = "below minimum"
    return outcome


def result_summary(result: SearchResult) -> dict[str, Any]:
    """What a search did, besides its hits: the words ranked, filters, rerank, cascade tier."""
    return {
        "query": result.query,
        "retrieval_query": result.retrieval_query,
        "filters": result.filters.as_dict(),
        "found": result.found,
        "reranked": result.reranked,
        "rerank_note": result.rerank_note,
        "notice": result.notice,
        "tier": result.tier,
        "browse": result.browse,
        "prf_words": list(result.prf_words),
    }
