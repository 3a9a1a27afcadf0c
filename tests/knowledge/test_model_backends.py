"""The torch code paths (FlagEmbedding, sentence-transformers) on tiny models built here.

Nothing is downloaded. One tiny XLM-RoBERTa (hidden size 32, 2 layers, 2 heads, bge-m3's
architecture) gets a tokenizer BPE-trained on this file's own sentences, and is saved three
ways, as the admin's local folders would hold the real models:

- a bge-m3-style folder with the ``sparse_linear.pt`` and ``colbert_linear.pt`` heads that
  FlagEmbedding loads beside the encoder (without them it initialises both heads at random);
- a sentence-transformers folder: ``modules.json`` with a Transformer and a mean Pooling module;
- a cross-encoder with a one-label sequence-classification head, read by both FlagReranker and
  sentence-transformers' CrossEncoder.

The models are built once per test session, in a fraction of a second (about 700 kB on disk);
importing torch, transformers and FlagEmbedding takes far longer.
"""

from __future__ import annotations

import importlib.util
import json
import os
import string
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from django.test import override_settings

if not all(
    importlib.util.find_spec(m) for m in ("torch", "FlagEmbedding", "sentence_transformers")
):
    # Only a missing package skips; a broken install fails on import below, loudly.
    pytest.skip(
        "needs the models extra: pip install -e '.[dev,models]' (./kb test installs it)",
        allow_module_level=True,
    )

pytestmark = pytest.mark.models

ROOT = Path(__file__).resolve().parents[2]

HIDDEN = 32
SPECIAL_TOKENS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]  # XLM-R's ids 0..3, then <mask>
CYRILLIC = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"
# Every letter is a token, so no word of a test becomes <unk>.
ALPHABET = string.ascii_letters + string.digits + string.punctuation + CYRILLIC + CYRILLIC.upper()

HANDBOOK = """# Cooling plant handbook

## Pump maintenance

The circulation pump is inspected every month by the maintenance team. Check the bearings,
the seals and the vibration level, and replace the impeller when the flow drops.

## Quartz pressure sensors

Quartz pressure sensors measure the pressure in the cooling loop. Calibrate each sensor
against the reference gauge once a year and write the offset into the sensor log.

## Отпуск

Заявление на отпуск подают руководителю группы за две недели до начала отпуска.
"""

TOKENIZER_CORPUS = [
    *HANDBOOK.splitlines(),
    "The pump must be checked every month by the maintenance team.",
    "Насос проверяют каждый месяц силами службы эксплуатации.",
    "Кварцевые датчики измеряют давление в контуре охлаждения.",
    "Vacation requests go to the team lead two weeks in advance.",
    "Where is the reference gauge kept, and who calibrates the sensors?",
]


@dataclass(frozen=True)
class TinyModels:
    bge_m3: Path
    sentence_transformer: Path
    cross_encoder: Path


def _tiny_tokenizer():
    """An XLM-R style fast tokenizer (Metaspace pieces, XLM-R's special tokens and pairing),
    BPE-trained on a few lines so that their words are whole tokens."""
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import XLMRobertaTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(
        vocab_size=500, special_tokens=SPECIAL_TOKENS, initial_alphabet=list(ALPHABET)
    )
    tokenizer.train_from_iterator(TOKENIZER_CORPUS, trainer)
    # "<s> A </s></s> B </s>", as XLM-R (and so bge-m3 and bge-reranker-v2-m3) pairs texts.
    tokenizer.post_processor = processors.RobertaProcessing(sep=("</s>", 2), cls=("<s>", 0))
    return XLMRobertaTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
        model_max_length=512,
    )


def _config(vocab_size: int, **extra):
    from transformers import XLMRobertaConfig

    return XLMRobertaConfig(
        vocab_size=vocab_size,
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=514,  # 512 tokens + XLM-R's padding offset, as in bge-m3
        type_vocab_size=1,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        **extra,
    )


def _save_bge_m3(folder: Path, tokenizer) -> None:
    import torch
    from transformers import XLMRobertaModel

    XLMRobertaModel(_config(len(tokenizer))).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    # Token weight = relu(w . h + b): a bias of 1 keeps every token's weight positive, so a
    # text's sparse vector holds each of its tokens (about 1 each, varied by w).
    sparse = torch.nn.Linear(HIDDEN, 1)
    torch.nn.init.normal_(sparse.weight, std=0.05)
    torch.nn.init.constant_(sparse.bias, 1.0)
    torch.save(sparse.state_dict(), folder / "sparse_linear.pt")
    torch.save(torch.nn.Linear(HIDDEN, HIDDEN).state_dict(), folder / "colbert_linear.pt")


def _save_sentence_transformer(folder: Path, tokenizer) -> None:
    from transformers import XLMRobertaModel

    XLMRobertaModel(_config(len(tokenizer))).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
    ]
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": 128, "do_lower_case": False})
    )
    (folder / "1_Pooling").mkdir()
    pooling = {
        "word_embedding_dimension": HIDDEN,
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
    }
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling))


