"""The bundled USE model: a question's vector with one BLAS thread, documents with the setting.

Several BLAS threads per web process, with the other web processes, the worker and PostgreSQL
on the same cores, waited for each other: one question's vector took hundreds of
milliseconds (benchmarks/load.py). The vectors are the same either way.
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_info

from knowledge.embedding import UseEmbedder


def _blas_threads() -> int:
    return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")


def test_a_question_uses_one_blas_thread_and_documents_the_setting():
    embedder = UseEmbedder(threads=2)
    embedder.embed_documents(["warm up"])  # loads the backend
    backend = embedder._model._backend
    seen: list[int] = []
    real = backend._encode

    def spy(texts):
        seen.append(_blas_threads())
        return real(texts)

    backend._encode = spy
    question = embedder.embed_query("Сколько стоит подписка?").dense
    documents = embedder.embed_documents(["Сколько стоит подписка?", "Другой текст"]).dense
    assert seen == [1, 2]
    assert np.allclose(question[0], documents[0], atol=1e-5)


def test_a_batch_of_documents_is_split_over_copies_with_the_same_vectors_in_order():
    texts = [f"Раздел {i}: требования к приложению, пункт {i * 7}." for i in range(12)]
    texts[3] = "A much longer English passage about the test programme " * 20
    split = UseEmbedder(threads=2)
    alone = UseEmbedder(threads=1)
    threads_seen: list[int] = []
    vectors = split.embed_documents(texts).dense
    for model, _lock in split._copies:
        real = model._backend._encode

        def spy(batch, real=real):
            threads_seen.append(_blas_threads())
            return real(batch)

        model._backend._encode = spy
    again = split.embed_documents(texts).dense
    assert len(split._copies) == 2  # the model and one copy, each given part of the batch
    assert threads_seen == [1, 1]
    expected = alone.embed_documents(texts).dense
    assert vectors.shape == (12, 512)
    assert np.allclose(vectors, expected, atol=1e-5)
    assert np.allclose(again, expected, atol=1e-5)


def test_balanced_slices_cover_every_text_once_with_similar_lengths():
    from knowledge.embedding import balanced_slices

    assert balanced_slices(["a" * 10] * 10, 2) == [(0, 5), (5, 10)]
    assert balanced_slices(["a"] * 9 + ["a" * 100], 2) == [(0, 9), (9, 10)]
    assert balanced_slices(["a" * 100] + ["a"] * 9, 2) == [(0, 1), (1, 10)]
    assert balanced_slices(["x"] * 3, 4) == [(0, 1), (1, 2), (2, 3)]
    assert balanced_slices(["a" * 5] * 9, 3) == [(0, 3), (3, 6), (6, 9)]
