"""The ingest pipeline for one version: claim -> parse -> chunk -> embed -> store.

Idempotent by state, not by hope:
- a run claims the version with a compare-and-set on its status and a fresh claim token; a
  second run at the same time finds it claimed and returns; a run whose claim was taken over
  (its worker looked dead) discards its work at the end;
- the version's chunks are replaced in one transaction, so search never sees half a set;
- a version whose worker died mid-ingest (heartbeat older than KB_INGEST_STALE_SECONDS, or its
  process seen gone on this machine: ``portal.processes``) can be claimed again by the next
  run: the task delivered again after a pool process died, the beat task that re-enqueues
  stalled versions, the reindex button;
- a long parse (OCR of a scan) beats after every page: a reindex that took the version over
  (``knowledge.services.reindex``) stops it there.
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django.db.models import F, Q
from django.utils import timezone

from knowledge.chunking import ChunkDraft, Chunker, ChunkingConfig
from knowledge.embedding import (
    Embedder,
    EmbeddingModelMismatch,
    Embeddings,
    EmbeddingUnavailable,
    get_embedder,
)
from knowledge.ingest.storage import read_blob
from knowledge.ingest.store import ClaimLost, refresh_searchable, reusable_vectors, store_chunks
from knowledge.models import Document, DocumentVersion
from knowledge.parsing.base import (
    ParsedDocument,
    ParseError,
    TimeBudgetExceeded,
    memory_budget,
    time_budget,
)
from knowledge.parsing.registry import parse_document
from knowledge.queue import FILL_SECOND_VECTORS, enqueue_once_on_commit
from knowledge.vector_index import check_dimensions
from portal.processes import process_gone, this_process

__all__ = [
    "ClaimLost",
    "IngestResult",
    "Started",
    "claim_version",
    "finish_version",
    "ingest_version",
    "refresh_searchable",
    "start_version",
]

logger = logging.getLogger(__name__)
Status = DocumentVersion.Status
Progress = Callable[[int, str], None]  # percent, stage
# Runs of one version in a row that may end without a word (the worker killed: past the hard
# time limit, out of memory) before it is marked failed instead of being taken up forever: the
# second is the end (a worker killed once by something else, a restart, is taken up again).
MAX_ATTEMPTS = 2
TIME_LIMIT = (
    "Reading and indexing the file took longer than {seconds} s, so it was stopped "
    "(KB_INGEST_TIME_LIMIT_SECONDS): split the document, or ask the administrators to raise "
    "the limit"
)
GAVE_UP = (
    "Indexing stopped {attempts} times without finishing (the worker ran out of time or "
    "memory); it is not tried again until someone reindexes it"
)
# A version that was recognised (OCR) spends most of its time there: the progress bar gives the
# recognition its first 80 %, the embedding the rest; other versions 10 % for the parse.
OCR_SHARE = 80


@dataclass
class IngestResult:
    version_id: int
    status: str  # ready, failed, skipped (claimed elsewhere or already done)
    chunks: int = 0
    error: str = ""
    timings: dict[str, float] = field(default_factory=dict)


def claim_version(version_id: int, *, force: bool = False) -> str | None:
    """Compare-and-set the version into "parsing"; returns the claim token, or None if taken.

    Claimable: pending; active with a stale heartbeat or whose run's process is gone from this
    machine (its worker died); with ``force`` also ready and failed (reindex).
    """
    stale = timezone.now() - timedelta(seconds=settings.INGEST_STALE_SECONDS)
    abandoned = Q(status__in=DocumentVersion.ACTIVE) & (
        Q(heartbeat_at__lt=stale)
        | Q(heartbeat_at__isnull=True)
        | Q(claim_token__in=_orphaned_claims(version_id))
    )
    if not _may_take_over(version_id, abandoned):
        return None
    claimable = Q(status=Status.PENDING) | abandoned
    if force:
        claimable |= Q(status__in=[Status.READY, Status.FAILED])
    token = uuid.uuid4().hex
    updated = DocumentVersion.objects.filter(claimable, pk=version_id).update(
        status=Status.PARSING,
        claim_token=token,
        claimed_by=this_process(),
        heartbeat_at=timezone.now(),
        progress=0,
        stage="parsing",
        error="",
        attempts=F("attempts") + 1,
    )
    return token if updated else None


def _orphaned_claims(version_id: int) -> list[str]:
    """The version's claim token when the process that claimed it is gone from this machine
    (killed mid-run: its heartbeat still looks fresh), else nothing. Compared with the token,
    so a run that claims the version meanwhile is never taken over."""
    row = (
        DocumentVersion.objects.filter(pk=version_id, status__in=DocumentVersion.ACTIVE)
        .values("claim_token", "claimed_by")
        .first()
    )
    if row and row["claim_token"] and process_gone(row["claimed_by"]):
        return [row["claim_token"]]
    return []


def _may_take_over(version_id: int, abandoned: Q) -> bool:
    """False when the version's runs died ``MAX_ATTEMPTS`` times in a row (killed past the hard
    time limit, or out of memory): it is marked failed instead of being taken up forever. The
    count lives in its timings, which every finished run replaces."""
    row = DocumentVersion.objects.filter(abandoned, pk=version_id).values("timings").first()
    if row is None:
        return True  # not abandoned: nothing to count
    timings = dict(row["timings"] or {})
    died = int(timings.get("runs_stopped", 0)) + 1
    if died >= MAX_ATTEMPTS:
        DocumentVersion.objects.filter(abandoned, pk=version_id).update(
            status=Status.FAILED,
            claim_token="",
            claimed_by="",
            stage="",
            error=GAVE_UP.format(attempts=died),
        )
        return False
    DocumentVersion.objects.filter(abandoned, pk=version_id).update(
        timings={**timings, "runs_stopped": died}
    )
    return True


def _beat(version_id: int, token: str, **fields) -> None:
    """Record progress; raises ClaimLost when another run owns the version now."""
    updated = DocumentVersion.objects.filter(pk=version_id, claim_token=token).update(
        heartbeat_at=timezone.now(), **fields
    )
    if not updated:
        raise ClaimLost(version_id)


@dataclass
class Started:
    """A version claimed, parsed and chunked: what is left is its vectors and the store.

    ``dense``/``sparse`` hold the vectors reused from an earlier version of the document;
    ``todo`` lists the drafts whose vectors are still to compute (``todo_texts``).
    """

    version: DocumentVersion
    token: str
    parsed: ParsedDocument
    drafts: list[ChunkDraft]
    texts: list[str]
    keys: list[str]
    dense: list
    sparse: list
    todo: list[int]
    timings: dict[str, float]

    @property
    def todo_texts(self) -> list[str]:
        return [self.texts[i] for i in self.todo]


def ingest_version(
    version_id: int,
    *,
    force: bool = False,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
) -> IngestResult:
    """Parse, chunk, embed and store one version; the single service behind every entry point.

    Many versions in one process go through ``knowledge.ingest.many.ingest_versions``, which
    runs the same stages (``start_version``, ``finish_version``) around a shared model.
    """
    report = progress or (lambda percent, stage: None)
    started = start_version(version_id, force=force, embedder=embedder)
    if isinstance(started, IngestResult):
        return started
    report(10, "embedding")
    try:
        embedder = embedder or get_embedder()
        _timed(started.timings, "embed_s", lambda: _embed(started, embedder, report))
    except Exception as exc:
        return fail_started(started, exc)
    return finish_version(started, embedder, report)


def start_version(
    version_id: int, *, force: bool = False, embedder: Embedder | None = None
) -> Started | IngestResult:
    """Claim, parse and chunk a version and look up its reusable vectors; an IngestResult
    instead when it is claimed elsewhere or fails here (recorded on the version)."""
    token = claim_version(version_id, force=force)
    if token is None:
        return IngestResult(version_id, "skipped")
    version = DocumentVersion.objects.select_related("document").defer("parsed").get(pk=version_id)
    timings: dict[str, float] = {}
    try:
        parsed = _timed(timings, "parse_s", lambda: _parse(version, token))
        drafts = _timed(timings, "chunk_s", lambda: _chunk(parsed))
        _save_parsed(version, token, parsed, drafts)
        embedder = embedder or get_embedder()
        texts = [embedding_text(parsed.title or version.document.title, d) for d in drafts]
        keys = [embed_key(t) for t in texts]
        known = reusable_vectors(version.document_id, embedder.model_id, keys)
    except Exception as exc:
        return _failed(version_id, token, exc, timings)
    return Started(
        version,
        token,
        parsed,
        drafts,
        texts,
        keys,
        dense=[known[k][0] if k in known else None for k in keys],
        sparse=[known[k][1] if k in known else None for k in keys],
        todo=[i for i, k in enumerate(keys) if k not in known],
        timings=timings,
    )


def add_vectors(started: Started, first: int, output: Embeddings, model_id: str) -> int:
    """Put ``output`` (the vectors of ``todo[first:]``, in order) in place; beats the version's
    heartbeat and progress. Returns the version's percent done."""
    if first == 0 and len(output.dense):
        check_dimensions(model_id, int(output.dense.shape[1]))
    part = started.todo[first : first + len(output.dense)]
    weights = output.sparse or [None] * len(part)
    for i, vector, weight in zip(part, output.dense, weights, strict=True):
        started.dense[i], started.sparse[i] = vector, weight
    return beat_progress(started, first + len(part))


