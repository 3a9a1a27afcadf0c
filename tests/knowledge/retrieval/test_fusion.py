"""The fusion and selection maths on their own (no database)."""

from __future__ import annotations

import math
from dataclasses import FrozenInstanceError, replace

import pytest

from knowledge.retrieval import fusion
from knowledge.retrieval.fusion import Threshold
from knowledge.retrieval.types import Candidate, Place
from knowledge.retrieval.weights import Hits


def cand(chunk_id: int, score: float, document_id: int = 0, **extra) -> Candidate:
    """A candidate whose final score is ``score``."""
    return Candidate(
        chunk_id, document_id=document_id or chunk_id, final=Place(None, score), **extra
    )


def final(c: Candidate) -> float:
    return c.score


def select(ranked, *, n: int, per_document: int, spread: int = 0, **threshold):
    return fusion.select(
        ranked, Hits(k=n, per_document=per_document, spread=spread), Threshold(**threshold)
    )


def test_rrf_sums_reciprocal_ranks_over_lists():
    scores = fusion.rrf([[1, 2, 3], [3, 1]], k=60)
    assert scores[1] == pytest.approx(1 / 61 + 1 / 62)
    assert scores[2] == pytest.approx(1 / 62)
    assert scores[3] == pytest.approx(1 / 63 + 1 / 61)
    assert max(scores, key=scores.get) == 1


def test_rrf_weights_scale_each_list():
    scores = fusion.rrf([[1, 2], [2, 1]], k=1, weights=[3.0, 1.0])
    assert scores[1] == pytest.approx(3 / 2 + 1 / 3)
    assert scores[2] == pytest.approx(3 / 3 + 1 / 2)


def test_rrf_needs_one_weight_per_list():
    with pytest.raises(ValueError):
        fusion.rrf([[1], [2]], weights=[1.0])


def test_calibrated_is_a_convex_combination():
    assert fusion.calibrated(0.8, 0.4, dense_weight=0.5) == pytest.approx(0.6)
    assert fusion.calibrated(0.8, 0.4, dense_weight=1.0) == pytest.approx(0.8)
    assert fusion.calibrated(0.8, 0.4, dense_weight=0.0) == pytest.approx(0.4)


def test_calibrated_counts_missing_and_negative_cosine_as_zero():
    assert fusion.calibrated(None, 0.5, dense_weight=0.5) == pytest.approx(0.25)
    assert fusion.calibrated(-0.7, None, dense_weight=0.5) == 0.0


def test_bm25_idf_is_positive_and_falls_with_document_frequency():
    n = 1000
    idfs = [fusion.bm25_idf(df, n) for df in (1, 10, 500, 1000)]
    assert idfs == sorted(idfs, reverse=True)
    assert all(x > 0 for x in idfs)  # Lucene's variant: a term in every chunk still counts a bit
    assert idfs[0] == pytest.approx(math.log(1 + (n - 1 + 0.5) / 1.5))


def test_question_ceiling_takes_each_words_best_lexeme():
    idf = {"тест": 1.5, "тесты": 0.5, "кейс": 2.0}
    words = [["тест", "тесты"], ["кейс"]]
    assert fusion.question_ceiling(words, idf, absent_idf=7.0) == pytest.approx(1.5 + 2.0)


def test_a_word_no_chunk_contains_weighs_more_than_any_known_one():
    idf = {"pump": 1.0}
    ceiling = fusion.question_ceiling(
        [["pump"], ["banana"]], idf, absent_idf=7.0, absent_weight=2.0
    )
    assert ceiling == pytest.approx(1.0 + 14.0)
    # so a chunk matching only the known word holds a small share of what is asked
    assert 1.0 / ceiling < 0.1


def test_a_question_without_content_words_has_no_ceiling():
    assert fusion.question_ceiling([], {"x": 1.0}, absent_idf=7.0) == 0


def test_cap_per_document_keeps_order_and_at_most_n_of_a_document():
    ranked = [cand(1, 0.9, 10), cand(2, 0.8, 10), cand(3, 0.7, 10), cand(4, 0.6, 20)]
    kept = fusion.cap_per_document(ranked, 2)
    assert [c.chunk_id for c in kept] == [1, 2, 4]
    assert [c.chunk_id for c in fusion.cap_per_document(ranked, 1)] == [1, 4]


def test_order_sorts_best_score_first():
    ranked = fusion.order([cand(1, 0.2), cand(2, 0.9), cand(3, 0.5)], final)
    assert [c.chunk_id for c in ranked] == [2, 3, 1]


