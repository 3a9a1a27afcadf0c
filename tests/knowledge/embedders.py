"""A small real embedder for tests: fast, deterministic, behind the same Embedder protocol."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from knowledge.embedding import Embeddings


class TrigramEmbedder:
    """Signed hashing of character trigrams into 64 dimensions, L2-normalised."""

    model_id = "trigram-hash-64"
    dimensions = 64
    sparse_dimensions = None

    def embed_documents(self, texts: Sequence[str]) -> Embeddings:
        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            padded = f"  {text.lower()}  "
            for i in range(len(padded) - 2):
                code = zlib.crc32(padded[i : i + 3].encode())
                vectors[row, code % self.dimensions] += 1.0 if code & 1 << 20 else -1.0
        norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return Embeddings(vectors / norms)

    def embed_query(self, text: str) -> Embeddings:
        return self.embed_documents([text])