def beat_progress(started: Started, embedded: int) -> int:
    """Heartbeat and progress of a version ``embedded`` of whose todo texts have vectors;
    ClaimLost when another run owns it now. Returns the percent recorded."""
    first = _embed_start(started.parsed)
    percent = first + int((95 - first) * embedded / max(1, len(started.todo)))
    _beat(started.version.pk, started.token, progress=percent)
    return percent


def finish_version(
    started: Started, embedder: Embedder, report: Progress | None = None
) -> IngestResult:
    """Store a version whose vectors are all in (one transaction) and make it ready."""
    try:
        vectors = (started.dense, started.sparse, started.keys)
        # Records store_s itself: the timings go out with the version's last update.
        store_chunks(
            started.version,
            started.token,
            started.parsed,
            started.drafts,
            vectors,
            embedder,
            started.timings,
        )
    except Exception as exc:
        return fail_started(started, exc)
    # The version is searchable now; its chunks' second vectors come after (second.py).
    if settings.SECOND_EMBEDDER != "none":
        enqueue_once_on_commit(FILL_SECOND_VECTORS)  # one run waiting at most
    if report is not None:
        report(100, "ready")
    return IngestResult(started.version.pk, "ready", len(started.drafts), timings=started.timings)


def fail_started(started: Started, exc: Exception) -> IngestResult:
    """Record why a started version failed (see ``_failed``)."""
    return _failed(started.version.pk, started.token, exc, started.timings)