def test_ties_go_to_the_fresher_chunk_when_the_source_prefers_fresh():
    old = cand(1, 0.5, freshness=1_000.0, prefer_fresh=True)
    new = cand(2, 0.5, freshness=2_000.0, prefer_fresh=True)
    assert [c.chunk_id for c in fusion.order([old, new], final)] == [2, 1]


def test_ties_keep_their_order_when_no_source_prefers_fresh():
    old = cand(1, 0.5, freshness=1_000.0)
    new = cand(2, 0.5, freshness=2_000.0)
    assert [c.chunk_id for c in fusion.order([old, new], final)] == [1, 2]


def test_freshness_never_beats_a_better_score():
    better_old = cand(1, 0.52, freshness=1_000.0, prefer_fresh=True)  # beyond FRESH_TIE
    new = cand(2, 0.50, freshness=2_000.0, prefer_fresh=True)
    assert [c.chunk_id for c in fusion.order([new, better_old], final)] == [1, 2]


def test_near_ties_go_to_the_fresher_chunk_when_every_one_prefers_fresh():
    old = cand(1, 0.505, freshness=1_000.0, prefer_fresh=True)
    new = cand(2, 0.500, freshness=2_000.0, prefer_fresh=True)
    assert [c.chunk_id for c in fusion.order([old, new], final)] == [2, 1]
    assert [c.chunk_id for c in fusion.order([old, new], final, fresh_tie=0.001)] == [1, 2]


def test_a_near_tie_never_jumps_a_chunk_of_a_source_without_freshness():
    old = cand(1, 0.505, freshness=1_000.0, prefer_fresh=True)
    other = cand(2, 0.503, freshness=500.0)
    new = cand(3, 0.500, freshness=2_000.0, prefer_fresh=True)
    assert [c.chunk_id for c in fusion.order([new, other, old], final)] == [1, 2, 3]


def test_select_applies_cap_then_minimum_score_then_n():
    ranked = [
        cand(1, 0.9, 10),
        cand(2, 0.85, 10),
        cand(3, 0.8, 10),  # third of document 10: capped, must not take a slot
        cand(4, 0.7, 20),
        cand(5, 0.6, 30),
        cand(6, 0.2, 40),  # below the minimum
    ]
    hits, misses = select(ranked, n=3, per_document=2, min_score=0.3)
    assert [c.chunk_id for c in hits] == [1, 2, 4]
    assert [c.chunk_id for c in misses] == [6]


def test_spread_keeps_the_first_documents_and_gives_the_other_places_by_rank():
    ranked = [cand(1, 0.9, 10), cand(2, 0.85, 10), cand(3, 0.8, 10), cand(4, 0.7, 20)]
    ranked += [cand(5, 0.6, 30), cand(6, 0.5, 10)]
    assert [c.chunk_id for c in fusion.spread_documents(ranked, 4, 0)] == [1, 2, 3, 4]
    assert [c.chunk_id for c in fusion.spread_documents(ranked, 4, 3)] == [1, 2, 4, 5]
    assert [c.chunk_id for c in fusion.spread_documents(ranked, 4, 2)] == [1, 2, 3, 4]
    # More documents asked for than places: one place still goes by rank.
    assert [c.chunk_id for c in fusion.spread_documents(ranked, 3, 5)] == [1, 2, 4]
    assert [c.chunk_id for c in fusion.spread_documents(ranked, 1, 5)] == [1]
    assert fusion.spread_documents(ranked[:3], 4, 3) == ranked[:3]


def test_spread_keeps_no_place_for_a_document_found_far_down_the_list():
    n = 3
    ranked = [cand(i, 1.0 - i / 100, 10) for i in range(1, fusion.SPREAD_WINDOW * n + 1)]
    far = cand(99, 0.1, 20)
    assert [c.chunk_id for c in fusion.spread_documents([*ranked, far], n, 2)] == [1, 2, 3]
    near = [*ranked[:-1], far]
    assert [c.chunk_id for c in fusion.spread_documents(near, n, 2)] == [1, 2, 99]