def _save_cross_encoder(folder: Path, tokenizer) -> None:
    from transformers import XLMRobertaForSequenceClassification

    # A wide initialisation spreads the logits, so different passages get visibly different
    # scores. Identity is what sentence-transformers 4+ saves for cross-encoders trained on raw
    # logits (the ms-marco ones): the reranker must still give [0, 1] on one scale.
    config = _config(
        len(tokenizer),
        num_labels=1,
        initializer_range=0.5,
        sentence_transformers={"activation_fn": "torch.nn.modules.linear.Identity"},
    )
    XLMRobertaForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory) -> TinyModels:
    import torch

    torch.manual_seed(20261101)
    root = tmp_path_factory.mktemp("tiny-models")
    tokenizer = _tiny_tokenizer()
    models = TinyModels(root / "bge-m3-tiny", root / "st-tiny", root / "reranker-tiny")
    for folder, save in [
        (models.bge_m3, _save_bge_m3),
        (models.sentence_transformer, _save_sentence_transformer),
        (models.cross_encoder, _save_cross_encoder),
    ]:
        folder.mkdir()
        save(folder, tokenizer)
    return models


@pytest.fixture(scope="session")
def m3_embedder(tiny_models):
    from knowledge.embedding import build_embedder

    return build_embedder("bge-m3", str(tiny_models.bge_m3))


@pytest.fixture(scope="session")
def st_embedder(tiny_models):
    from knowledge.embedding import build_embedder

    return build_embedder("sentence-transformers", str(tiny_models.sentence_transformer))


@pytest.fixture(scope="session")
def flag_reranker(tiny_models):
    from knowledge.retrieval.rerank import build_reranker

    return build_reranker("flag", str(tiny_models.cross_encoder))


@pytest.fixture(scope="session")
def st_reranker(tiny_models):
    from knowledge.retrieval.rerank import build_reranker

    return build_reranker("cross-encoder", str(tiny_models.cross_encoder))


def _unit_rows(vectors: np.ndarray) -> bool:
    return bool(np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5))


# --- embedders ------------------------------------------------------------------------------------


def test_bge_m3_embedder_gives_unit_dense_vectors_and_sparse_weights_of_each_text(
    m3_embedder, tiny_models
):
    from transformers import AutoTokenizer

    from knowledge.embedding import FlagM3Embedder

    tokenizer = AutoTokenizer.from_pretrained(tiny_models.bge_m3)
    texts = ["The circulation pump is inspected every month.", "Кварцевые датчики давления"]

    out = m3_embedder.embed_documents(texts)

    assert isinstance(m3_embedder, FlagM3Embedder)
    assert m3_embedder.model_id == "bge-m3:bge-m3-tiny"
    assert m3_embedder.dimensions == HIDDEN
    assert m3_embedder.sparse_dimensions == len(tokenizer)
    assert out.dense.shape == (2, HIDDEN) and out.dense.dtype == np.float32
    assert _unit_rows(out.dense)
    assert out.sparse is not None and len(out.sparse) == 2
    specials = set(tokenizer.all_special_ids)
    for text, weights in zip(texts, out.sparse, strict=True):
        # One positive weight per distinct token of the text, keyed by the tokenizer's own ids.
        assert set(weights) == set(tokenizer(text)["input_ids"]) - specials
        assert all(isinstance(k, int) and 0 <= k < len(tokenizer) for k in weights)
        assert all(isinstance(w, float) and w > 0 for w in weights.values())


def test_bge_m3_query_embedding_is_the_document_embedding_of_the_same_text(m3_embedder):
    text = "quartz pressure sensors"

    query = m3_embedder.embed_query(text)
    document = m3_embedder.embed_documents(["the pump", text])

    assert query.dense.shape == (1, HIDDEN)
    np.testing.assert_allclose(query.dense[0], document.dense[1], atol=1e-5)
    assert query.sparse[0].keys() == document.sparse[1].keys()


def test_embedders_accept_an_empty_batch(m3_embedder, st_embedder):
    for embedder in (m3_embedder, st_embedder):
        out = embedder.embed_documents([])
        assert out.dense.shape == (0, embedder.dimensions)


def test_sentence_transformer_embedder_gives_unit_vectors_of_the_model_dimension(st_embedder):
    from knowledge.embedding import SentenceTransformerEmbedder

    texts = ["The pump is inspected every month.", "Заявление на отпуск", "sensor log"]

    out = st_embedder.embed_documents(texts)
    query = st_embedder.embed_query(texts[1])

    assert isinstance(st_embedder, SentenceTransformerEmbedder)
    assert st_embedder.model_id == "st:st-tiny"
    assert st_embedder.dimensions == HIDDEN
    assert st_embedder.sparse_dimensions is None and out.sparse is None
    assert out.dense.shape == (3, HIDDEN) and _unit_rows(out.dense)
    assert not np.allclose(out.dense[0], out.dense[1])
    np.testing.assert_allclose(query.dense[0], out.dense[1], atol=1e-5)


# --- rerankers ------------------------------------------------------------------------------------