def _failed(version_id: int, token: str, exc: Exception, timings: dict[str, float]) -> IngestResult:
    """The version's outcome for an error of any stage, recorded on it; transient errors
    (the database went away) hand the version back and are raised again."""
    if isinstance(exc, ClaimLost):
        logger.warning(
            "version %s was claimed by another run; this run's work is dropped", version_id
        )
        return IngestResult(version_id, "skipped")
    if isinstance(exc, ParseError):
        message = str(exc)
    elif isinstance(exc, EmbeddingModelMismatch):
        message = f"Not indexed: {exc}."
    elif isinstance(exc, EmbeddingUnavailable):
        # Nothing was stored: the chunks and their vectors are written together after the last
        # batch, so a server that stops mid-document leaves nothing half-embedded searchable.
        message = f"Not indexed: {exc}. Reindex it once the embeddings server is back."
    elif isinstance(exc, (SoftTimeLimitExceeded, TimeBudgetExceeded)):
        message = TIME_LIMIT.format(seconds=settings.INGEST_TIME_LIMIT_SECONDS)
    elif isinstance(exc, MemoryError):
        _fail(
            version_id,
            token,
            "The document is too large to index with the memory available",
            timings,
        )
        return IngestResult(version_id, "failed", error="out of memory", timings=timings)
    elif isinstance(exc, TRANSIENT_ERRORS):
        # Give the version back so the retry (or the stall recovery) can claim it again.
        give_back(version_id, token)
        raise exc
    else:
        logger.exception("ingest of version %s failed", version_id, exc_info=exc)
        message = f"Internal error while indexing ({type(exc).__name__}); the administrators can see the log"
    _fail(version_id, token, message, timings)
    return IngestResult(version_id, "failed", error=message, timings=timings)


def give_back(version_id: int, token: str) -> None:
    """Hand a claimed version back (pending) for a later run to claim."""
    DocumentVersion.objects.filter(pk=version_id, claim_token=token).update(
        status=Status.PENDING, stage="waiting to retry", claim_token="", claimed_by=""
    )


