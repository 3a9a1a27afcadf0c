"""One partial HNSW index per embedding model on a dimension-cast expression.

The ``embedding`` column has no fixed dimension so that a knowledge base can switch models
(``manage.py reembed``). pgvector indexes only vectors of one dimension, so each model gets an
index on ``embedding::vector(d)`` restricted to its rows; queries use the same expression and
predicate (with the model id as a literal) so the planner can use it.
"""

from __future__ import annotations

import hashlib

from django.db import connection, transaction
from psycopg import sql

# HNSW build parameters (pgvector's defaults are m=16, ef_construction=64). Measured on 100,000
# chunks by benchmarks/retrieval_scale.py: see the recall figures there before changing them.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64
_LOCK_CLASS = 0x6B69  # advisory lock namespace ("ki") for creating vector indexes


def index_name(model_id: str) -> str:
    return "chunk_hnsw_" + hashlib.sha1(model_id.encode()).hexdigest()[:12]


def vector_index_exists(model_id: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [index_name(model_id)])
        return bool(cursor.fetchone()[0])


def ensure_vector_index(model_id: str, dimensions: int) -> None:
    """Create the HNSW (cosine) index for ``model_id`` if it does not exist yet.

    Checked first, so that the usual case runs no DDL (DDL on a table with pending deferred
    constraint checks fails inside a transaction).
    """
    if vector_index_exists(model_id):
        return
    with transaction.atomic(), connection.cursor() as cursor:
        # Two workers storing their first chunks at once (a fresh install): one creates the
        # index, the other waits and finds it. CREATE INDEX IF NOT EXISTS alone races (the
        # second fails on pg_class's unique name).
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_LOCK_CLASS, 0])
        if vector_index_exists(model_id):
            return
        cursor.execute(_create_statement(model_id, dimensions).as_string(cursor.connection))


def _create_statement(model_id: str, dimensions: int) -> sql.Composed:
    return sql.SQL(
        "CREATE INDEX IF NOT EXISTS {name} ON knowledge_chunk USING hnsw "
        "((embedding::vector({dims})) vector_cosine_ops) WITH (m = {m}, ef_construction = {ef}) "
        "WHERE embedding_model = {model}"
    ).format(
        name=sql.Identifier(index_name(model_id)),
        dims=sql.Literal(int(dimensions)),
        m=sql.Literal(HNSW_M),
        ef=sql.Literal(HNSW_EF_CONSTRUCTION),
        model=sql.Literal(model_id),
    )


def drop_vector_index(model_id: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            sql.SQL("DROP INDEX IF EXISTS {}")
            .format(sql.Identifier(index_name(model_id)))
            .as_string(cursor.connection)
        )


def stored_dimensions(model_id: str) -> int | None:
    """The dimension of ``model_id``'s stored vectors (None when it has none yet)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT vector_dims(embedding) FROM knowledge_chunk "
            "WHERE embedding_model = %s AND embedding IS NOT NULL LIMIT 1",
            [model_id],
        )
        row = cursor.fetchone()
    return int(row[0]) if row else None


def check_dimensions(model_id: str, dimensions: int, stored: int | None = None) -> None:
    """Refuse vectors of another dimension than the knowledge base holds for the same model
    (an embeddings server that now serves another model under the same name)."""
    from knowledge.embedding import EmbeddingModelMismatch

    stored = stored_dimensions(model_id) if stored is None else stored
    if stored is not None and stored != dimensions:
        raise EmbeddingModelMismatch(
            f"The knowledge base holds {stored}-dimension vectors of {model_id!r} but the model "
            f"now gives {dimensions} dimensions; run 'manage.py reembed' to switch the knowledge "
            "base"
        )