def test_select_spreads_only_over_what_passes_the_minimum():
    ranked = [cand(1, 0.9, 10), cand(2, 0.8, 10), cand(3, 0.2, 20), cand(4, 0.7, 10)]
    hits, misses = select(ranked, n=3, per_document=5, min_score=0.3, spread=2)
    assert [c.chunk_id for c in hits] == [1, 2, 4]
    assert [c.chunk_id for c in misses] == [3]
    ranked[2] = cand(3, 0.5, 20)
    hits, _ = select(ranked, n=3, per_document=5, min_score=0.3, spread=2)
    assert [c.chunk_id for c in hits] == [1, 2, 3]


def test_select_with_nothing_above_the_minimum_returns_only_near_misses():
    hits, misses = select([cand(1, 0.29), cand(2, 0.1)], n=5, per_document=2, min_score=0.3)
    assert hits == []
    assert [c.chunk_id for c in misses] == [1, 2]


def test_a_score_exactly_at_the_minimum_counts():
    hits, _ = select([cand(1, 0.3)], n=5, per_document=2, min_score=0.3)
    assert [c.chunk_id for c in hits] == [1]


def test_once_one_candidate_reaches_the_minimum_followers_need_only_their_share():
    ranked = [cand(1, 0.5, 10), cand(2, 0.27, 20), cand(3, 0.23, 30), cand(4, 0.31, 40)]
    hits, misses = select(ranked, n=5, per_document=2, min_score=0.3, follower_share=0.8)
    assert [c.chunk_id for c in hits] == [1, 2, 4]  # 0.27 and 0.31 reach 0.24; 0.23 does not
    assert [c.chunk_id for c in misses] == [3]


def test_followers_alone_never_make_a_hit():
    hits, misses = select(
        [cand(1, 0.29), cand(2, 0.28)], n=5, per_document=2, min_score=0.3, follower_share=0.5
    )
    assert hits == [] and [c.chunk_id for c in misses] == [1, 2]


def test_a_minimum_at_or_under_zero_is_not_lowered_for_followers():
    hits, _ = select(
        [cand(1, 0.5), cand(2, -0.1)], n=5, per_document=2, min_score=0.0, follower_share=0.5
    )
    assert [c.chunk_id for c in hits] == [1]


def test_a_row_the_question_names_follows_by_its_label_evidence():
    # The balance sheet's "Inventories" row scores 0.12 on its own (a row of figures shares
    # few words with the question): under the floor of 0.24, over it with its label evidence
    # (0.3) in the document the question is about (share 1.0), not in another one (0.2).
    ranked = [
        cand(1, 0.5, 10),
        cand(2, 0.12, 10, label_evidence=0.3, document_evidence=1.0),
        cand(3, 0.12, 20, label_evidence=0.3, document_evidence=0.2),
        cand(4, 0.12, 30),
    ]
    hits, misses = select(
        ranked, n=5, per_document=3, min_score=0.3, follower_share=0.8, label_weight=1.0
    )
    assert [c.chunk_id for c in hits] == [1, 2]
    assert [c.chunk_id for c in misses] == [3, 4]
    hits, _ = select(ranked, n=5, per_document=3, min_score=0.3, follower_share=0.8)
    assert [c.chunk_id for c in hits] == [1]  # without the label weight: the plain floor


def test_label_evidence_never_lifts_a_question_over_the_minimum():
    ranked = [cand(1, 0.25, 10, label_evidence=1.0, document_evidence=1.0)]
    hits, misses = select(
        ranked, n=5, per_document=3, min_score=0.3, follower_share=0.8, label_weight=1.0
    )
    assert hits == [] and [c.chunk_id for c in misses] == [1]


def test_a_row_unit_stands_for_its_table_piece_and_keeps_its_own_id():
    # 11 and 12 are row units of the table piece 10: the piece once, at its best unit's rank.
    ranked = [cand(11, 0.9, 1), cand(10, 0.8, 1), cand(12, 0.7, 1), cand(20, 0.6, 2)]
    kept = fusion.collapse_units(ranked, {11: 10, 12: 10})
    assert [c.chunk_id for c in kept] == [10, 20]
    assert (kept[0].found_id, kept[0].piece_id, kept[0].unit_id) == (11, 10, 11)
    assert kept[0].score == 0.9 and kept[1].unit_id is None
    assert ranked[0].piece_id is None and ranked[0].chunk_id == 11  # the record it came from


def test_a_stage_adds_a_new_record_and_never_changes_one():
    found = cand(1, 0.4)
    with pytest.raises(FrozenInstanceError):
        found.final = Place(1, 0.9)
    reranked = replace(found, rerank=Place(1, 0.9))
    assert found.rerank is None and reranked.final == found.final
