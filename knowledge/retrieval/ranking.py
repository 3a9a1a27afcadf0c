"""One tier's ranked candidates: the dense, lexical and sparse lists, each over-retrieved
(K per list), every candidate given both calibrated scores, then fused.

Each stage returns new records (``types.Candidate`` is immutable) with its own field added:
the lists their places, the completion the missing cosine and BM25, the calibration the
chunk's own score, the label, document and name evidence, the fusion the ranking score and
order, the PRF pass its order. The lists run in SQL (``knowledge.retrieval.sql``); the maths
are in ``fusion``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from knowledge.embedding import Embedder
from knowledge.ingest.second import stored_vectors
from knowledge.retrieval import fusion
from knowledge.retrieval import sql as q
from knowledge.retrieval.documents import (
    document_bm25_with_names,
    with_document_evidence,
    with_name_evidence,
)
from knowledge.retrieval.labels import label_evidence
from knowledge.retrieval.lexical import Lexical, lexical_terms
from knowledge.retrieval.prf import prf_lexemes, top_documents
from knowledge.retrieval.types import Calibrated, Candidate, Place, SearchOptions
from knowledge.text.named import named_words

Found = dict[int, Candidate]  # the candidates so far by the id of the chunk found, list order


@dataclass(frozen=True)
class Probe:
    """What one tier's ranking searches with: where, the question's words and vectors, how."""

    scope: q.Scope
    text: str
    vector: Any  # the question's vectors (None: word search only)
    embedder: Embedder
    options: SearchOptions
    synonyms: tuple[str, ...] = ()  # the corpus's synonyms of the question's words
    # The question in e5's space, as a function giving it when it is ready (None: no second
    # vectors; the function gives None when the embeddings server is down).
    meaning: Any = None

    @property
    def dense(self) -> Any:
        return self.vector.dense[0] if self.vector is not None else None

    def has(self, name: str) -> bool:
        return name in self.options.lists


@dataclass(frozen=True)
class Ranking:
    """One tier's candidates, best first, and what the ranking learned on the way."""

    candidates: list[Candidate]
    unit_scores: dict[int, Any] = field(default_factory=dict)  # chunk -> its units' cosines
    # The share of the question's content words some searchable chunk contains (1.0: every
    # word is the knowledge base's vocabulary); None without a lexical list.
    known_share: float | None = None
    prf_words: list[str] = field(default_factory=list)  # the PRF pass's words (prf.py)


def _since(tick: float) -> float:
    return round((time.perf_counter() - tick) * 1000, 2)


def rank_candidates(probe: Probe, timings: dict[str, float]) -> Ranking:
    """The candidates of the dense, lexical and sparse lists in the probe's scope, each with
    both calibrated scores (fetched for those one list missed), fused, best first."""
    found = _sparse(_dense(probe, timings), probe, timings)
    found, lexical = _lexical(found, probe, timings)
    ranked = _score(found, probe, lexical, timings)
    ranked, unit_scores = _meaning(ranked, probe, timings)
    options = probe.options
    if (
        options.prf.documents > 0
        and options.fusion.method != "rrf"
        and lexical.own
        and len(ranked) > 1
        and _vocabulary_mismatch(ranked, options.prf.below)
    ):
        ranked, words = _prf(ranked, probe, lexical, timings)
        return Ranking(ranked, unit_scores, lexical.known_share, words)
    return Ranking(ranked, unit_scores, lexical.known_share)


def _dense(probe: Probe, timings: dict[str, float]) -> Found:
    if not probe.has("dense"):
        return {}
    tick = time.perf_counter()
    retrieval = probe.options.retrieval
    listed = q.dense_search(
        probe.scope, probe.dense, k=retrieval.candidates, ef_search=retrieval.ef_search
    )
    found = {i: Candidate(i, dense=Place(rank, score)) for rank, (i, score) in enumerate(listed, 1)}
    timings["dense"] = timings.get("dense", 0) + _since(tick)
    return found


def _sparse(found: Found, probe: Probe, timings: dict[str, float]) -> Found:
    vector, dimensions = probe.vector, probe.embedder.sparse_dimensions
    if not (probe.has("sparse") and vector is not None and vector.sparse and dimensions):
        return found
    tick = time.perf_counter()
    listed = q.sparse_search(
        probe.scope, vector.sparse[0], dimensions, k=probe.options.retrieval.candidates
    )
    found = _placed(found, listed, "sparse")
    timings["sparse"] = timings.get("sparse", 0) + _since(tick)
    return found


# The fused candidates e5 re-orders (benchmarks/experiments/first_stage.py, RESULTS.md 12-07:
# kb_dev + kb_dev2 document R@5 0.887 with the first 10, 0.906 with 20, 30 or all).
MEANING_CANDIDATES = 20


