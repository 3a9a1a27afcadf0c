"""The rerank step behind its one interface (``knowledge.retrieval.rerank.Reranker``).

Without a configured reranker the step is skipped and the result says so. A small real
reranker (word overlap) stands in for a cross-encoder where the test is about the pipeline;
the torch backends are run on a tiny cross-encoder built here when the models extra is
installed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest

from knowledge.models import Chunk
from knowledge.retrieval import rerank
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.weights import Hits
from tests.knowledge.retrieval.conftest import add_document, make_source

HANDBOOK = """# Cooling plant handbook

## Pump maintenance

The circulation pump is inspected every month by the maintenance team. Check the bearings,
the seals and the vibration level.

## Pressure sensors

Quartz pressure sensors measure the pressure in the cooling loop. Calibrate each sensor once
a year against the reference gauge.

## Sensor log

Write every calibration offset of a pressure sensor into the sensor log, with the date and
the name of the engineer.
"""

QUESTION = "who calibrates the quartz pressure sensors against the reference gauge"


class WordOverlapReranker:
    """Share of the question's words (3+ letters) that the passage contains: a weak but real
    reranker, enough to see what the pipeline does with a reranker's scores."""

    model_id = "word-overlap"

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        self.calls.append((query, list(passages)))
        words = set(re.findall(r"\w{3,}", query.lower()))
        return [len(words & set(re.findall(r"\w{3,}", p.lower()))) / len(words) for p in passages]


@pytest.fixture
def handbook(db, embedder):
    return add_document(make_source("Plant"), "handbook.md", HANDBOOK, embedder)


@pytest.fixture
def no_configured_reranker(settings):
    settings.RERANKER = "none"
    rerank.get_reranker.cache_clear()
    yield
    rerank.get_reranker.cache_clear()


def test_without_a_reranker_the_step_is_skipped_and_the_result_says_so(
    handbook, embedder, ranking_weights, no_configured_reranker
):
    ranking_weights(
        gate={"min_score": 0.0},
        rerank={"min_score": 2.0},  # would refuse everything if the rerank threshold applied
    )
    result = search(QUESTION, embedder=embedder)  # reranker=True: the configured one
    assert rerank.get_reranker() is None
    assert not result.reranked
    assert "no reranker configured" in result.rerank_note
    assert "rerank" not in result.timings
    assert all(c.rerank is None for c in result.candidates)
    assert result.hits  # the search threshold, not the rerank one, applied


def test_a_configured_reranker_that_names_no_folder_is_a_configuration_error(settings):
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured, match="KB_RERANKER_PATH"):
        rerank.build_reranker("cross-encoder", "/nonexistent/reranker")
    with pytest.raises(ImproperlyConfigured, match="not one of"):
        rerank.build_reranker("colbert", "/tmp")
    assert rerank.build_reranker("none", "") is None


def test_rerank_can_be_turned_off_for_one_search(handbook, embedder):
    reranker = WordOverlapReranker()
    result = search(
        QUESTION, options=SearchOptions(rerank=False), embedder=embedder, reranker=reranker
    )
    assert not result.reranked
    assert result.rerank_note == "rerank off for this search"
    assert reranker.calls == []


