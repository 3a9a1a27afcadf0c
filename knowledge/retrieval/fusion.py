"""Fusion and selection maths, pure Python (no database): unit-tested on their own.

Two fusions are available. Reciprocal rank fusion (RRF) uses ranks only. The default,
"calibrated", is a convex combination of scores that mean the same thing in every query:
the cosine similarity of the dense model, and BM25 divided by the best BM25 the question could
reach (so 1.0 means every word of the question matched as well as it can; a word that no chunk
contains is part of that ceiling too, see ``question_ceiling``). Scores that mean the same in
every query are what a minimum-score threshold (the honest refusal) needs, and on our benchmark
the combination is not worse than its best input where plain RRF was.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from knowledge.retrieval.types import Candidate


def rrf(
    rankings: Sequence[Sequence[int]], *, k: int = 60, weights: Sequence[float] | None = None
) -> dict[int, float]:
    """Reciprocal rank fusion: sum over lists of weight / (k + rank)."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return scores


def calibrated(dense: float | None, lexical_norm: float | None, *, dense_weight: float) -> float:
    """Convex combination of cosine similarity and normalised BM25 (missing counts as 0)."""
    return dense_weight * max(0.0, dense or 0.0) + (1.0 - dense_weight) * (lexical_norm or 0.0)


def bm25_idf(df: int, n: int) -> float:
    """BM25's IDF, never negative (Lucene's variant)."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


# How much a question word that no chunk contains weighs in the question's ceiling, in units of
# the idf of the rarest word the chunks do contain (one chunk). Above 1: a question about things
# the knowledge base never mentions must not pass on its other, common words. 2.5 separates
# answerable from out-of-domain questions best on benchmarks/refusal.py, with the XQuAD MRR of
# benchmarks/retrieval.py unchanged.
ABSENT_WORD_WEIGHT = 2.5


def question_ceiling(
    words: Iterable[Iterable[str]],
    idf: Mapping[str, float],
    absent_idf: float,
    *,
    absent_weight: float = ABSENT_WORD_WEIGHT,
) -> float:
    """The best BM25 (over k1 + 1) a chunk could reach for the question's words: each word at
    the idf of its best lexeme; a word whose lexemes no chunk has at ``absent_weight`` times
    ``absent_idf``. Normalised by it, BM25 says how much of what the question asks for a chunk
    holds - including the words nothing holds."""
    total = 0.0
    for lexemes in words:
        known = [idf[x] for x in lexemes if x in idf]
        total += max(known) if known else absent_weight * absent_idf
    return total


def cap_per_document(ranked: Sequence[Candidate], per_document: int) -> list[Candidate]:
    """Keep ranking order, at most ``per_document`` chunks of any one document."""
    seen: dict[int, int] = {}
    kept: list[Candidate] = []
    for candidate in ranked:
        count = seen.get(candidate.document_id, 0)
        if count < per_document:
            kept.append(candidate)
            seen[candidate.document_id] = count + 1
    return kept


# Chunks of sources that prefer fresh documents match equally when their scores are this
# close: two closed tickets with the same fix still differ by their key and resolution date,
# which moves their scores in the third decimal. Anywhere else only true ties count.
FRESH_TIE = 0.01


def order(
    candidates: Iterable[Candidate],
    *,
    tie: float = 1e-6,
    fresh_tie: float = FRESH_TIE,
    by: str = "score",
) -> list[Candidate]:
    """Best ``by`` (a score attribute) first; scores within ``tie`` of each other go to the
    fresher chunk when its source asks for freshness, and so do scores within ``fresh_tie`` of
    each other when every chunk among them comes from such a source."""
    ranked = sorted(candidates, key=lambda c: -getattr(c, by))
    result: list[Candidate] = []
    i = 0
    while i < len(ranked):
        best = getattr(ranked[i], by)
        fresh = ranked[i].prefer_fresh
        j = i + 1
        while j < len(ranked):
            fresh = fresh and ranked[j].prefer_fresh
            if best - getattr(ranked[j], by) > (max(tie, fresh_tie) if fresh else tie):
                break
            j += 1
        group = ranked[i:j]
        if len(group) > 1 and any(c.prefer_fresh for c in group):
            group.sort(key=lambda c: -c.freshness)
        result.extend(group)
        i = j
    return result


def select(
    ranked: Sequence[Candidate],
    *,
    n: int,
    per_document: int,
    min_score: float,
    follower_share: float = 1.0,
    spread: int = 0,
    label_weight: float = 0.0,
) -> tuple[list[Candidate], list[Candidate]]:
    """The final hits (capped, at most ``n``, the first ``spread`` documents kept: see
    ``spread_documents``) and the near misses.

    The minimum score is the gate of the honest refusal: no hit at all unless some candidate
    reaches it. Once one does, the others need ``follower_share`` of it: the question is in the
    knowledge base's domain, and a page described in other words than the question's often
    scores a little under the gate while it is the one asked about. For that share a row the
    question names counts with its label evidence (``label_weight`` as in the ranking): a
    table row of figures shares few words with any question (benchmarks/retrieval_sec.py);
    the gate itself reads the chunk's own score only."""
    capped = cap_per_document(ranked, per_document)
    if not any(c.score >= min_score for c in capped):
        return [], capped[:n]
    floor = min_score * follower_share if min_score > 0 else min_score
    follows = [c.score + label_bonus(c, label_weight) >= floor for c in capped]
    hits = spread_documents([c for c, ok in zip(capped, follows, strict=True) if ok], n, spread)
    misses = [c for c, ok in zip(capped, follows, strict=True) if not ok][:n]
    return hits, misses