def _transient_errors() -> tuple[type[BaseException], ...]:
    return (OperationalError, InterfaceError, ConnectionError, TimeoutError)


TRANSIENT_ERRORS = _transient_errors()


def _timed(timings: dict[str, float], key: str, step):
    started = time.perf_counter()
    try:
        return step()
    finally:
        timings[key] = round(time.perf_counter() - started, 3)


def _parse(version: DocumentVersion, token: str) -> ParsedDocument:
    try:
        data = read_blob(version.file.name)
    except OSError:
        raise ParseError("The stored file of this version is missing; upload it again") from None

    def recognised(done: int, total: int) -> None:
        # Runs in this thread after each scanned page: the Documents page shows it, and a
        # reindex that took the version over raises ClaimLost here, which ends the run.
        _beat(
            version.pk,
            token,
            progress=OCR_SHARE * done // max(1, total),
            stage=ocr_stage(done, total),
        )

    with time_budget(settings.INGEST_TIME_LIMIT_SECONDS), memory_budget(settings.PARSE_MEMORY_MB):
        return parse_document(data, version.filename, progress=recognised)


def ocr_stage(done: int, total: int) -> str:
    """The stage word of a version being recognised: "ocr 3/50" (``status_label`` shows it)."""
    return f"ocr {done}/{total}"


def _embed_start(parsed: ParsedDocument) -> int:
    return OCR_SHARE if parsed.metadata.get("ocr") else 10


def _chunk(parsed: ParsedDocument) -> list[ChunkDraft]:
    config = ChunkingConfig(
        max_tokens=settings.CHUNK_MAX_TOKENS,
        min_tokens=settings.CHUNK_MIN_TOKENS,
        overlap=settings.CHUNK_OVERLAP,
        row_unit_min_rows=settings.ROW_UNIT_MIN_ROWS,
        rows_per_unit=settings.ROWS_PER_UNIT,
        row_sentences=settings.ROW_UNIT_SENTENCES,
        figure_sentences=settings.ROW_UNIT_FIGURE_SENTENCES,
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
        progress=_embed_start(parsed),
        parsed=parsed.to_dict(),
        ocr=parsed.metadata.get("ocr", {}),
        format=parsed.metadata.get("format", ""),
        block_count=len(parsed.blocks),
        chunk_count=len(drafts),
        table_count=sum(1 for b in parsed.blocks if b.kind in ("table", "test_case")),
        page_count=max([b.page or 0 for b in parsed.blocks] or [0]),
    )


def embedding_text(title: str, draft: ChunkDraft) -> str:
    """What the model sees: the document title and heading path give a chunk its context;
    a row unit's rows as sentences (``meta["embed_text"]``) rather than its Markdown."""
    return text_to_embed(title, draft.heading_path, draft.meta.get("embed_text") or draft.text)


def text_to_embed(title: str, heading_path: list[str], text: str) -> str:
    """``embedding_text`` from a chunk's parts (a stored chunk, when re-embedding)."""
    path = [p for p in heading_path if p]
    head = path if path and path[0] == title else [title, *path]
    return " › ".join(h for h in head if h) + "\n\n" + text


def embed_key(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def _embed(started: Started, embedder: Embedder, report: Progress) -> None:
    """The vectors not reused from an earlier version of the document (a new version of a long
    document changes a few sections), computed in batches of EMBED_BATCH."""
    batch = settings.EMBED_BATCH
    texts = started.todo_texts
    for first in range(0, len(texts), batch):
        output = embedder.embed_documents(texts[first : first + batch])
        report(add_vectors(started, first, output, embedder.model_id), "embedding")


def _fail(version_id: int, token: str, message: str, timings: dict[str, float]) -> None:
    with transaction.atomic():
        document_id = DocumentVersion.objects.values_list("document_id", flat=True).get(
            pk=version_id
        )
        # Document before version, as every writer locks them (see knowledge.ingest.store).
        Document.objects.select_for_update().filter(pk=document_id).values_list("pk").first()
        updated = DocumentVersion.objects.filter(pk=version_id, claim_token=token).update(
            status=Status.FAILED,
            error=message,
            stage="",
            claim_token="",
            claimed_by="",
            timings=timings,
            heartbeat_at=timezone.now(),
        )
        if updated:
            # A failed re-ingest must not leave stale chunks of this version searchable.
            refresh_searchable(document_id)