def _meaning(
    ranked: list[Candidate], probe: Probe, timings: dict[str, float]
) -> tuple[list[Candidate], dict]:
    """The best ``MEANING_CANDIDATES`` fused candidates with their best unit's cosine to the
    question in e5's space (their second vectors, ``knowledge.ingest.second``), fused again
    (``fusion.fused_score``: for a question that names nothing the knowledge base knows); the
    cosine of every unit of each, by chunk."""
    weight = probe.options.fusion.meaning_weight
    named = any(c.name_evidence is not None for c in ranked)
    if probe.meaning is None or not ranked or weight <= 0 or named:
        return ranked, {}  # the answer reads the second vectors of its sources only
    tick = time.perf_counter()
    top = ranked[:MEANING_CANDIDATES]
    stored = stored_vectors([c.found_id for c in top])
    question = probe.meaning()
    if question is None:
        return ranked, {}
    scores = {i: vectors @ question for i, vectors in stored.items() if len(vectors)}
    placed = [
        replace(c, meaning=Place(None, float(scores[c.found_id].max())))
        if c.found_id in scores
        else c
        for c in ranked
    ]
    ranked = fusion.fuse(placed, probe.options.lists, probe.options.fusion)
    timings["meaning"] = timings.get("meaning", 0) + _since(tick)
    return ranked, scores


def _placed(found: Found, listed: list[tuple[int, float]], stage: str) -> Found:
    """``found`` with each listed chunk's place in the list ``stage``; new chunks last."""
    placed = dict(found)
    for rank, (i, score) in enumerate(listed, 1):
        place = {stage: Place(rank, score)}
        placed[i] = replace(placed[i], **place) if i in placed else Candidate(i, **place)
    return placed


def _vocabulary_mismatch(ranked: list[Candidate], below: float) -> bool:
    """Whether the question is worded unlike every chunk: no candidate holds more than
    ``below`` (``KB_SEARCH_PRF_BELOW``) of the question's best possible BM25. A question
    repeating a passage's words (most of XQuAD) is found by them and the expansion would only
    blur its first place; one asked in other words is what it is for."""
    best = max((c.calibrated.lexical_norm for c in ranked if c.calibrated), default=0.0)
    return best < below


def _prf(
    ranked: list[Candidate], probe: Probe, lexical: Lexical, timings: dict[str, float]
) -> tuple[list[Candidate], list[str]]:
    """``ranked`` re-ordered by the best documents' distinctive words
    (``knowledge.retrieval.prf``): each candidate's ranking score gains its BM25 for those
    words, at ``KB_SEARCH_PRF_WEIGHT`` of their idf, over the question's ceiling (its ``prf``
    place). The score the threshold reads is left alone, and no candidate is added: the
    expansion re-orders what the question's own words and meaning found. Also the words."""
    tick = time.perf_counter()
    prf, visible = probe.options.prf, probe.scope.visible_source_ids
    added = prf_lexemes(
        top_documents(ranked, prf.documents), [*lexical.idf, *lexical.extra], prf.terms, visible
    )
    if added and lexical.ceiling:
        df, total, _ = q.term_stats(added, visible)
        idf = {x: prf.weight * fusion.bm25_idf(df[x], total) for x in added if df.get(x)}
        ids = [c.found_id for c in ranked]
        terms = q.Terms(idf, lexical.avg_length)
        scores = dict(q.bm25(probe.scope, terms, k=len(ids), only_ids=ids) if idf else [])
        gained = {
            c.found_id: _ranking_score(c) + scores.get(c.found_id, 0.0) / lexical.ceiling
            for c in ranked
        }
        ordered = fusion.order(ranked, lambda c: gained[c.found_id])
        ranked = [
            replace(c, prf=Place(rank, gained[c.found_id])) for rank, c in enumerate(ordered, 1)
        ]
    timings["prf"] = timings.get("prf", 0) + _since(tick)
    return ranked, added


def _ranking_score(c: Candidate) -> float:
    return c.fused.score if c.fused is not None else 0.0


def _lexical(found: Found, probe: Probe, timings: dict[str, float]) -> tuple[Found, Lexical]:
    """Run the lexical list into ``found``: the question's lexemes at their idf and the
    corpus's synonyms (``probe.synonyms``) at their share."""
    if not probe.has("lexical"):
        return found, Lexical()
    tick = time.perf_counter()
    retrieval = probe.options.retrieval
    lexical = lexical_terms(probe.scope, probe.text, probe.synonyms, retrieval.synonym_weight)
    matching = lexical.matching(probe.text, retrieval)
    listed = q.bm25(probe.scope, lexical.terms, k=retrieval.candidates, matching=matching)
    found = _placed(found, listed, "lexical")
    timings["lexical"] = timings.get("lexical", 0) + _since(tick)
    return found, lexical