def label_bonus(candidate: Candidate, weight: float) -> float:
    """What a row label the question names adds to a candidate (``knowledge.retrieval.labels``):
    ``weight`` x its label evidence x its document's share of the document evidence (1 where
    no document evidence was computed), so that Apple's "Inventories" row counts little for a
    question about NVIDIA. The ranking adds it to ``fused_score``, the follower floor reads it
    (``select``); the minimum score never does."""
    if not candidate.label_score:
        return 0.0
    share = candidate.document_score if candidate.document_score is not None else 1.0
    return weight * candidate.label_score * share


# A document keeps a place in the hits (``spread_documents``) only when its best chunk ranks
# within this many times the number of hits: one found far down the list is no contender.
SPREAD_WINDOW = 2


def spread_documents(ranked: Sequence[Candidate], n: int, documents: int) -> list[Candidate]:
    """The best ``n`` of ``ranked``, in its order, always holding the best chunk of each of its
    first ``documents`` documents (among its first ``SPREAD_WINDOW * n``): those documents
    keep their place and the other places go by rank, so the one document a question is
    about can show more of its passages (the figure of a financial table is often in its
    third or fourth chunk) without pushing the next documents out of the list. At least one
    place always goes by rank (a short list, k 3, is not all first chunks).
    ``documents`` 0: the first ``n``, whatever they hold."""
    if documents <= 0 or len(ranked) <= n:
        return list(ranked[:n])
    kept: set[int] = set()
    seen: set[int] = set()
    for i, candidate in enumerate(ranked[: SPREAD_WINDOW * n]):
        if len(seen) == min(documents, n - 1):
            break
        if candidate.document_id not in seen:
            seen.add(candidate.document_id)
            kept.add(i)
    for i in range(len(ranked)):
        if len(kept) >= n:
            break
        kept.add(i)
    return [ranked[i] for i in sorted(kept)]


def collapse_units(ranked: Sequence[Candidate], parents: Mapping[int, int]) -> list[Candidate]:
    """Row units stand for the table piece they belong to: each piece once, at the rank and
    with the scores of the best of itself and its units (``unit_id`` says which unit)."""
    seen: set[int] = set()
    kept: list[Candidate] = []
    for candidate in ranked:
        piece = parents.get(candidate.chunk_id, candidate.chunk_id)
        if piece in seen:
            continue
        seen.add(piece)
        if piece != candidate.chunk_id:
            candidate.unit_id, candidate.chunk_id = candidate.chunk_id, piece
        kept.append(candidate)
    if len(kept) < len(ranked):
        for rank, candidate in enumerate(kept, 1):
            candidate.fused_rank = rank  # the ranks of the list as it now stands
    return kept
