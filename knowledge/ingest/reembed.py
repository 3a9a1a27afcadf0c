"""Switching a knowledge base to another embedding model (``manage.py reembed``).

Every chunk is embedded again, in batches, from the same text the ingest gave the model (title,
heading path, chunk text), and its vector and model id replaced; then the versions record the
new model and the new model's HNSW index is built (after the updates: building an index once is
much cheaper than growing it row by row). A batch commits on its own, so the portal keeps
running; until the switch is complete, dense search with the old model finds only the chunks
not yet re-embedded (lexical search finds them all). New ingests must use the new model too:
set ``KB_EMBEDDER`` (and restart the workers) before or right after.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q

from knowledge import vector_index
from knowledge.embedding import Embedder
from knowledge.ingest.pipeline import embed_key, text_to_embed
from knowledge.ingest.store import forget_index
from knowledge.models import Chunk, DocumentVersion
from knowledge.vector_index import drop_vector_index, ensure_vector_index, index_name


@dataclass
class ReembedReport:
    model_id: str
    dimensions: int
    chunks: int
    versions: int
    previous_models: list[str]
    index: str


def chunks_to_reembed(model_id: str):
    """Chunks whose vectors are not (yet) the model's."""
    return Chunk.objects.filter(~Q(embedding_model=model_id) | Q(embedding__isnull=True))


def reembed(
    embedder: Embedder, *, batch: int = 64, progress: Callable[[int], None] | None = None
) -> ReembedReport:
    """Re-embed every chunk with ``embedder``; ``progress`` gets the size of each batch done."""
    previous = sorted(
        set(
            Chunk.objects.exclude(embedding_model=embedder.model_id)
            .values_list("embedding_model", flat=True)
            .distinct()
        )
    )
    done = 0
    # Keyset passes by primary key; a further pass catches chunks stored meanwhile by a worker
    # that still used the old model (a few at most: give up after three passes).
    for _ in range(3):
        last_pk = 0
        while rows := list(
            chunks_to_reembed(embedder.model_id)
            .filter(pk__gt=last_pk)
            .order_by("pk")
            .values("pk", "text", "heading_path", "meta", "document__title")[:batch]
        ):
            done += _reembed_rows(embedder, rows)
            last_pk = rows[-1]["pk"]
            if progress:
                progress(len(rows))
        if not chunks_to_reembed(embedder.model_id).exists():
            break
    version_count = (
        DocumentVersion.objects.filter(pk__in=Chunk.objects.values("version_id"))
        .exclude(embedding_model=embedder.model_id)
        .update(embedding_model=embedder.model_id)
    )
    ensure_vector_index(embedder.model_id, embedder.dimensions)
    for model_id in previous:
        if model_id:
            drop_vector_index(model_id)  # its rows are gone from it: nothing left to index
            forget_index(model_id)
    _forget_cached_models()
    return ReembedReport(
        embedder.model_id,
        embedder.dimensions,
        done,
        version_count,
        [m for m in previous if m],
        index_name(embedder.model_id),
    )


def _reembed_rows(embedder: Embedder, rows: list[dict]) -> int:
    from pgvector import SparseVector

    texts = [
        text_to_embed(
            r["document__title"],
            r["heading_path"],
            (r["meta"] or {}).get("embed_text") or r["text"],
        )
        for r in rows
    ]
    output = embedder.embed_documents(texts)
    sparse = output.sparse or [None] * len(rows)
    chunks = [
        Chunk(
            pk=row["pk"],
            embedding=output.dense[i],
            sparse=(
                SparseVector(sparse[i], embedder.sparse_dimensions)
                if sparse[i] and embedder.sparse_dimensions
                else None
            ),
            embedding_model=embedder.model_id,
            embed_key=embed_key(texts[i]),
        )
        for i, row in enumerate(rows)
    ]
    with transaction.atomic():
        Chunk.objects.bulk_update(chunks, ["embedding", "sparse", "embedding_model", "embed_key"])
    return len(chunks)


def _forget_cached_models() -> None:
    # Search checks the stored model once a minute per process; this process (tests, the shell)
    # should see the switch at once. Other processes see it within that minute.
    vector_index.forget_stored()
