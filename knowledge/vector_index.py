"""One partial HNSW index per embedding model on a dimension-cast expression.

The ``embedding`` column has no fixed dimension so that a knowledge base can switch models
(``manage.py reembed``). pgvector indexes only vectors of one dimension, so each model gets an
index on ``embedding::vector(d)`` restricted to its rows; queries use the same expression and
predicate (with the model id as a literal) so the planner can use it.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings
from django.db import connection, connections, transaction
from psycopg import sql

_LOCK_CLASS = 0x6B69  # advisory lock namespace ("ki") for creating vector indexes


def build_parameters() -> tuple[int, int]:
    """(m, ef_construction) for new HNSW indexes: ``KB_HNSW_M``, ``KB_HNSW_EF_CONSTRUCTION``.
    benchmarks/retrieval_scale.py measures recall for them; the README's sizing table says
    what a denser graph costs."""
    return settings.HNSW_M, settings.HNSW_EF_CONSTRUCTION


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


def _create_statement(
    model_id: str, dimensions: int, *, name: str = "", concurrently: bool = False
) -> sql.Composed:
    m, ef_construction = build_parameters()
    return sql.SQL(
        "CREATE INDEX {how} IF NOT EXISTS {name} ON knowledge_chunk USING hnsw "
        "((embedding::vector({dims})) vector_cosine_ops) WITH (m = {m}, ef_construction = {ef}) "
        "WHERE embedding_model = {model}"
    ).format(
        how=sql.SQL("CONCURRENTLY" if concurrently else ""),
        name=sql.Identifier(name or index_name(model_id)),
        dims=sql.Literal(int(dimensions)),
        m=sql.Literal(m),
        ef=sql.Literal(ef_construction),
        model=sql.Literal(model_id),
    )


@dataclass(frozen=True)
class VectorIndex:
    model_id: str
    name: str
    dimensions: int | None
    m: int
    ef_construction: int
    size: int  # bytes

    @property
    def current(self) -> bool:
        """Built with the parameters configured now."""
        return (self.m, self.ef_construction) == build_parameters()


def vector_indexes() -> list[VectorIndex]:
    """The HNSW index of each embedding model the chunks hold, with its build parameters
    (pgvector's defaults when the index names none) and size."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT embedding_model FROM knowledge_chunk "
            "WHERE embedding_model <> '' ORDER BY 1"
        )
        models = [row[0] for row in cursor.fetchall()]
    found = []
    for model_id in models:
        name = index_name(model_id)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT coalesce(c.reloptions, '{}'), pg_relation_size(c.oid) FROM pg_class c "
                "WHERE c.oid = to_regclass(%s)",
                [name],
            )
            row = cursor.fetchone()
        if row is None:
            continue
        options = dict(option.split("=", 1) for option in row[0])
        found.append(
            VectorIndex(
                model_id,
                name,
                stored_dimensions(model_id),
                int(options.get("m", 16)),
                int(options.get("ef_construction", 64)),
                int(row[1]),
            )
        )
    return found


def rebuild_vector_index(
    index: VectorIndex,
    progress: Callable[[int, int], None] | None = None,
    *,
    memory: str = "1GB",
) -> None:
    """Build ``index`` again with the configured parameters, beside the old one (CREATE INDEX
    CONCURRENTLY: searches and ingests go on with the old one meanwhile), then put the new one
    in its place. ``progress(done, total)`` is called about once a second with the blocks of
    the chunk table the build has read (PostgreSQL's progress view). ``memory`` is the build's
    ``maintenance_work_mem``: a graph that does not fit is built much more slowly. Runs outside
    a transaction."""
    if index.dimensions is None:
        return
    fresh = index.name + "_new"
    drop = "DROP INDEX CONCURRENTLY IF EXISTS {}"
    with connection.cursor() as cursor:
        # A build killed before (an invalid index of that name) would block this one.
        cursor.execute(sql.SQL(drop).format(sql.Identifier(fresh)).as_string(cursor.connection))
        cursor.execute("SELECT set_config('maintenance_work_mem', %s, false)", [memory])
        statement = _create_statement(
            index.model_id, index.dimensions, name=fresh, concurrently=True
        ).as_string(cursor.connection)
    try:
        _with_progress(lambda: _execute(statement), progress)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET maintenance_work_mem")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(index.name)))
        cursor.execute(
            sql.SQL("ALTER INDEX {} RENAME TO {}").format(
                sql.Identifier(fresh), sql.Identifier(index.name)
            )
        )


def _execute(statement: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement)


def _with_progress(run: Callable[[], None], progress: Callable[[int, int], None] | None) -> None:
    """Run ``run`` while a thread (its own database connection) reports the index build's
    progress."""
    if progress is None:
        run()
        return
    done = threading.Event()

    def watch() -> None:
        try:
            while not done.wait(1.0):
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT blocks_done, blocks_total FROM pg_stat_progress_create_index "
                        "WHERE relid = 'knowledge_chunk'::regclass"
                    )
                    row = cursor.fetchone()
                if row and row[1]:
                    progress(int(row[0]), int(row[1]))
        finally:
            connections.close_all()  # this thread's connection

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        run()
    finally:
        done.set()
        watcher.join()


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


# What search checks once a minute per process (the minute is part of the cache key): the
# embedding models the ready versions were embedded with, and each model's stored dimension.
@lru_cache(maxsize=4)
def _stored_models(stamp: int) -> tuple[str, ...]:
    from knowledge.models import DocumentVersion

    # No ordering: the default one (document, number) would make DISTINCT join and sort every
    # version with its document and source (0.1 s at a million chunks, once a minute).
    ready = DocumentVersion.objects.filter(status=DocumentVersion.Status.READY).order_by()
    return tuple(sorted(set(ready.values_list("embedding_model", flat=True).distinct())))


@lru_cache(maxsize=8)
def _stored_dimensions(model_id: str, stamp: int) -> int | None:
    return stored_dimensions(model_id)


def stored_models_now() -> tuple[str, ...]:
    """The models of the ready versions, read at most once a minute in this process."""
    return _stored_models(int(time.time() // 60))


def stored_dimensions_now(model_id: str) -> int | None:
    return _stored_dimensions(model_id, int(time.time() // 60))


def forget_stored() -> None:
    """Read the models and dimensions afresh (after a re-embedding, in tests)."""
    _stored_models.cache_clear()
    _stored_dimensions.cache_clear()