def _score(
    found: Found, probe: Probe, lexical: Lexical, timings: dict[str, float]
) -> list[Candidate]:
    """Both calibrated scores for every candidate, the label and document evidence, fused."""
    tick = time.perf_counter()
    options = probe.options
    found = _calibrate(_complete(found, probe, lexical), options, lexical.ceiling)
    weighs_labels = options.fusion.label_weight > 0 and options.fusion.method != "rrf"
    if weighs_labels and probe.has("lexical") and lexical.idf:
        tock = time.perf_counter()
        found = _add_labelled_rows(found, probe, lexical)
        timings["labels"] = timings.get("labels", 0) + _since(tock)
    candidates = list(found.values())
    if options.fusion.document_weight > 0 and probe.has("lexical") and lexical.idf:
        candidates = _document_evidence(candidates, probe, lexical)
    ranked = fusion.fuse(candidates, options.lists, options.fusion)
    timings["fusion"] = timings.get("fusion", 0) + _since(tick)
    return ranked


def _calibrate(found: Found, options: SearchOptions, ceiling: float) -> Found:
    """Each candidate's lexical share of the question's ceiling and its calibrated score."""
    weight = _dense_weight(options)
    dense, lexical = "dense" in options.lists, "lexical" in options.lists
    calibrated = {}
    for i, c in found.items():
        norm = min(1.0, (c.lexical.score if c.lexical else 0.0) / ceiling) if ceiling else 0.0
        score = fusion.calibrated(
            c.dense.score if dense and c.dense else None,
            norm if lexical else None,
            dense_weight=weight,
        )
        calibrated[i] = replace(c, calibrated=Calibrated(norm, score))
    return calibrated


def _add_labelled_rows(found: Found, probe: Probe, lexical: Lexical) -> Found:
    """Give each table and row unit of the best candidates' documents whose row label the
    question names its label evidence (``knowledge.retrieval.labels``); those the lists did
    not find join the candidates with both their scores."""
    weights = probe.options.fusion
    best = sorted(found.values(), key=lambda c: -c.own_score)
    documents = top_documents(best, weights.label_documents)
    evidence = label_evidence(probe.scope, documents, lexical.own, lexical.idf)
    # The best labelled chunks the lists missed join them (each needs both its scores).
    missed = sorted((i for i in evidence if i not in found), key=lambda i: (-evidence[i], i))
    new = {i: Candidate(i) for i in missed[: weights.label_candidates]}
    if new:
        new = _calibrate(_complete(new, probe, lexical), probe.options, lexical.ceiling)
    return {
        i: replace(c, label_evidence=evidence[i]) if i in evidence else c
        for i, c in {**found, **new}.items()
    }


def _document_evidence(
    candidates: list[Candidate], probe: Probe, lexical: Lexical
) -> list[Candidate]:
    """The candidates with their document's share of the document evidence, and of the name
    evidence when the question names a thing (``knowledge.retrieval.documents``)."""
    ids = {c.document_id for c in candidates if c.document_id}
    # The question's own words only: a synonym is no evidence about a whole document.
    own = lexical.own
    names = _named_lexemes(probe.text, own) if probe.options.fusion.name_weight > 0 else []
    documents, named = document_bm25_with_names(
        sorted(ids), own, names, probe.scope.visible_source_ids
    )
    return with_name_evidence(with_document_evidence(candidates, documents), named)


def _named_lexemes(text: str, own: list[str]) -> list[str]:
    """The question's lexemes that name a thing (a company, product or tool name:
    ``knowledge.text.named``): each candidate document's BM25 for them alone is the name
    evidence. Empty when the question names nothing the knowledge base knows."""
    names = named_words(text)
    if not names:
        return []
    return [x for x in q.query_terms(" ".join(names), q.LANGUAGES)[0] if x in own]


def _dense_weight(options: SearchOptions) -> float:
    if options.lists == ("dense",):
        return 1.0
    if options.lists == ("lexical",):
        return 0.0
    return options.fusion.dense_weight


def _complete(found: Found, probe: Probe, lexical: Lexical) -> Found:
    """Give every candidate both scores, so fusion compares like with like, and its document
    and freshness (the per-document cap and the freshness tie-break need them)."""
    dense = probe.has("dense")
    unscored = [i for i, c in found.items() if c.dense is None]
    rows = q.candidate_rows(
        list(found), probe.dense if dense else None, probe.embedder.model_id, cosine_ids=unscored
    )
    completed = dict(found)
    for i, (document_id, created, prefer_fresh, cosine) in rows.items():
        c = found[i]
        cosine_place = (
            Place(None, cosine) if c.dense is None and dense and cosine is not None else c.dense
        )
        completed[i] = replace(
            c,
            document_id=document_id,
            prefer_fresh=prefer_fresh,
            freshness=created.timestamp() if created else 0.0,
            dense=cosine_place,
        )
    if probe.has("lexical") and lexical.idf:
        missing = [i for i, c in completed.items() if c.lexical is None]
        scored = q.bm25(probe.scope, lexical.terms, k=len(missing), only_ids=missing)
        for i, score in scored:
            completed[i] = replace(completed[i], lexical=Place(None, score))
    return completed
