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
