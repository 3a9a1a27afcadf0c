"""The ingest pipeline for one version: claim -> parse -> chunk -> embed -> store.

Idempotent by state, not by hope:
- a run claims the version with a compare-and-set on its status and a fresh claim token; a
  second run at the same time finds it claimed and returns; a run whose claim was taken over
  (its worker looked dead) discards its work at the end;
- the version's chunks are replaced in one transaction, so search never sees half a set;
- a version whose worker died mid-ingest (heartbeat older than KB_INGEST_STALE_SECONDS) can be
  claimed again by the next run: the beat task re-enqueues it, the reindex button forces it.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from knowledge import termstats
from knowledge.chunking import ChunkDraft, Chunker, ChunkingConfig
from knowledge.embedding import Embedder, get_embedder
from knowledge.models import Chunk, Document, DocumentVersion
from knowledge.parsing.base import ParsedDocument, ParseError
from knowledge.parsing.registry import parse_document
from knowledge.storage import read_blob
from knowledge.vector_index import ensure_vector_index

logger = logging.getLogger(__name__)
Status = DocumentVersion.Status
Progress = Callable[[int, str], None]  # percent, stage


class ClaimLost(Exception):
    """Another run took this version over; this run's work is discarded."""


@dataclass
class IngestResult:
    version_id: int
    status: str  # ready, failed, skipped (claimed elsewhere or already done)
    chunks: int = 0
    error: str = ""
    timings: dict[str, float] = field(default_factory=dict)


def claim_version(version_id: int, *, force: bool = False) -> str | None:
    """Compare-and-set the version into "parsing"; returns the claim token, or None if taken.

    Claimable: pending; active with a stale heartbeat (its worker died); with ``force`` also
    ready and failed (reindex).
    """
    stale = timezone.now() - timedelta(seconds=settings.INGEST_STALE_SECONDS)
    claimable = Q(status=Status.PENDING) | Q(
        status__in=DocumentVersion.ACTIVE, heartbeat_at__lt=stale
    )
    claimable |= Q(status__in=DocumentVersion.ACTIVE, heartbeat_at__isnull=True)
    if force:
        claimable |= Q(status__in=[Status.READY, Status.FAILED])
    token = uuid.uuid4().hex
    updated = DocumentVersion.objects.filter(claimable, pk=version_id).update(
        status=Status.PARSING,
        claim_token=token,
        heartbeat_at=timezone.now(),
        progress=0,
        stage="parsing",
        error="",
    )
    if updated:
        DocumentVersion.objects.filter(pk=version_id).update(attempts=F("attempts") + 1)
    return token if updated else None


def _beat(version_id: int, token: str, **fields) -> None:
    """Record progress; raises ClaimLost when another run owns the version now."""
    updated = DocumentVersion.objects.filter(pk=version_id, claim_token=token).update(
        heartbeat_at=timezone.now(), **fields
    )
    if not updated:
        raise ClaimLost(version_id)


def ingest_version(
    version_id: int,
    *,
    force: bool = False,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
) -> IngestResult:
    """Parse, chunk, embed and store one version; the single service behind every entry point."""
    token = claim_version(version_id, force=force)
    if token is None:
        return IngestResult(version_id, "skipped")
    version = DocumentVersion.objects.select_related("document__source").get(pk=version_id)
    report = progress or (lambda percent, stage: None)
    timings: dict[str, float] = {}
    try:
        parsed = _timed(timings, "parse_s", lambda: _parse(version))
        drafts = _timed(timings, "chunk_s", lambda: _chunk(parsed))
        _save_parsed(version, token, parsed, drafts)
        report(10, "embedding")
        embedder = embedder or get_embedder()
        vectors = _timed(
            timings, "embed_s", lambda: _embed(version, token, parsed, drafts, embedder, report)
        )
        _timed(
            timings, "store_s", lambda: _store(version, token, parsed, drafts, vectors, embedder)
        )
        DocumentVersion.objects.filter(pk=version_id).update(timings=timings)
        report(100, "ready")
        return IngestResult(version_id, "ready", len(drafts), timings=timings)
    except ClaimLost:
        logger.warning(
            "version %s was claimed by another run; this run's work is dropped", version_id
        )
        return IngestResult(version_id, "skipped")
    except ParseError as exc:
        _fail(version_id, token, str(exc), timings)
        return IngestResult(version_id, "failed", error=str(exc), timings=timings)
    except MemoryError:
        _fail(
            version_id,
            token,
            "The document is too large to index with the memory available",
            timings,
        )
        return IngestResult(version_id, "failed", error="out of memory", timings=timings)
    except TRANSIENT_ERRORS:
        # Give the version back so the retry (or the stall recovery) can claim it again.
        DocumentVersion.objects.filter(pk=version_id, claim_token=token).update(
            status=Status.PENDING, stage="waiting to retry", claim_token=""
        )
        raise
    except Exception as exc:
        logger.exception("ingest of version %s failed", version_id)
        message = f"Internal error while indexing ({type(exc).__name__}); the administrators can see the log"
        _fail(version_id, token, message, timings)
        return IngestResult(version_id, "failed", error=message, timings=timings)


