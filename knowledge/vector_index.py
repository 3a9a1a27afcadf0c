"""One partial HNSW index per embedding model on a dimension-cast expression.

The ``embedding`` column has no fixed dimension so that a knowledge base can switch models
(``manage.py reembed``). pgvector indexes only vectors of one dimension, so each model gets an
index on ``embedding::vector(d)`` restricted to its rows; queries use the same expression and
predicate (with the model id as a literal) so the planner can use it.
"""

from __future__ import annotations

import hashlib

from django.db import connection
from psycopg import sql

# HNSW build parameters (pgvector's defaults are m=16, ef_construction=64). Measured on 100,000
# chunks by benchmarks/retrieval_scale.py: see the recall figures there before changing them.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64


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
    statement = sql.SQL(
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
    with connection.cursor() as cursor:
        cursor.execute(statement.as_string(cursor.connection))


def drop_vector_index(model_id: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            sql.SQL("DROP INDEX IF EXISTS {}")
            .format(sql.Identifier(index_name(model_id)))
            .as_string(cursor.connection)
        )
