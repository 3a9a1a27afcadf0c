"""Reranking behind one interface: a cross-encoder scores (question, passage) pairs.

FlagEmbedding's FlagReranker (bge-reranker-v2-m3) or a sentence-transformers CrossEncoder, from
a local folder. None configured: the step is skipped and the search result says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from knowledge.embedding import models_extra


class Reranker(Protocol):
    model_id: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Relevance of each passage to the query, in [0, 1] (higher is better)."""
        ...


class FlagCrossEncoder:
    def __init__(self, path: str, model_id: str | None = None) -> None:
        from FlagEmbedding import FlagReranker

        self._model = FlagReranker(path, use_fp16=False, devices="cpu")
        self.model_id = model_id or f"flag-reranker:{Path(path).name}"

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        scores = self._model.compute_score([[query, p] for p in passages], normalize=True)
        if isinstance(scores, float):
            scores = [scores]
        return [float(s) for s in scores]


class SentenceTransformersCrossEncoder:
    def __init__(self, path: str, model_id: str | None = None) -> None:
        import torch
        from sentence_transformers import CrossEncoder

        # Always the sigmoid of the logit, whatever activation the folder's config names (some
        # save Identity): one scale for every query, the same as FlagReranker's normalize=True.
        # 512 tokens, as FlagReranker truncates, so both backends score the same text.
        self._model = CrossEncoder(
            path,
            device="cpu",
            local_files_only=True,
            max_length=512,
            activation_fn=torch.nn.Sigmoid(),
        )
        if self._model.num_labels != 1:
            raise ImproperlyConfigured(
                f"the cross-encoder in {path} has {self._model.num_labels} outputs; a reranker "
                "needs one relevance score"
            )
        self.model_id = model_id or f"cross-encoder:{Path(path).name}"

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        scores = self._model.predict(
            [(query, p) for p in passages], show_progress_bar=False, convert_to_numpy=True
        )
        return [float(s) for s in np.asarray(scores, dtype=np.float64).reshape(-1)]


def build_reranker(kind: str, path: str, model_id: str = "") -> Reranker | None:
    if kind in ("", "none"):
        return None
    if not path or not Path(path).is_dir():
        raise ImproperlyConfigured(
            f"KB_RERANKER={kind} needs KB_RERANKER_PATH pointing at a local model folder (got {path!r})"
        )
    if kind == "flag":
        with models_extra(f"KB_RERANKER={kind}"):
            return FlagCrossEncoder(path, model_id or None)
    if kind == "cross-encoder":
        with models_extra(f"KB_RERANKER={kind}"):
            return SentenceTransformersCrossEncoder(path, model_id or None)
    raise ImproperlyConfigured(f"KB_RERANKER={kind!r} is not one of: none, flag, cross-encoder")


@cache
def get_reranker() -> Reranker | None:
    """The configured reranker, loaded once per process; None when none is configured."""
    return build_reranker(settings.RERANKER, settings.RERANKER_PATH, settings.RERANKER_ID)
