"""Hybrid search: the one retrieval function the chat, the CLI, the JSON API and MCP share.

route -> (per cascade tier) dense + lexical (+ sparse) lists over-retrieved -> both scores for
every candidate -> fusion -> rerank (when configured) -> at most N per document -> minimum score.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from django.db import connection

from knowledge import vector_index
from knowledge.embedding import (
    Embedder,
    EmbeddingModelMismatch,
    EmbeddingUnavailable,
    get_embedder,
    get_second_embedder,
    query_vector,
)
from knowledge.models import Chunk, Source
from knowledge.querysets import sees_everything
from knowledge.question import Question, read
from knowledge.retrieval import fusion
from knowledge.retrieval import sql as q
from knowledge.retrieval.ranking import Probe, rank_candidates
from knowledge.retrieval.rerank import Reranker, get_reranker
from knowledge.retrieval.router import Routed, route
from knowledge.retrieval.types import Candidate, Filters, Place, SearchOptions, SearchResult
from knowledge.retrieval.versions import resolve_document_filter, resolve_version_filter
from knowledge.retrieval.weights import Hits, Weights, weights
from knowledge.synonyms import expansions
from knowledge.text.words import LIST_WORDS, is_stop

__all__ = ["SearchOptions", "search"]


def search(
    query: str,
    *,
    user=None,
    filters: Filters | None = None,
    options: SearchOptions | None = None,
    embedder: Embedder | None = None,
    reranker: Reranker | None | bool = True,
    reading: Question | None = None,
) -> SearchResult:
    """Search the chunks ``user`` may read (every chunk when ``user`` is None: CLI, staff).
    ``reading``: the question's reading when the caller has it (else read here, once).
    ``reranker`` True: the configured one; None or False: no rerank step."""
    options = options or SearchOptions()
    timings: dict[str, float] = {}
    started = time.perf_counter()
    visible = _visible_sources(user)
    sources = _sources(visible)
    if reading is None or reading.text != query.strip():
        reading = read(query)
    routed = _route(reading, sources, options)
    text = routed.text if routed else query
    merged = (filters or Filters()).merged(routed.filters if routed else Filters())
    if routed:
        merged = resolve_version_filter(routed, merged, visible)
        merged, named = resolve_document_filter(reading.documents, merged, visible)
        if named and options.min_score is None:
            # The question names the document ("по ТЗ"): its best passages are the evidence,
            # whatever their score; the answer's check says whether they hold what is asked.
            options = replace(options, min_score=0.0)
    timings["route"] = _since(started)

    embedder = embedder or get_embedder()
    active_reranker = (
        (get_reranker() if reranker is True else reranker or None) if options.rerank else None
    )
    content_words = [w for w in text.lower().split() if not _asks_only(w.strip("?,.!:;"))]
    if not merged.is_empty() and not content_words:
        return _browse(query, text, q.Scope(merged, visible), options.hits.k, timings)
    # The question goes into e5's space beside the lists' queries (the engine releases the
    # interpreter while it computes): read when the ranking or the answer needs it.
    meaning = _meaning_vector(text or query, options, timings)

    synonyms: tuple[str, ...] = ()
    if options.retrieval.synonym_weight > 0 and "lexical" in options.lists:
        synonyms = tuple(expansions(text or query, visible))
        timings["synonyms"] = _since(started) - timings["route"]
    if "dense" in options.lists:
        _check_model(embedder)
    tick = time.perf_counter()
    notice = ""
    try:
        vector = query_vector(embedder, text or query)
    except EmbeddingUnavailable as exc:
        # Word search still answers: the dense (and sparse) lists are left out, and said so.
        vector, notice = None, f"Word search only: {exc}."
        options = replace(options, lists=tuple(x for x in options.lists if x == "lexical"))
    if vector is not None and "dense" in options.lists:
        _check_dimensions(embedder.model_id, int(vector.dense.shape[1]))
    timings["embed"] = _since(tick)
    configured = weights()
    best: SearchResult | None = None
    for tier, source_ids in _tiers(sources, merged, options):
        scope = q.Scope(
            replace(merged, source_ids=source_ids or merged.source_ids), visible, embedder.model_id
        )
        probe = Probe(scope, text or query, vector, embedder, options, synonyms, meaning)
        ranking = rank_candidates(probe, timings)
        ranked = _rerank(ranking.candidates, probe.text, active_reranker, configured, timings)
        ranked = fusion.collapse_units(ranked, q.unit_parents([c.found_id for c in ranked]))
        ranked = _finalize(ranked)
        hits, misses = fusion.select(
            ranked,
            _hits(options, scope.filters),
            _threshold(options, configured, active_reranker is not None, ranking.known_share),
        )
        current = SearchResult(
            query=query,
            retrieval_query=text,
            filters=merged,
            hits=hits,
            candidates=ranked,
            near_misses=misses,
            reranked=active_reranker is not None,
            rerank_note=_rerank_note(options, active_reranker),
            timings=timings,
            tier=tier,
            notice=notice,
            visible_source_ids=visible,
            prf_words=ranking.prf_words,
            meaning_vector=meaning() if meaning else None,
            unit_scores=ranking.unit_scores,
        )
        if hits:
            best = current
            break  # the cascade stops at the first tier with an answer
        if best is None or _best_miss(current) > _best_miss(best):
            best = current
    timings["total"] = _since(started)
    assert best is not None
    return best


# One thread a process puts questions into e5's space while the request's own thread runs the
# lists' queries (benchmarks/stages.py: e5's vector is two fifths of an answer's instructions).
_MEANING = ThreadPoolExecutor(max_workers=1, thread_name_prefix="question-meaning")


def _meaning_vector(
    text: str, options: SearchOptions, timings: dict[str, float]
) -> Callable[[], Any] | None:
    """The question in e5's space, for the candidates' second vectors, as a function giving it
    when it is ready (None when they are off, when no answer is built nor the ranking asked to
    read them; the function gives None when the embeddings server that makes them is down: the
    search goes on without them)."""
    if not options.meaning or not (options.answer or options.rank_by_meaning):
        return None
    second = get_second_embedder()
    if second is None:
        return None

    def compute():
        tick = time.perf_counter()
        try:
            return query_vector(second, text).dense[0]
        except EmbeddingUnavailable:
            return None
        finally:
            timings["embed_meaning"] = _since(tick)

    pending = _MEANING.submit(compute)
    return pending.result


def _route(
    reading: Question, sources: list[tuple[int, str, int]], options: SearchOptions
) -> Routed | None:
    """Filters read from the question (None: the search does not route)."""
    if not options.route:
        return None
    return route(reading, source_names={name.lower(): pk for pk, name, _ in sources})


def _finalize(ranked: list[Candidate]) -> list[Candidate]:
    """The place of each candidate in the list the search returns, and its final score: the
    cross-encoder's when there is one, else the chunk's own calibrated score (the minimum
    score's scale; the evidence and the fused order never reach it)."""
    return [
        replace(c, final=Place(rank, c.rerank.score if c.rerank else c.own_score))
        for rank, c in enumerate(ranked, 1)
    ]


def _asks_only(word: str) -> bool:
    """A word that only asks (to show, to list, a question word): no topic to rank by."""
    return word in LIST_WORDS or is_stop(word)


def _best_miss(result: SearchResult) -> float:
    return result.near_misses[0].score if result.near_misses else -1.0


def _since(tick: float) -> float:
    return round((time.perf_counter() - tick) * 1000, 2)


def _visible_sources(user) -> list[int] | None:
    if user is None or sees_everything(user):
        return None
    return list(Source.objects.visible_to(user).values_list("pk", flat=True))


def _sources(visible: list[int] | None) -> list[tuple[int, str, int]]:
    """(id, name, priority) of the sources the search may see."""
    sources = Source.objects.all() if visible is None else Source.objects.filter(pk__in=visible)
    return list(sources.values_list("pk", "name", "priority"))


def _tiers(
    sources: list[tuple[int, str, int]], filters: Filters, options: SearchOptions
) -> list[tuple[int | None, list[int]]]:
    """Cascade tiers as (priority, source ids); one pass over everything when the cascade is off."""
    if (
        not options.hits.cascade
        or filters.source_ids
        or filters.version_ids
        or filters.document_ids
    ):
        return [(None, [])]
    by_tier: dict[int, list[int]] = {}
    for pk, _, priority in sources:
        by_tier.setdefault(priority, []).append(pk)
    if len(by_tier) <= 1:
        return [(None, [])]
    return sorted(by_tier.items())


def _hits(options: SearchOptions, filters: Filters) -> Hits:
    """The cap per document spreads the hits over several documents; a search kept to one
    document or one version (a question naming it, a version question) shows as many of its
    passages as any search shows."""
    hits = options.hits
    single = len(filters.document_ids or []) == 1 or len(filters.version_ids or []) == 1
    return replace(hits, per_document=max(hits.k, hits.per_document)) if single else hits


def _threshold(
    options: SearchOptions, configured: Weights, reranked: bool, known_share: float | None
) -> fusion.Threshold:
    """The minimum score; lower for a question every (or nearly every) word of which the
    knowledge base uses: colleagues describe a page's topic in other words, and such a
    question is in the knowledge base's domain even when no chunk repeats its words
    (benchmarks/answers.py and benchmarks/refusal.py calibrate both). A reranker's scores
    have a scale of their own: its minimum applies to every hit."""
    gate = configured.gate
    if options.min_score is not None:
        minimum = options.min_score
    elif reranked:
        minimum = configured.rerank.min_score
    elif known_share is not None and known_share >= gate.known_share:
        minimum = min(gate.min_score, gate.min_score_known)
    else:
        minimum = gate.min_score
    if reranked:
        return fusion.Threshold(minimum)
    return fusion.Threshold(minimum, gate.follower_share, options.fusion.label_weight)


def _check_dimensions(model_id: str, dimensions: int) -> None:
    """The question's vector must have the stored vectors' dimension (checked against a
    once-a-minute reading per process)."""
    stored = vector_index.stored_dimensions_now(model_id)
    vector_index.check_dimensions(model_id, dimensions, stored=stored)


def _check_model(embedder: Embedder) -> None:
    """Refuse to search vectors of another model (checked once a minute per process)."""
    others = [m for m in vector_index.stored_models_now() if m and m != embedder.model_id]
    other = others[0] if others else None
    if other:
        raise EmbeddingModelMismatch(
            f"The knowledge base holds vectors of {other!r} but the configured model is "
            f"{embedder.model_id!r}; run 'manage.py reembed' to switch the knowledge base"
        )


def _rerank(
    ranked: list[Candidate],
    text: str,
    reranker: Reranker | None,
    configured: Weights,
    timings: dict[str, float],
) -> list[Candidate]:
    """The first ``KB_RERANK_CANDIDATES`` in the cross-encoder's order, with its scores; the
    others are left out."""
    if reranker is None or not ranked:
        return ranked
    tick = time.perf_counter()
    top = ranked[: configured.rerank.candidates]
    texts = dict(Chunk.objects.filter(pk__in=[c.found_id for c in top]).values_list("pk", "text"))
    scores = reranker.score(text, [texts.get(c.found_id, "") for c in top])
    scored = {c.found_id: score for c, score in zip(top, scores, strict=True)}
    reordered = fusion.order(top, lambda c: scored[c.found_id])
    timings["rerank"] = timings.get("rerank", 0) + _since(tick)
    return [
        replace(c, rerank=Place(rank, scored[c.found_id])) for rank, c in enumerate(reordered, 1)
    ]


def _rerank_note(options: SearchOptions, reranker: Reranker | None) -> str:
    if not options.rerank:
        return "rerank off for this search"
    if reranker is None:
        return "no reranker configured (KB_RERANKER): rerank step skipped"
    return f"reranked by {reranker.model_id}"


def _browse(
    query: str, text: str, scope: q.Scope, k: int, timings: dict[str, float]
) -> SearchResult:
    """Only filters, no words to rank by: the matching chunks in document order."""
    tick = time.perf_counter()
    condition, params = q.where(scope)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.id, c.document_id FROM knowledge_chunk c WHERE {condition} "
            "ORDER BY c.document_id, c.position LIMIT %s",
            [*params, max(k, 50)],
        )
        rows = cursor.fetchall()
    hits = [
        Candidate(chunk_id, document_id=doc, fused=Place(i, 1.0), final=Place(i, 1.0))
        for i, (chunk_id, doc) in enumerate(rows, 1)
    ]
    timings["browse"] = _since(tick)
    return SearchResult(
        query,
        text,
        scope.filters,
        hits[: max(k, 20)],
        hits,
        [],
        False,
        "browse: chunks matching the filters, in document order",
        timings,
        browse=True,
        visible_source_ids=scope.visible_source_ids,
    )