def test_the_reranker_reorders_the_candidates_and_its_score_is_final(
    handbook, embedder, ranking_weights
):
    ranking_weights(rerank={"min_score": 0.0})
    reranker = WordOverlapReranker()
    result = search(
        QUESTION,
        options=SearchOptions(hits=Hits(per_document=5)),
        embedder=embedder,
        reranker=reranker,
    )
    assert result.reranked
    assert result.rerank_note == "reranked by word-overlap"
    assert "rerank" in result.timings
    texts = dict(Chunk.objects.filter(document=handbook).values_list("pk", "text"))
    expected = reranker.score(result.retrieval_query, [texts[c.chunk_id] for c in result.hits])
    assert [c.rerank.score for c in result.hits] == pytest.approx(expected)
    assert [c.score for c in result.hits] == [c.rerank.score for c in result.hits]
    assert expected == sorted(expected, reverse=True)
    assert [c.rerank.rank for c in result.hits] == list(range(1, len(result.hits) + 1))
    # The stages before it keep their own: each hit's calibrated score and fused place are
    # those of the same search without the rerank step.
    plain = search(
        QUESTION, options=SearchOptions(hits=Hits(per_document=5), rerank=False), embedder=embedder
    )
    before = {c.chunk_id: (c.calibrated, c.fused) for c in plain.candidates}
    assert [before[c.chunk_id] for c in result.hits] == [
        (c.calibrated, c.fused) for c in result.hits
    ]
    # The reranker saw the question without filter phrases, and the chunks' own text.
    query, passages = reranker.calls[0]
    assert query == result.retrieval_query
    assert set(passages) <= set(texts.values())


def test_only_the_best_fused_candidates_are_reranked(handbook, embedder, ranking_weights):
    ranking_weights(rerank={"candidates": 2, "min_score": 0.0})
    reranker = WordOverlapReranker()
    result = search(
        QUESTION,
        options=SearchOptions(hits=Hits(per_document=5)),
        embedder=embedder,
        reranker=reranker,
    )
    assert len(reranker.calls[0][1]) == 2
    assert len(result.hits) == 2
    assert {c.fused.rank for c in result.hits} == {1, 2}


def test_the_rerank_minimum_score_applies_after_rerank(handbook, embedder, ranking_weights):
    ranking_weights(
        gate={"min_score": 2.0},  # would refuse everything if the search threshold applied
        rerank={"min_score": 0.5},
    )
    result = search(
        QUESTION,
        options=SearchOptions(hits=Hits(per_document=5)),
        embedder=embedder,
        reranker=WordOverlapReranker(),
    )
    assert result.hits
    assert all(c.rerank.score >= 0.5 for c in result.hits)
    assert all(c.rerank.score < 0.5 for c in result.near_misses)


# --- the torch backends, on a tiny cross-encoder built here ---------------------------------


def _tiny_cross_encoder(folder) -> None:
    """A one-layer BERT with a one-label head and a word-level vocabulary of the handbook."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    torch.manual_seed(7)
    words = sorted(set(re.findall(r"\w+", (HANDBOOK + QUESTION).lower())))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    folder.mkdir()
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), model_max_length=512)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=1,
        initializer_range=0.5,  # spread logits: passages get visibly different scores
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    folder = tmp_path_factory.mktemp("rerank") / "tiny-cross-encoder"
    _tiny_cross_encoder(folder)
    return folder


@pytest.mark.models
@pytest.mark.parametrize(
    ("kind", "package"), [("cross-encoder", "sentence_transformers"), ("flag", "FlagEmbedding")]
)
def test_the_configured_cross_encoder_reranks_the_search(
    handbook, embedder, settings, ranking_weights, tiny_cross_encoder, kind, package
):
    pytest.importorskip(package)
    settings.RERANKER, settings.RERANKER_PATH, settings.RERANKER_ID = (
        kind,
        str(tiny_cross_encoder),
        "",
    )
    ranking_weights(rerank={"min_score": 0.0})
    rerank.get_reranker.cache_clear()
    try:
        reranker = rerank.get_reranker()
        options = SearchOptions(hits=Hits(per_document=5))
        result = search(QUESTION, options=options, embedder=embedder)
    finally:
        rerank.get_reranker.cache_clear()
    assert result.reranked
    assert result.rerank_note == f"reranked by {reranker.model_id}"
    assert reranker.model_id.endswith(":tiny-cross-encoder")
    texts = dict(Chunk.objects.filter(document=handbook).values_list("pk", "text"))
    scores = reranker.score(result.retrieval_query, [texts[c.chunk_id] for c in result.hits])
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert [c.rerank.score for c in result.hits] == pytest.approx(scores, abs=1e-5)
    assert scores == sorted(scores, reverse=True)
    assert len({round(s, 6) for s in scores}) > 1
