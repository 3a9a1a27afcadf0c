"""Second vectors: every unit (sentence, list item, table row) of every searchable chunk, read
by multilingual-e5-small.

A version is searchable as soon as its chunks are stored with their words and first vector
(the ingest). The second vectors come after, from ``fill_second_vectors`` (the Celery task
``knowledge.fill_second_vectors``, queued when a version is ready and by the beat): it claims a
batch of searchable chunks that have none of the current model and cutting (``SELECT … FOR
UPDATE SKIP LOCKED``: two workers fill different batches), embeds their units and stores them,
batch by batch, so the Documents page can show how far it has got (``progress``). A chunk whose
text an earlier version already had takes those vectors again. A change of model (or of where
it runs) or of the cutting needs no downtime: vectors of another model or cutting are not read
by search and are replaced here.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection, transaction

from knowledge.embedding import SECOND_MODEL_ID, Embedder, get_second_embedder
from knowledge.models import Chunk, ChunkVector
from knowledge.units import CUTTING, Unit, quotable, units

BATCH = 8  # chunks claimed, embedded and stored together (their units in one model call)
RECENT_UNITS = 20_000  # unit vectors a run keeps to reuse by text (half precision: 15 MB)
UNIT_CHARS = 600  # of a unit the model reads (a long table row or list item: its start)


@dataclass(frozen=True)
class Progress:
    """How many searchable chunks have their second vectors of ``model_id``."""

    model_id: str
    done: int
    total: int

    @property
    def complete(self) -> bool:
        return self.done >= self.total

    @property
    def percent(self) -> int:
        return 100 if not self.total else min(100, 100 * self.done // self.total)


def units_key(found: list[Unit]) -> str:
    """Which cutting of a chunk's text a set of vectors belongs to."""
    digest = hashlib.sha1()
    for unit in found:
        digest.update(unit.embed_text.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def unit_texts(found: list[Unit]) -> list[str | None]:
    """What the model reads of each unit; None for a unit it need not read (a list of links,
    a label of one or two words: never quoted, and no evidence of meaning)."""
    return [u.embed_text[:UNIT_CHARS] if quotable(u) else None for u in found]


def pack(vectors: np.ndarray) -> bytes:
    return np.asarray(vectors, dtype=np.float16).tobytes()


def unpack(data: bytes | memoryview, count: int) -> np.ndarray:
    """The stored vectors as float32 rows (``count`` x dimensions)."""
    flat = np.frombuffer(bytes(data), dtype=np.float16)
    return flat.reshape(count, -1).astype(np.float32) if count else flat.reshape(0, 0)


def progress(source_ids: list[int] | None = None) -> Progress | None:
    """The second vectors' progress over the searchable chunks of ``source_ids`` (None: every
    source); None when they are turned off. The model is not loaded to tell."""
    if settings.SECOND_EMBEDDER == "none":
        return None
    where, params = "c.searchable", [SECOND_MODEL_ID]
    if source_ids is not None:
        where += " AND c.source_id = ANY(%s)"
        params.append(list(source_ids))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), count(v.chunk_id) FROM knowledge_chunk c "
            "LEFT JOIN knowledge_chunkvector v ON v.chunk_id = c.id AND v.model_id = %s "
            f"AND v.cutting = {CUTTING:d} WHERE {where}",
            params,
        )
        total, done = cursor.fetchone()
    return Progress(SECOND_MODEL_ID, int(done), int(total))


def fill_second_vectors(
    embedder: Embedder | None = None,
    *,
    budget: float | None = None,
    batch: int = BATCH,
    report=None,
) -> tuple[int, bool]:
    """Embed the units of searchable chunks that lack second vectors of the model, batch by
    batch, for at most ``budget`` seconds (None: until none is left); ``report(done)`` after
    each batch. Returns (chunks done, more left)."""
    embedder = embedder or get_second_embedder()
    if embedder is None:
        return 0, False
    started = time.monotonic()
    done = 0
    recent: dict[str, np.ndarray] = {}  # this run's unit vectors by text
    while budget is None or time.monotonic() - started < budget:
        if len(recent) > RECENT_UNITS:
            recent.clear()
        filled = _fill_batch(embedder, batch, recent)
        if filled is None:
            return done, False
        done += filled
        if report is not None:
            report(done)
    return done, missing_exists(embedder.model_id)


