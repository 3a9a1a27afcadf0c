"""What goes into a search and what comes out (shared by chat, CLI, API and MCP)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from knowledge.retrieval.weights import Fusion, Hits, Prf, Retrieval


@dataclass(frozen=True)
class Filters:
    """Restrictions applied in SQL before ranking. Empty lists mean "no restriction". Frozen:
    a step that narrows them makes new ones (``dataclasses.replace``)."""

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


LISTS = ("dense", "lexical", "sparse")


@dataclass(frozen=True)
class SearchOptions:
    """How one search ranks; every group defaults to the configured weights
    (``knowledge.retrieval.weights``): ``SearchOptions(hits=Hits(k=5))``."""

    hits: Hits = field(default_factory=Hits)
    lists: tuple[str, ...] = LISTS  # the lists searched: dense, lexical, sparse
    retrieval: Retrieval = field(default_factory=Retrieval)
    fusion: Fusion = field(default_factory=Fusion)
    prf: Prf = field(default_factory=Prf)
    # The minimum score of this search (-1: none); None: the configured gate (weights.Gate).
    min_score: float | None = None
    rerank: bool = True  # False: no rerank step even with a reranker configured
    # False: the second vectors (e5) are not read: no meaning scores, no question vector in e5
    meaning: bool = True
    # True: an answer is built from the hits (its check and its quotes read the second vectors),
    # so the question is put in e5's space, and the ranking reads that too
    # (``Fusion.meaning_weight``). A search that only lists hits (the API, MCP, the command
    # line) skips that model call (a quarter of an answer's CPU, benchmarks/stages.py) and ranks
    # by words and the first vectors, unless ``rank_by_meaning`` asks for e5 there too.
    answer: bool = False
    rank_by_meaning: bool = False
    route: bool = True  # False: the question is searched as it is, no filters read from it


@dataclass(frozen=True)
class Place:
    """A candidate's place in one stage: its 1-based rank there (None: outside a list's first
    K, scored all the same) and the stage's score."""

    rank: int | None
    score: float


@dataclass(frozen=True)
class Calibrated:
    """The chunk's own score on the scale of every question (``fusion.calibrated``)."""

    lexical_norm: float  # BM25 / the question's best possible BM25, in [0, 1]
    score: float  # dense_weight x cosine + (1 - dense_weight) x lexical_norm


@dataclass(frozen=True)
class Candidate:
    """One chunk as the ranking stages saw it. Each stage adds its own field to a new record
    (``dataclasses.replace``) and reads those of the stages before it; none rewrites another's.

    dense, lexical, sparse: the lists (``ranking``); meaning: the best unit's cosine in e5's space
    (``ranking._meaning``); calibrated: the chunk's own score, the
    same scale in every question (``fusion.calibrated``), what the minimum score reads without
    a reranker; label, document and name evidence: for the ranking only (``labels``,
    ``documents``); fused: the ranking score and order; prf: the order after the PRF pass
    (``prf``); rerank: the cross-encoder's; final: the place in the ranked list a search
    returns and the score its minimum applies to (``search``).
    """

    found_id: int  # the chunk the lists found: a row unit stands for its table piece (piece_id)
    document_id: int = 0
    piece_id: int | None = None  # the table piece a row unit found (``fusion.collapse_units``)
    freshness: float = 0.0  # epoch seconds of the version, for tie-breaks in "fresh" sources
    prefer_fresh: bool = False
    dense: Place | None = None  # cosine similarity
    lexical: Place | None = None  # BM25
    sparse: Place | None = None  # inner product of the bge-m3 sparse weights
    # The cosine of the chunk's unit (sentence, item, row) closest to the question in e5's
    # space (its second vectors); None while the chunk has none.
    meaning: Place | None = None
    calibrated: Calibrated | None = None
    label_evidence: float | None = None  # a row label the question names (retrieval.labels)
    document_evidence: float | None = None  # the document's BM25 / the best candidate's
    name_evidence: float | None = None  # the same, for the question's named words only
    fused: Place | None = None
    prf: Place | None = None
    rerank: Place | None = None
    final: Place | None = None

    @property
    def chunk_id(self) -> int:
        """The chunk this candidate shows and cites: a row unit's table piece, else itself."""
        return self.found_id if self.piece_id is None else self.piece_id

    @property
    def unit_id(self) -> int | None:
        """The row unit that found the table piece this candidate shows (None: no unit)."""
        return None if self.piece_id is None else self.found_id

    @property
    def own_score(self) -> float:
        """The chunk's own calibrated score (0 before the calibration)."""
        return self.calibrated.score if self.calibrated is not None else 0.0

    @property
    def score(self) -> float:
        """The final score: what the minimum score reads and a hit shows (0 before the last
        stage)."""
        return self.final.score if self.final is not None else 0.0

    def explain(self) -> dict[str, Any]:
        """Every stage's rank and score, read off the record (``search --explain``, the
        journal's sources)."""
        data: dict[str, Any] = {
            "chunk_id": self.chunk_id,
            "unit_id": self.unit_id,
            "document_id": self.document_id,
        }
        for stage in ("dense", "lexical", "sparse"):
            data.update(_place(stage, getattr(self, stage)))
        data.update(_place("meaning", self.meaning))
        data["lexical_norm"] = self.calibrated.lexical_norm if self.calibrated else None
        data["calibrated"] = self.calibrated.score if self.calibrated else None
        for evidence in ("label_evidence", "document_evidence", "name_evidence"):
            data[evidence] = getattr(self, evidence)
        for stage in ("fused", "prf", "rerank", "final"):
            data.update(_place(stage, getattr(self, stage)))
        data["score"] = self.score
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in data.items()}


def _place(stage: str, place: Place | None) -> dict[str, Any]:
    return {
        f"{stage}_rank": place.rank if place else None,
        f"{stage}_score": place.score if place else None,
    }


@dataclass(frozen=True)
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
    # The question in e5's space (None: no second vectors), and for each candidate chunk with
    # second vectors the cosine of each of its units to it, in the units' order: the answer
    # check's evidence and the extractive answer's choice of what to quote.
    meaning_vector: Any = None
    unit_scores: dict[int, Any] = field(default_factory=dict)

    @property
    def found(self) -> bool:
        return bool(self.hits)
