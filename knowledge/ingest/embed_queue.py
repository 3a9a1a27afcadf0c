"""One thread owns the embedding model; ingest code submits texts and collects vectors.

A small document is a handful of chunks: embedded on its own, a 2-chunk page is one model
call of 2 texts, and the model waits while the next page is parsed and the last one stored.
``EmbeddingQueue`` fills each model call with up to ``batch`` texts taken in submission order
from several documents (a long document spans several calls), so the model keeps working
while the threads that submitted parse, register and store.

No Django here: the queue knows texts and vectors, never versions or the database (the caller
records progress and heartbeats from its own thread, with its own connection).

A model call that fails with texts of several submissions is not blamed on all of them: each
submission of that call is embedded again alone, so a text the model refuses fails only its
own document, and an embeddings server that went down fails each of them with its message.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

import numpy as np

from knowledge.embedding import Embedder, Embeddings


class Ticket:
    """The vectors of one submission, filled in as the model calls that hold its texts end."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = list(texts)
        self.done = 0  # texts embedded so far (progress)
        self.model_s = 0.0  # this submission's share of the model calls' time
        self.error: BaseException | None = None
        self._parts: list[Embeddings] = []
        self._finished = threading.Event()

    def ready(self) -> bool:
        """True once every vector is in, or the submission failed."""
        return self._finished.is_set()

    def result(self, timeout: float | None = None) -> Embeddings:
        """The vectors in the order of the texts; raises the model's error if it failed."""
        if not self._finished.wait(timeout):
            raise TimeoutError("the embedding queue did not answer in time")
        if self.error is not None:
            raise self.error
        if not self._parts:
            return Embeddings(np.zeros((0, 0), dtype=np.float32))
        sparse = [p.sparse for p in self._parts]
        return Embeddings(
            np.vstack([p.dense for p in self._parts]),
            None if any(s is None for s in sparse) else [w for s in sparse for w in s],
        )

    def _add(self, part: Embeddings, seconds: float) -> None:
        self._parts.append(part)
        self.done += len(part.dense)
        self.model_s += seconds
        if self.done >= len(self.texts):
            self._finished.set()

    def _fail(self, error: BaseException) -> None:
        self.error = error
        self._finished.set()


class EmbeddingQueue:
    """A thread calling ``embedder.embed_documents`` with up to ``batch`` queued texts at a time.

    ``submit(texts)`` returns a ``Ticket`` at once; ``wait_until()`` blocks until a condition
    holds, checked as model calls end, for callers that keep a few submissions ahead of the
    model (``queued`` texts wait for it). Use as a context manager, or call ``close()``: submissions
    still queued then fail with ``RuntimeError``.
    """

    def __init__(self, embedder: Embedder, *, batch: int) -> None:
        self.embedder = embedder
        self.batch = max(1, batch)
        self.calls = 0  # model calls made (the benchmark and the tests read it)
        self._waiting: deque[tuple[Ticket, int]] = deque()  # (ticket, first text not taken)
        self._queued = 0
        self._closed = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="embedding-queue", daemon=True)
        self._thread.start()

    @property
    def queued(self) -> int:
        """Texts submitted that no model call has taken yet."""
        return self._queued

    def submit(self, texts: Sequence[str]) -> Ticket:
        """Queue ``texts`` for embedding (in the order submitted); never blocks."""
        ticket = Ticket(texts)
        if not ticket.texts:
            ticket._finished.set()
            return ticket
        with self._changed:
            if self._closed:
                raise RuntimeError("the embedding queue is closed")
            self._waiting.append((ticket, 0))
            self._queued += len(ticket.texts)
            self._changed.notify_all()
        return ticket

    def wait_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Block until ``predicate()`` holds (checked whenever a model call ends) or ``timeout``
        seconds pass; returns its last value. A model call that ends between the caller's own
        check and this wait is not missed: the predicate is read under the queue's lock."""
        with self._changed:
            return self._changed.wait_for(predicate, timeout)

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        self._thread.join()
        for ticket, _start in self._waiting:
            ticket._fail(RuntimeError("the embedding queue was closed"))
        self._waiting.clear()

    def __enter__(self) -> EmbeddingQueue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _take(self) -> list[tuple[Ticket, int, int]] | None:
        """The next call's texts as (ticket, start, end) slices; None once closed."""
        with self._changed:
            while not self._waiting and not self._closed:
                self._changed.wait()
            if self._closed:
                return None
            slices: list[tuple[Ticket, int, int]] = []
            room = self.batch
            while self._waiting and room:
                ticket, start = self._waiting[0]
                end = min(len(ticket.texts), start + room)
                slices.append((ticket, start, end))
                room -= end - start
                if end == len(ticket.texts):
                    self._waiting.popleft()
                else:
                    self._waiting[0] = (ticket, end)
            self._queued -= self.batch - room
            return slices

    def _run(self) -> None:
        while (slices := self._take()) is not None:
            try:
                self._call(slices)
            except BaseException as exc:  # the thread ends: nobody may wait for it forever
                with self._changed:
                    self._closed = True
                    waiting = [ticket for ticket, _start in self._waiting]
                    self._waiting.clear()
                for ticket in [s[0] for s in slices] + waiting:
                    ticket._fail(exc)
                raise
            finally:
                with self._changed:
                    self._changed.notify_all()

    def _call(self, slices: list[tuple[Ticket, int, int]]) -> None:
        texts = [t for ticket, start, end in slices for t in ticket.texts[start:end]]
        started = time.perf_counter()
        try:
            output = self.embedder.embed_documents(texts)
        except Exception as exc:
            if len({id(ticket) for ticket, _s, _e in slices}) == 1:
                self._fail(slices[0][0], exc)
            else:  # whose text was it? each alone (see the module's docstring)
                for one in slices:
                    self._call([one])
            return
        finally:
            self.calls += 1
        seconds = time.perf_counter() - started
        offset = 0
        for ticket, start, end in slices:
            count = end - start
            sparse = output.sparse[offset : offset + count] if output.sparse is not None else None
            part = Embeddings(output.dense[offset : offset + count], sparse)
            ticket._add(part, seconds * count / len(texts))
            offset += count

    def _fail(self, ticket: Ticket, error: BaseException) -> None:
        # Its texts still queued are dropped: the document fails as a whole.
        with self._changed:
            for queued in [w for w in self._waiting if w[0] is ticket]:
                self._queued -= len(ticket.texts) - queued[1]
                self._waiting.remove(queued)
        ticket._fail(error)
