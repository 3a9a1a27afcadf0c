"""Retrieval's front door: hybrid search over the knowledge base, and what the other rooms read
of it. Other rooms import from here (and the tuned weights from ``knowledge.retrieval.weights``),
never the modules inside, which may change (a contract in ``pyproject.toml`` holds it so)."""

from __future__ import annotations

from knowledge.retrieval.expansion import expand
from knowledge.retrieval.fusion import meaning_score
from knowledge.retrieval.hits import (
    Hit,
    chunk_url,
    describe,
    explained,
    outcomes,
    result_summary,
)
from knowledge.retrieval.hybrid import search
from knowledge.retrieval.rerank import get_reranker
from knowledge.retrieval.sql import unknown_words
from knowledge.retrieval.types import Candidate, Filters, Place, SearchOptions, SearchResult
from knowledge.retrieval.vocabulary import chunk_frequencies, common_names

__all__ = [
    "Candidate", "Filters", "Hit", "Place", "SearchOptions", "SearchResult", "chunk_frequencies",
    "chunk_url", "common_names", "describe", "expand", "explained", "get_reranker",
    "meaning_score", "outcomes", "result_summary", "search", "unknown_words",
]  # fmt: skip
