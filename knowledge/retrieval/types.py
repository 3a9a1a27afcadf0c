"""What goes into a search and what comes out (shared by chat, CLI, API and MCP)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Filters:
    """Restrictions applied in SQL before ranking. Empty lists mean "no restriction"."""

    sections: list[str] = field(default_factory=list)  # "2.1" matches 2.1 and 2.1.*
    block_types: list[str] = field(default_factory=list)
    source_ids: list[int] = field(default_factory=list)
    document_ids: list[int] = field(default_factory=list)
    version_ids: list[int] = field(default_factory=list)  # named versions: searched even if old

    def is_empty(self) -> bool:
        return not (
            self.sections
            or self.block_types
            or self.source_ids
            or self.document_ids
            or self.version_ids
        )

    def merged(self, other: Filters) -> Filters:
        return Filters(
            sections=self.sections or other.sections,
            block_types=self.block_types or other.block_types,
            source_ids=self.source_ids or other.source_ids,
            document_ids=self.document_ids or other.document_ids,
            version_ids=self.version_ids or other.version_ids,
        )

    def as_dict(self) -> dict[str, list]:
        return {k: v for k, v in self.__dict__.items() if v}


@dataclass
class Candidate:
    """One chunk as the ranking stages saw it; ranks are 1-based, None when absent from a list."""

    chunk_id: int
    document_id: int = 0
    dense_rank: int | None = None
    dense_score: float | None = None  # cosine similarity
    lexical_rank: int | None = None
    lexical_score: float | None = None  # BM25
    lexical_norm: float | None = None  # BM25 / the query's best possible BM25, in [0, 1]
    sparse_rank: int | None = None
    sparse_score: float | None = None
    fused_rank: int | None = None
    fused_score: float = 0.0
    rerank_rank: int | None = None
    rerank_score: float | None = None
    score: float = 0.0  # the final, calibrated score the threshold applies to
    document_score: float | None = None  # the document's BM25 / the best candidate document's
    unit_id: int | None = None  # the row unit that found this table piece
    label_score: float | None = None  # a row label the question names (retrieval.labels)
    freshness: float = 0.0  # epoch seconds of the version, for tie-breaks in "fresh" sources
    prefer_fresh: bool = False

    def explain(self) -> dict[str, Any]:
        return {
            k: (round(v, 4) if isinstance(v, float) else v)
            for k, v in self.__dict__.items()
            if k not in ("freshness", "prefer_fresh")
        }


@dataclass
class SearchResult:
    query: str
    retrieval_query: str  # the question with filter phrases taken out
    filters: Filters
    hits: list[Candidate]  # the final N, best first, passing the minimum score
    candidates: list[Candidate]  # everything ranked, before cap and threshold (for explain)
    near_misses: list[Candidate]  # best candidates below the minimum score (reformulation tiles)
    reranked: bool
    rerank_note: str
    timings: dict[str, float]
    tier: int | None = None  # the cascade tier the hits came from
    browse: bool = False  # no words left besides filters: chunks listed in document order
    notice: str = ""  # e.g. the embeddings server is down: word search only
    # The sources the user may read (None: every source): statistics over the evidence (the
    # answerability check) must count these only, as the search did.
    visible_source_ids: list[int] | None = None
    # Lexemes of the best documents the candidates were re-ordered by (query expansion from
    # the first results, PRF: ``knowledge.retrieval.prf``); empty when there was no PRF pass.
    prf_words: list[str] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return bool(self.hits)
