"""A model backend chosen on a base install (no models extra) says how to get it, in one line."""

from __future__ import annotations

import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from knowledge.embedding import build_embedder
from knowledge.retrieval.rerank import build_reranker


@pytest.mark.parametrize("library", ["sentence_transformers", "FlagEmbedding"])
def test_a_backend_without_its_library_names_the_extra(tmp_path, monkeypatch, library):
    monkeypatch.setitem(sys.modules, library, None)  # as on a base install: the import fails
    kind = "sentence-transformers" if library == "sentence_transformers" else "bge-m3"
    with pytest.raises(ImproperlyConfigured, match=r"pip install 'knowledge-belt\[models\]'"):
        build_embedder(kind, str(tmp_path))
    reranker = "cross-encoder" if library == "sentence_transformers" else "flag"
    with pytest.raises(ImproperlyConfigured, match=f"KB_RERANKER={reranker} needs the models"):
        build_reranker(reranker, str(tmp_path), "")