def _fill_batch(embedder: Embedder, size: int, recent: dict[str, np.ndarray]) -> int | None:
    """One batch claimed, embedded and stored in one transaction; None when nothing is left
    (or every missing chunk is claimed by another run)."""
    with transaction.atomic():
        rows = _claim(embedder.model_id, size)
        if not rows:
            return None
        cut = {pk: units(text) for pk, text in rows}
        keys = {pk: units_key(found) for pk, found in cut.items()}
        known = _reusable(embedder.model_id, set(keys.values()))
        todo = [pk for pk in cut if keys[pk] not in known and cut[pk]]
        texts = [text for pk in todo for text in unit_texts(cut[pk]) if text is not None]
        # A row unit repeats rows of its table piece, a page repeats a sentence: each text is
        # read once, in this batch or in one of the run's before (``recent``: the demo's 18,716
        # units are 17,240 texts). A unit not read gets a zero vector (its cosine to anything
        # is 0).
        distinct = list(dict.fromkeys(texts))
        new = [t for t in distinct if t not in recent]
        if new:
            for text, vector in zip(new, embedder.embed_documents(new).dense, strict=True):
                recent[text] = np.asarray(vector, dtype=np.float16)  # as stored
        dense = (
            np.vstack([recent[t] for t in distinct]).astype(np.float32)
            if distinct
            else np.zeros((0, embedder.dimensions), dtype=np.float32)
        )
        matrix = np.vstack([dense, np.zeros((1, dense.shape[1]), dtype=np.float32)])
        row = {text: i for i, text in enumerate(distinct)}
        for pk in todo:
            at = [row[t] if t is not None else len(distinct) for t in unit_texts(cut[pk])]
            known[keys[pk]] = (pack(matrix[at]), len(at))
        ChunkVector.objects.bulk_create(
            [
                ChunkVector(
                    chunk_id=pk,
                    model_id=embedder.model_id,
                    cutting=CUTTING,
                    units_key=keys[pk],
                    count=known.get(keys[pk], (b"", 0))[1],
                    vectors=known.get(keys[pk], (b"", 0))[0],
                )
                for pk in cut
            ],
            update_conflicts=True,
            unique_fields=["chunk"],
            update_fields=["model_id", "cutting", "units_key", "count", "vectors"],
        )
    return len(rows)


def _claim(model_id: str, size: int) -> list[tuple[int, str]]:
    """Searchable chunks without vectors of ``model_id``, locked for this transaction; chunks
    another run holds are skipped."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.id, c.text FROM knowledge_chunk c "
            "WHERE c.searchable AND NOT EXISTS (SELECT 1 FROM knowledge_chunkvector v "
            "WHERE v.chunk_id = c.id AND v.model_id = %s AND v.cutting = %s) "
            "ORDER BY c.id LIMIT %s FOR UPDATE OF c SKIP LOCKED",
            [model_id, CUTTING, size],
        )
        return cursor.fetchall()


def _reusable(model_id: str, keys: set[str]) -> dict[str, tuple[bytes, int]]:
    """Vectors already made for the same units (an earlier version's chunk, a row unit that
    repeats its table's rows): units key -> (vectors, count)."""
    if not keys:
        return {}
    rows = ChunkVector.objects.filter(
        model_id=model_id, cutting=CUTTING, units_key__in=keys
    ).values_list("units_key", "vectors", "count")
    return {key: (bytes(data), count) for key, data, count in rows}


def missing_exists(model_id: str) -> bool:
    current = ChunkVector.objects.filter(model_id=model_id, cutting=CUTTING)
    return Chunk.objects.filter(searchable=True).exclude(pk__in=current.values("chunk_id")).exists()


def stored_vectors(chunk_ids: list[int], model_id: str = SECOND_MODEL_ID) -> dict[int, np.ndarray]:
    """The unit vectors of these chunks (those that have them, of this model and of today's
    cutting): chunk id -> (units x dimensions), in the units' order. A chunk's text never
    changes once stored (a new version stores new chunks), so the cutting's version is all
    there is to check."""
    if not chunk_ids:
        return {}
    rows = ChunkVector.objects.filter(
        chunk_id__in=chunk_ids, model_id=model_id, cutting=CUTTING
    ).values_list("chunk_id", "count", "vectors")
    return {pk: unpack(data, count) for pk, count, data in rows if count}
