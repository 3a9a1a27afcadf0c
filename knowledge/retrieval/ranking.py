"""One tier's ranked candidates: the dense, lexical and sparse lists, each over-retrieved
(K per list), every candidate given both calibrated scores, then fused.

The lists run in SQL (``knowledge.retrieval.sql``); the maths are in ``fusion``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.conf import settings

from knowledge.embedding import Embedder
from knowledge.question.named import named_words
from knowledge.retrieval import fusion
from knowledge.retrieval import sql as q
from knowledge.retrieval.documents import (
    add_document_evidence,
    add_name_evidence,
    document_bm25_with_names,
)
from knowledge.retrieval.labels import add_label_evidence, label_evidence
from knowledge.retrieval.prf import prf_lexemes, top_documents
from knowledge.retrieval.types import Candidate

if TYPE_CHECKING:
    from knowledge.retrieval.search import SearchOptions


def _since(tick: float) -> float:
    return round((time.perf_counter() - tick) * 1000, 2)


def rank_candidates(
    scope: q.Scope,
    text: str,
    vector,
    embedder: Embedder,
    options: SearchOptions,
    timings: dict[str, float],
    stats: dict[str, Any] | None = None,
) -> list[Candidate]:
    """The candidates of the dense, lexical and sparse lists in ``scope``, each with both
    calibrated scores (fetched for those one list missed), fused, best first.

    ``stats`` receives ``known_share``: the share of the question's content words that some
    searchable chunk contains (1.0 when every word is the knowledge base's vocabulary), and
    ``prf``: the lexemes a PRF pass re-ordered the candidates by (``knowledge.retrieval.prf``)."""
    candidates: dict[int, Candidate] = {}
    k = options.candidates
    dense_vec = vector.dense[0] if vector is not None else None
    if "dense" in options.lists:
        tick = time.perf_counter()
        for rank, (chunk_id, score) in enumerate(
            q.dense_search(scope, dense_vec, k=k, ef_search=options.ef_search), 1
        ):
            candidates[chunk_id] = Candidate(chunk_id, dense_rank=rank, dense_score=score)
        timings["dense"] = timings.get("dense", 0) + _since(tick)
    if (
        "sparse" in options.lists
        and vector is not None
        and vector.sparse
        and embedder.sparse_dimensions
    ):
        tick = time.perf_counter()
        for rank, (chunk_id, score) in enumerate(
            q.sparse_search(scope, vector.sparse[0], embedder.sparse_dimensions, k=k), 1
        ):
            c = candidates.setdefault(chunk_id, Candidate(chunk_id))
            c.sparse_rank, c.sparse_score = rank, score
        timings["sparse"] = timings.get("sparse", 0) + _since(tick)
    lexical = _lexical(candidates, scope, text, options, timings, stats)
    ranked = _score(candidates, scope, text, dense_vec, embedder, options, timings, lexical)
    if (
        options.prf_docs > 0
        and options.fusion != "rrf"
        and lexical.own
        and len(ranked) > 1
        and _vocabulary_mismatch(ranked)
    ):
        added = _prf(ranked, scope, options, lexical, timings)
        if stats is not None:
            stats["prf"] = added
    return ranked


def _vocabulary_mismatch(ranked: list[Candidate]) -> bool:
    """Whether the question is worded unlike every chunk: no candidate holds more than
    ``KB_SEARCH_PRF_BELOW`` of the question's best possible BM25. A question repeating a
    passage's words (most of XQuAD) is found by them and the expansion would only blur its
    first place; one asked in other words is what it is for."""
    best = max((c.lexical_norm or 0.0 for c in ranked), default=0.0)
    return best < settings.SEARCH_PRF_BELOW


def _prf(
    ranked: list[Candidate],
    scope: q.Scope,
    options: SearchOptions,
    lexical: _Lexical,
    timings: dict[str, float],
) -> list[str]:
    """Re-order ``ranked`` in place by the best documents' distinctive words
    (``knowledge.retrieval.prf``): each candidate's ranking score gains its BM25 for those
    words, at ``KB_SEARCH_PRF_WEIGHT`` of their idf, over the question's ceiling. Its
    ``score`` (what the threshold reads) is left alone, and no candidate is added: the
    expansion re-orders what the question's own words and meaning found. Returns the words used."""
    tick = time.perf_counter()
    added = prf_lexemes(
        top_documents(ranked, options.prf_docs),
        [*lexical.idf, *lexical.extra],
        settings.SEARCH_PRF_TERMS,
        scope.visible_source_ids,
    )
    if added and lexical.ceiling:
        df, total, _ = q.term_stats(added, scope.visible_source_ids)
        idf = {
            x: settings.SEARCH_PRF_WEIGHT * fusion.bm25_idf(df[x], total)
            for x in added
            if df.get(x)
        }
        ids = [c.chunk_id for c in ranked]
        scores = dict(
            q.bm25(scope, idf, lexical.avg_length, k=len(ids), candidate_lexemes=[], only_ids=ids)
            if idf
            else []
        )
        for c in ranked:
            c.fused_score += scores.get(c.chunk_id, 0.0) / lexical.ceiling
        ranked[:] = fusion.order(ranked, by="fused_score")
        for rank, c in enumerate(ranked, 1):
            c.fused_rank = rank
    timings["prf"] = timings.get("prf", 0) + _since(tick)
    return added


@dataclass
class _Lexical:
    """What the lexical list was scored with: idf per lexeme (the question's own and its
    synonyms at their share), which lexemes the question asked itself, the synonyms, the
    ceiling of a chunk's BM25 for the question, the chunks' mean length."""

    idf: dict[str, float] = field(default_factory=dict)
    own: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    ceiling: float = 0.0
    avg_length: float = 1.0


def _lexical(
    candidates: dict[int, Candidate],
    scope: q.Scope,
    text: str,
    options: SearchOptions,
    timings: dict[str, float],
    stats: dict[str, Any] | None,
) -> _Lexical:
    """Run the lexical list into ``candidates``: the question's lexemes at their idf and the
    corpus's synonyms (``options.expansions``) at their share."""
    if "lexical" not in options.lists:
        return _Lexical()
    tick = time.perf_counter()
    lexemes, words = q.query_terms(text, q.LANGUAGES)
    # The corpus's synonyms of the question's terms: searched for, at a lower weight, and
    # not part of the question's ceiling (the question did not ask for those words).
    extra = (
        q.query_terms(" ".join(options.expansions), q.LANGUAGES)[0] if options.expansions else []
    )
    extra = [x for x in extra if x not in lexemes]
    df, total, avg_length = q.term_stats([*lexemes, *extra], scope.visible_source_ids)
    if stats is not None and words:
        stats["known_share"] = sum(1 for w in words if any(df.get(x) for x in w)) / len(words)
    idf = {x: fusion.bm25_idf(df[x], total) for x in lexemes if df.get(x)}
    own = list(idf)
    for x in extra:
        if df.get(x):
            idf[x] = settings.SEARCH_SYNONYM_WEIGHT * fusion.bm25_idf(df[x], total)
    absent = fusion.bm25_idf(1, total)  # as rare as the rarest word the chunks have
    ceiling = (q.BM25_K1 + 1) * fusion.question_ceiling(words, idf, absent)
    rare = _candidate_lexemes(idf, df, settings.LEXICAL_CANDIDATE_BUDGET)
    phrase = text if '"' in text else ""
    for rank, (chunk_id, score) in enumerate(
        q.bm25(
            scope,
            idf,
            avg_length,
            k=options.candidates,
            candidate_lexemes=rare,
            phrase_query=phrase,
            prefilter=settings.LEXICAL_PREFILTER,
        ),
        1,
    ):
        c = candidates.setdefault(chunk_id, Candidate(chunk_id))
        c.lexical_rank, c.lexical_score = rank, score
    timings["lexical"] = timings.get("lexical", 0) + _since(tick)
    return _Lexical(idf, own, extra, ceiling, avg_length)


def _score(
    candidates: dict[int, Candidate],
    scope: q.Scope,
    text: str,
    dense_vec,
    embedder: Embedder,
    options: SearchOptions,
    timings: dict[str, float],
    lexical: _Lexical,
) -> list[Candidate]:
    """Both calibrated scores for every candidate, the document-level evidence, fused."""
    tick = time.perf_counter()
    idf = lexical.idf
    _complete(candidates, dense_vec, embedder, scope, idf, lexical.avg_length, options)
    _calibrate(candidates.values(), options, lexical.ceiling)
    if options.label_weight > 0 and options.fusion != "rrf" and "lexical" in options.lists and idf:
        tock = time.perf_counter()
        added = _add_labelled_rows(candidates, scope, dense_vec, embedder, options, lexical)
        _calibrate(added, options, lexical.ceiling)
        timings["labels"] = timings.get("labels", 0) + _since(tock)
    documents, named = None, {}
    if options.document_weight > 0 and "lexical" in options.lists and idf:
        ids = {c.document_id for c in candidates.values() if c.document_id}
        # The question's own words only: a synonym is no evidence about a whole document.
        own = lexical.own
        names = _named_lexemes(text, own) if options.name_weight > 0 else []
        documents, named = document_bm25_with_names(
            sorted(ids), own, names, scope.visible_source_ids
        )
    ranked = _fuse(list(candidates.values()), options, documents, named)
    timings["fusion"] = timings.get("fusion", 0) + _since(tick)
    return ranked


def _calibrate(candidates, options: SearchOptions, ceiling: float) -> None:
    """Each candidate's lexical share of the question's ceiling and its calibrated score."""
    for c in candidates:
        c.lexical_norm = min(1.0, (c.lexical_score or 0.0) / ceiling) if ceiling else 0.0
        c.score = fusion.calibrated(
            c.dense_score if "dense" in options.lists else None,
            c.lexical_norm if "lexical" in options.lists else None,
            dense_weight=_dense_weight(options),
        )


def _add_labelled_rows(
    candidates: dict[int, Candidate],
    scope: q.Scope,
    dense_vec,
    embedder: Embedder,
    options: SearchOptions,
    lexical: _Lexical,
) -> list[Candidate]:
    """Give each table and row unit of the best candidates' documents whose row label the
    question names its ``label_score`` (``knowledge.retrieval.labels``); those the lists did
    not find join the candidates with both their scores (returned, to be calibrated)."""
    documents = top_documents(
        sorted(candidates.values(), key=lambda c: -c.score), settings.SEARCH_LABEL_DOCUMENTS
    )
    found = label_evidence(scope, documents, lexical.own, lexical.idf)
    # The best labelled chunks the lists missed join them (each needs both its scores).
    missed = sorted((i for i in found if i not in candidates), key=lambda i: (-found[i], i))
    new = {i: Candidate(i) for i in missed[: settings.SEARCH_LABEL_CANDIDATES]}
    if new:
        _complete(new, dense_vec, embedder, scope, lexical.idf, lexical.avg_length, options)
        candidates.update(new)
    for chunk_id, evidence in found.items():
        if chunk_id in candidates:
            candidates[chunk_id].label_score = evidence
    return list(new.values())


def _named_lexemes(text: str, own: list[str]) -> list[str]:
    """The question's lexemes that name a thing (a company, product or tool name:
    ``knowledge.question.named``): each candidate document's BM25 for them alone is the name
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
    return options.dense_weight


def _candidate_lexemes(idf: dict[str, float], df: dict[str, int], budget: int) -> list[str]:
    """The rarest query terms whose postings add up to ``budget`` chunks (at least one term).

    Bounds the work of the lexical list: a chunk that matches only very common terms cannot
    outrank one matching a rare term, so it need not be scored.
    """
    chosen: list[str] = []
    used = 0
    for lexeme in sorted(idf, key=lambda x: df[x]):
        if chosen and used + df[lexeme] > budget:
            break
        chosen.append(lexeme)
        used += df[lexeme]
    return chosen


def _complete(
    candidates: dict[int, Candidate],
    vector,
    embedder: Embedder,
    scope: q.Scope,
    idf: dict[str, float],
    avg_length: float,
    options: SearchOptions,
) -> None:
    """Give every candidate both scores, so fusion compares like with like, and its document
    and freshness (the per-document cap and the freshness tie-break need them)."""
    dense = "dense" in options.lists
    unscored = [i for i, c in candidates.items() if c.dense_score is None]
    rows = q.candidate_rows(
        list(candidates), vector if dense else None, embedder.model_id, cosine_ids=unscored
    )
    for chunk_id, (document_id, created, prefer_fresh, cosine) in rows.items():
        c = candidates[chunk_id]
        c.document_id, c.prefer_fresh = document_id, prefer_fresh
        c.freshness = created.timestamp() if created else 0.0
        if c.dense_score is None and dense:
            c.dense_score = cosine
    if "lexical" in options.lists and idf:
        missing = [i for i, c in candidates.items() if c.lexical_score is None]
        for chunk_id, score in q.bm25(
            scope, idf, avg_length, k=len(missing), candidate_lexemes=[], only_ids=missing
        ):
            candidates[chunk_id].lexical_score = score


def _fuse(
    candidates: list[Candidate],
    options: SearchOptions,
    documents: dict[int, float] | None,
    named: dict[int, float],
) -> list[Candidate]:
    if options.fusion == "rrf" and len(options.lists) > 1:
        rankings = [
            [
                c.chunk_id
                for c in sorted(
                    (c for c in candidates if getattr(c, f"{name}_rank")),
                    key=lambda c, n=name: getattr(c, f"{n}_rank"),
                )
            ]
            for name in options.lists
        ]
        scores = fusion.rrf(rankings, k=settings.RRF_K)
        for c in candidates:
            c.fused_score = scores.get(c.chunk_id, 0.0)
        ranked = sorted(candidates, key=lambda c: -c.fused_score)
    else:
        for c in candidates:
            c.fused_score = c.score
        if documents is not None:
            add_document_evidence(candidates, documents, options.document_weight)
        if named:
            add_name_evidence(candidates, named, options.name_weight)
        if options.label_weight > 0:
            add_label_evidence(candidates, options.label_weight)
        ranked = fusion.order(candidates, by="fused_score")
    for rank, c in enumerate(ranked, 1):
        c.fused_rank = rank
    return ranked