def _transient_errors() -> tuple[type[BaseException], ...]:
    from django.db import InterfaceError, OperationalError

    return (OperationalError, InterfaceError, ConnectionError, TimeoutError)


TRANSIENT_ERRORS = _transient_errors()


def _timed(timings: dict[str, float], key: str, step):
    started = time.perf_counter()
    try:
        return step()
    finally:
        timings[key] = round(time.perf_counter() - started, 3)


def _parse(version: DocumentVersion) -> ParsedDocument:
    try:
        data = read_blob(version.file.name)
    except OSError:
        raise ParseError("The stored file of this version is missing; upload it again") from None
    return parse_document(data, version.filename)


def _chunk(parsed: ParsedDocument) -> list[ChunkDraft]:
    config = ChunkingConfig(
        max_tokens=settings.CHUNK_MAX_TOKENS,
        min_tokens=settings.CHUNK_MIN_TOKENS,
        overlap=settings.CHUNK_OVERLAP,
    )
    drafts = Chunker(config).chunk(parsed)
    if not drafts:
        raise ParseError("The document contains no text")
    return drafts


def _save_parsed(
    version: DocumentVersion, token: str, parsed: ParsedDocument, drafts: list[ChunkDraft]
) -> None:
    _beat(
        version.pk,
        token,
        status=Status.EMBEDDING,
        stage="embedding",
        progress=10,
        parsed=parsed.to_dict(),
        format=parsed.metadata.get("format", ""),
        block_count=len(parsed.blocks),
        chunk_count=len(drafts),
        table_count=sum(1 for b in parsed.blocks if b.kind in ("table", "test_case")),
        page_count=max([b.page or 0 for b in parsed.blocks] or [0]),
    )


def embedding_text(title: str, draft: ChunkDraft) -> str:
    """What the model sees: the document title and heading path give a chunk its context."""
    path = [p for p in draft.heading_path if p]
    head = path if path and path[0] == title else [title, *path]
    return " › ".join(h for h in head if h) + "\n\n" + draft.text


def _embed(version, token, parsed, drafts, embedder: Embedder, report: Progress):
    batch = settings.EMBED_BATCH
    texts = [embedding_text(parsed.title or version.document.title, d) for d in drafts]
    dense, sparse = [], []
    for start in range(0, len(texts), batch):
        output = embedder.embed_documents(texts[start : start + batch])
        dense.extend(output.dense)
        sparse.extend(output.sparse or [None] * len(output.dense))
        percent = 10 + int(85 * min(len(texts), start + batch) / len(texts))
        _beat(version.pk, token, progress=percent)
        report(percent, "embedding")
    return dense, sparse