PASSAGES = [
    "Quartz pressure sensors measure the pressure in the cooling loop.",
    "Заявление на отпуск подают руководителю группы за две недели.",
    "Check the bearings.",
    "sensor log",
    "The circulation pump is inspected every month by the maintenance team.",
]


@pytest.mark.parametrize("backend", ["flag_reranker", "st_reranker"])
def test_reranker_gives_one_score_in_unit_interval_per_passage(backend, request):
    reranker = request.getfixturevalue(backend)

    scores = reranker.score("who calibrates the quartz sensors?", PASSAGES)

    assert len(scores) == len(PASSAGES)
    assert all(isinstance(s, float) and 0.0 <= s <= 1.0 for s in scores)
    assert len({round(s, 6) for s in scores}) > 1  # the passages are told apart
    assert reranker.score("anything", []) == []
    assert reranker.model_id.endswith(":reranker-tiny")


def test_both_reranker_backends_score_the_same_model_alike(flag_reranker, st_reranker):
    """Same folder, same scale: the sigmoid of the logit, passage by passage, in input order
    (FlagReranker sorts by length internally and must put the scores back), whatever
    activation the folder's config names."""
    query = "who calibrates the quartz sensors?"

    flag = flag_reranker.score(query, PASSAGES)
    cross = st_reranker.score(query, PASSAGES)

    np.testing.assert_allclose(flag, cross, atol=1e-4)
    for reranker, batch in ((flag_reranker, flag), (st_reranker, cross)):
        # A passage's score does not depend on the passages scored with it.
        alone = [reranker.score(query, [p])[0] for p in PASSAGES]
        np.testing.assert_allclose(alone, batch, atol=1e-5)


# --- the pipeline ---------------------------------------------------------------------------------


def _ingest_handbook(embedder) -> dict:
    """Register and ingest HANDBOOK with ``embedder``; its chunks by primary key."""
    from knowledge.ingest.pipeline import ingest_version
    from knowledge.ingest.registration import register_file
    from knowledge.models import Chunk, Source

    source = Source.objects.create(name="Plant")
    registration = register_file(source, "handbook.md", HANDBOOK.encode(), enqueue=False)
    with override_settings(CHUNK_MIN_TOKENS=0):  # one chunk per section
        result = ingest_version(registration.version.pk, embedder=embedder)
    assert result.status == "ready", result.error
    return {c.pk: c for c in Chunk.objects.filter(version=registration.version)}


@pytest.mark.django_db
def test_bge_m3_ingest_and_search_use_sparse_weights_and_rerank(m3_embedder, flag_reranker):
    from knowledge.retrieval.hybrid import search

    chunks = _ingest_handbook(m3_embedder)

    assert len(chunks) == 3
    for chunk in chunks.values():
        assert chunk.embedding_model == m3_embedder.model_id
        assert len(chunk.embedding) == HIDDEN
        assert chunk.sparse is not None
        assert chunk.sparse.dimensions() == m3_embedder.sparse_dimensions
        assert chunk.sparse.indices()  # the chunk's tokens, weighted

    found = search("Quartz pressure sensors", embedder=m3_embedder, reranker=flag_reranker)

    assert any(c.dense and c.dense.rank for c in found.candidates)
    sparse_ranked = sorted(
        (c for c in found.candidates if c.sparse and c.sparse.rank), key=lambda c: c.sparse.rank
    )
    assert sparse_ranked, "the sparse list took no part in the search"
    # The chunk sharing the most tokens with the question leads the sparse list.
    assert "Quartz pressure sensors measure" in chunks[sparse_ranked[0].chunk_id].text
    assert sparse_ranked[0].sparse.score > 0

    assert found.reranked and flag_reranker.model_id in found.rerank_note
    reranked = [c for c in found.candidates if c.rerank is not None]
    assert len(reranked) == 3 and {c.rerank.rank for c in reranked} == {1, 2, 3}
    # Each chunk got the reranker's score of its own text, and the order follows those scores.
    texts = [chunks[c.chunk_id].text for c in reranked]
    expected = flag_reranker.score(found.retrieval_query, texts)
    assert [c.rerank.score for c in reranked] == pytest.approx(expected, abs=1e-5)
    assert [c.score for c in reranked] == sorted((c.score for c in reranked), reverse=True)


# --- the light base install -----------------------------------------------------------------------


def test_default_embedder_loads_no_torch():
    """KB_EMBEDDER=use (the default): the portal, the pipeline and search import no torch stack."""
    heavy = ("torch", "transformers", "FlagEmbedding", "sentence_transformers")
    script = f"""
import importlib, sys
import django
django.setup()
from django.conf import settings
for name in ("knowledge.ingest.pipeline", "knowledge.tasks", "knowledge.retrieval.hybrid",
             settings.ROOT_URLCONF):
    importlib.import_module(name)
from knowledge.embedding import get_embedder
from knowledge.retrieval.rerank import get_reranker
assert settings.EMBEDDER == "use" and get_reranker() is None
get_embedder().embed_query("pump")
print(sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r}))
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KB_EMBEDDER", "KB_RERANKER"))}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )

    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
