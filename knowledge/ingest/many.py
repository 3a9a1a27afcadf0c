"""Many versions ingested in one process around one model: ``ingest_versions``.

Each version goes through the stages of ``ingest_version`` (claim, parse, chunk, reuse, store,
with its heartbeats and progress), in the thread that runs the lane, with that thread's
database connection. Only the model calls move to one ``EmbeddingQueue`` thread, which fills
each call with up to EMBED_BATCH texts of several versions. A lane keeps about two model calls'
worth of texts queued ahead of the model: the model does not wait while a document is parsed
or stored, and a small page does not make a model call of its own.

Two versions of one document are never in flight together: the later one starts once the
earlier is stored, so it reuses the vectors of the sections that did not change.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import connections

from knowledge.embedding import Embedder, get_embedder
from knowledge.ingest.embed_queue import EmbeddingQueue, Ticket
from knowledge.ingest.pipeline import (
    IngestResult,
    Started,
    add_vectors,
    beat_progress,
    fail_started,
    finish_version,
    give_back,
    start_version,
)
from knowledge.models import DocumentVersion

__all__ = ["ingest_versions"]

logger = logging.getLogger(__name__)
Done = Callable[[IngestResult], None]


def ingest_versions(
    version_ids: Sequence[int],
    *,
    force: bool = False,
    embedder: Embedder | None = None,
    jobs: int = 1,
    done: Done | None = None,
) -> dict[int, IngestResult]:
    """Ingest ``version_ids`` (oldest first within a document) with one shared model thread.

    ``jobs`` lanes (threads with their own database connection; with 1, the calling thread and
    its connection) take whole documents from the list. ``done(result)`` is called in the
    lane's thread as each version ends. Returns every version's result. A version that fails
    fails alone, with the message ``ingest_version`` would give it; an error of the database
    hands the versions in flight back (pending) and is raised.
    """
    embedder = embedder or get_embedder()
    results: dict[int, IngestResult] = {}
    lock = threading.Lock()

    def record(result: IngestResult) -> None:
        with lock:
            results[result.version_id] = result
        if done is not None:
            done(result)

    groups = iter(_by_document(version_ids))

    def next_group() -> list[int] | None:
        with lock:
            return next(groups, None)

    with EmbeddingQueue(embedder, batch=settings.EMBED_BATCH) as model:
        lane = _LaneSettings(model, embedder, force, record)
        if jobs <= 1:
            _Lane(lane).run(next_group)
        else:
            _run_threads(lane, next_group, jobs)
    return results


def _by_document(version_ids: Sequence[int]) -> list[list[int]]:
    """The versions grouped by document, documents in the order of their first version."""
    documents = dict(
        DocumentVersion.objects.filter(pk__in=version_ids).values_list("pk", "document_id")
    )
    groups: dict[int | None, list[int]] = {}
    for version_id in version_ids:
        groups.setdefault(documents.get(version_id), []).append(version_id)
    return list(groups.values())


@dataclass(frozen=True)
class _LaneSettings:
    model: EmbeddingQueue
    embedder: Embedder
    force: bool
    done: Done


@dataclass(eq=False)  # compared by identity: in_flight.remove(entry)
class _InFlight:
    started: Started
    ticket: Ticket
    beaten: int = 0  # texts embedded at the last heartbeat
    beaten_at: float = 0.0


class _Lane:
    """One thread's versions: started ahead of the model, stored as their vectors come in."""

    def __init__(self, lane: _LaneSettings) -> None:
        self.lane = lane
        self.model = lane.model
        # Two calls' worth queued: one to take when the running call ends, one to spare.
        self.ahead = 2 * self.model.batch
        # A version waiting for its vectors still beats well inside the stall limit.
        self.beat_every = max(1.0, settings.INGEST_STALE_SECONDS / 4)
        self.in_flight: list[_InFlight] = []

    def run(self, next_group: Callable[[], list[int] | None]) -> None:
        try:
            while (group := next_group()) is not None:
                previous: _InFlight | None = None
                for version_id in group:
                    if previous is not None:  # the document's earlier version stored first
                        self._settle_until(lambda p=previous: p not in self.in_flight)
                    self._settle_until(lambda: self.model.queued < self.ahead)
                    previous = self._start(version_id)
            self._settle_until(lambda: not self.in_flight)
        except BaseException:
            self._give_back()
            raise

    def _start(self, version_id: int) -> _InFlight | None:
        started = start_version(version_id, force=self.lane.force, embedder=self.lane.embedder)
        if isinstance(started, IngestResult):
            self.lane.done(started)
            return None
        if not started.todo:  # every vector reused from an earlier version
            self.lane.done(finish_version(started, self.lane.embedder))
            return None
        entry = _InFlight(started, self.model.submit(started.todo_texts))
        entry.beaten_at = time.monotonic()
        self.in_flight.append(entry)
        return entry

    def _settle_until(self, condition: Callable[[], bool]) -> None:
        """Store what is embedded and beat what waits, until ``condition`` holds."""
        self._settle()
        while not condition():
            self.model.wait_until(self._anything_ready, timeout=self.beat_every)
            self._settle()

    def _anything_ready(self) -> bool:
        return any(entry.ticket.ready() for entry in self.in_flight)

    def _settle(self) -> None:
        now = time.monotonic()
        for entry in list(self.in_flight):
            if entry.ticket.ready():
                self.in_flight.remove(entry)
                self.lane.done(self._finish(entry))
            elif entry.ticket.done != entry.beaten or now - entry.beaten_at >= self.beat_every:
                self._beat(entry, now)

    def _beat(self, entry: _InFlight, now: float) -> None:
        try:
            beat_progress(entry.started, entry.ticket.done)
        except Exception as exc:  # ClaimLost: taken over; its vectors will be dropped
            self.in_flight.remove(entry)
            self.lane.done(fail_started(entry.started, exc))
            return
        entry.beaten, entry.beaten_at = entry.ticket.done, now

    def _finish(self, entry: _InFlight) -> IngestResult:
        started = entry.started
        try:
            output = entry.ticket.result()
            started.timings["embed_s"] = round(entry.ticket.model_s, 3)
            add_vectors(started, 0, output, self.lane.embedder.model_id)
        except Exception as exc:
            return fail_started(started, exc)
        return finish_version(started, self.lane.embedder)

    def _give_back(self) -> None:
        for entry in self.in_flight:
            try:
                give_back(entry.started.version.pk, entry.started.token)
            except Exception:  # the database is what failed: stall recovery takes them
                logger.warning("could not hand version %s back", entry.started.version.pk)
        self.in_flight.clear()


def _run_threads(
    lane: _LaneSettings, next_group: Callable[[], list[int] | None], jobs: int
) -> None:
    errors: list[BaseException] = []

    def work() -> None:
        try:
            _Lane(lane).run(next_group)
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, name=f"ingest-{n}") for n in range(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
