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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from knowledge.retrieval.types import Candidate, Place
from knowledge.retrieval.weights import Fusion, Hits, Meaning, weights


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


def fuse(candidates: Sequence[Candidate], lists: Sequence[str], weights: Fusion) -> list[Candidate]:
    """Each candidate's ranking score and place (``fused``), best first: its calibrated score
    with the evidence at its weights (``fused_score``), or reciprocal rank fusion over
    ``lists`` (``weights.method`` "rrf")."""
    if weights.method == "rrf" and len(lists) > 1:
        scores = rrf([list_order(candidates, name) for name in lists], k=weights.rrf_k)
        ranked = sorted(candidates, key=lambda c: -scores.get(c.found_id, 0.0))
    else:
        scores = {c.found_id: fused_score(c, weights) for c in candidates}
        ranked = order(candidates, lambda c: scores[c.found_id])
    return [
        replace(c, fused=Place(rank, scores.get(c.found_id, 0.0)))
        for rank, c in enumerate(ranked, 1)
    ]


def list_order(candidates: Iterable[Candidate], name: str) -> list[int]:
    """The found chunks' ids in the order of the list ``name`` (those in its first K)."""
    placed = [(c, getattr(c, name)) for c in candidates]
    listed = [(place.rank, c.found_id) for c, place in placed if place and place.rank]
    return [i for _, i in sorted(listed, key=lambda x: x[0])]


def fused_score(candidate: Candidate, weights: Fusion) -> float:
    """The ranking score: the chunk's own calibrated score plus the document and name
    evidence and a named row's ``label_bonus`` at their weights (never what the minimum
    score reads)."""
    c = candidate
    score = c.own_score
    if c.document_evidence is not None:
        score = score + weights.document_weight * c.document_evidence
    if c.name_evidence is not None:
        score += weights.name_weight * c.name_evidence
    if weights.label_weight > 0:
        score += label_bonus(c, weights.label_weight)
    if weights.meaning_weight > 0 and c.meaning is not None and c.name_evidence is None:
        # Only for a question that names nothing the knowledge base knows: one that names a
        # company or a product is ranked by the name (``name_evidence``), and e5 does not tell
        # one filing's "Inventories" row from another's (benchmarks/experiments/first_stage.py).
        score += weights.meaning_weight * meaning_score(c.meaning.score)
    return score


def meaning_score(cosine: float, meaning: Meaning | None = None) -> float:
    """A cosine of e5 on the 0-1 scale of ``weights.Meaning`` (floor 0, ceiling 1)."""
    meaning = meaning or weights().meaning
    span = max(1e-6, meaning.ceiling - meaning.floor)
    return min(1.0, max(0.0, (cosine - meaning.floor) / span))


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
    by: Callable[[Candidate], float],
    *,
    tie: float = 1e-6,
    fresh_tie: float = FRESH_TIE,
) -> list[Candidate]:
    """Best ``by`` (a stage's score) first; scores within ``tie`` of each other go to the
    fresher chunk when its source asks for freshness, and so do scores within ``fresh_tie`` of
    each other when every chunk among them comes from such a source."""
    ranked = sorted(candidates, key=lambda c: -by(c))
    result: list[Candidate] = []
    i = 0
    while i < len(ranked):
        best = by(ranked[i])
        fresh = ranked[i].prefer_fresh
        j = i + 1
        while j < len(ranked):
            fresh = fresh and ranked[j].prefer_fresh
            if best - by(ranked[j]) > (max(tie, fresh_tie) if fresh else tie):
                break
            j += 1
        group = ranked[i:j]
        if len(group) > 1 and any(c.prefer_fresh for c in group):
            group.sort(key=lambda c: -c.freshness)
        result.extend(group)
        i = j
    return result


@dataclass(frozen=True)
class Threshold:
    """The minimum score of a search (the honest refusal's gate) and the floor of the hits
    after the first: ``follower_share`` of it, a named row counting with its label evidence
    at ``label_weight``."""

    min_score: float
    follower_share: float = 1.0
    label_weight: float = 0.0


def select(
    ranked: Sequence[Candidate], hits: Hits, threshold: Threshold
) -> tuple[list[Candidate], list[Candidate]]:
    """The final hits (at most ``hits.per_document`` of a document, at most ``hits.k``, the
    first ``hits.spread`` documents kept: see ``spread_documents``) and the near misses.

    The minimum score is the gate of the honest refusal: no hit at all unless some candidate
    reaches it. Once one does, the others need ``follower_share`` of it: the question is in the
    knowledge base's domain, and a page described in other words than the question's often
    scores a little under the gate while it is the one asked about. For that share a row the
    question names counts with its label evidence (``label_weight`` as in the ranking): a
    table row of figures shares few words with any question (benchmarks/retrieval_sec.py);
    the gate itself reads the chunk's own score only."""
    n, min_score = hits.k, threshold.min_score
    capped = cap_per_document(ranked, hits.per_document)
    if not any(c.score >= min_score for c in capped):
        return [], capped[:n]
    floor = min_score * threshold.follower_share if min_score > 0 else min_score
    follows = [c.score + label_bonus(c, threshold.label_weight) >= floor for c in capped]
    chosen = [c for c, ok in zip(capped, follows, strict=True) if ok]
    misses = [c for c, ok in zip(capped, follows, strict=True) if not ok][:n]
    return spread_documents(chosen, n, hits.spread), misses


def label_bonus(candidate: Candidate, weight: float) -> float:
    """What a row label the question names adds to a candidate (``knowledge.retrieval.labels``):
    ``weight`` x its label evidence x its document's share of the document evidence (1 where
    no document evidence was computed), so that Apple's "Inventories" row counts little for a
    question about NVIDIA. The ranking adds it to the fused score, the follower floor reads it
    (``select``); the minimum score never does."""
    if not candidate.label_evidence:
        return 0.0
    document = candidate.document_evidence
    return weight * candidate.label_evidence * (document if document is not None else 1.0)


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
    with the scores of the best of itself and its units (a unit keeps its own id and names its
    piece: ``piece_id``)."""
    seen: set[int] = set()
    kept: list[Candidate] = []
    for candidate in ranked:
        piece = parents.get(candidate.found_id, candidate.found_id)
        if piece in seen:
            continue
        seen.add(piece)
        kept.append(
            candidate if piece == candidate.found_id else replace(candidate, piece_id=piece)
        )
    return kept