def _store(version, token, parsed, drafts, vectors, embedder: Embedder) -> None:
    from pgvector import SparseVector

    dense, sparse = vectors
    ensure_vector_index(embedder.model_id, embedder.dimensions)
    document = version.document
    rows = [
        Chunk(
            version=version,
            document=document,
            source_id=document.source_id,
            position=i,
            text=d.text,
            heading_path=d.heading_path,
            section=d.section,
            sections=d.sections,
            block_type=d.block_type,
            block_start=d.block_start,
            block_end=d.block_end,
            page=d.page,
            sheet=d.sheet,
            row_start=d.row_start,
            row_end=d.row_end,
            meta=d.meta,
            token_count=d.token_count,
            language=parsed.language,
            embedding=dense[i],
            sparse=(
                SparseVector(sparse[i], embedder.sparse_dimensions)
                if sparse[i] and embedder.sparse_dimensions
                else None
            ),
            embedding_model=embedder.model_id,
        )
        for i, d in enumerate(drafts)
    ]
    with transaction.atomic():
        locked = DocumentVersion.objects.select_for_update().get(pk=version.pk)
        if locked.claim_token != token:
            raise ClaimLost(version.pk)
        Chunk.objects.filter(version=locked).delete()
        Chunk.objects.bulk_create(rows, batch_size=500)
        _fill_search_vectors(locked.pk, parsed.title or document.title)
        now = timezone.now()
        DocumentVersion.objects.filter(pk=locked.pk).update(
            status=Status.READY,
            progress=100,
            stage="",
            error="",
            ready_at=now,
            heartbeat_at=now,
            embedding_model=embedder.model_id,
            chunk_count=len(rows),
            claim_token="",
        )
        _update_document(document, parsed)
        refresh_searchable(document.pk)


def _fill_search_vectors(version_id: int, title: str) -> None:
    # Weight A: the heading path; B: the document title; D: the body. Ranking boosts A and B.
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE knowledge_chunk SET search_vector =
                setweight(to_tsvector(language::regconfig, array_to_string(heading_path, ' ')), 'A')
                || setweight(to_tsvector(language::regconfig, %s), 'B')
                || setweight(to_tsvector(language::regconfig, text), 'D')
            WHERE version_id = %s
            """,
            [title, version_id],
        )
        cursor.execute(
            "UPDATE knowledge_chunk SET lexeme_count = length(search_vector) WHERE version_id = %s",
            [version_id],
        )


def _update_document(document: Document, parsed: ParsedDocument) -> None:
    fields = {"language": parsed.language}
    if parsed.title and parsed.title.strip():
        fields["title"] = parsed.title.strip()[:500]
    Document.objects.filter(pk=document.pk).update(**fields, updated_at=timezone.now())


def refresh_searchable(document_id: int) -> None:
    """Make the newest ready version the only searchable one (call inside a transaction)."""
    document = Document.objects.select_for_update().get(pk=document_id)
    newest = (
        DocumentVersion.objects.filter(document_id=document_id, status=Status.READY)
        .order_by("-number")
        .first()
    )
    live = newest is not None and document.removed_at is None
    going_off = Chunk.objects.filter(document_id=document_id, searchable=True)
    if live:
        going_off = going_off.exclude(version=newest)
    off_ids = list(going_off.values_list("pk", flat=True))
    on_ids = (
        list(Chunk.objects.filter(version=newest, searchable=False).values_list("pk", flat=True))
        if live
        else []
    )
    # Statistics first, while the rows still say what they were.
    termstats.apply_flip(on_ids, off_ids)
    Chunk.objects.filter(pk__in=off_ids).update(searchable=False)
    Chunk.objects.filter(pk__in=on_ids).update(searchable=True)
    Document.objects.filter(pk=document_id).update(current_version=newest)


def _fail(version_id: int, token: str, message: str, timings: dict[str, float]) -> None:
    with transaction.atomic():
        updated = DocumentVersion.objects.filter(pk=version_id, claim_token=token).update(
            status=Status.FAILED,
            error=message,
            stage="",
            claim_token="",
            timings=timings,
            heartbeat_at=timezone.now(),
        )
        if updated:
            # A failed re-ingest must not leave stale chunks of this version searchable.
            document_id = DocumentVersion.objects.values_list("document_id", flat=True).get(
                pk=version_id
            )
            refresh_searchable(document_id)
