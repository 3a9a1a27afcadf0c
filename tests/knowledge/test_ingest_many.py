"""Many files in one process: one model thread embeds the chunks of several files per call.

The model is ``TrigramEmbedder`` (tests/knowledge/embedders.py) made as slow as a real one per
call (``SlowTrigramEmbedder``): while it works, the ingest starts the next files, so the next
call finds several files' chunks waiting. Its calls are recorded: which texts each held.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from knowledge.embedding import Embeddings, EmbeddingUnavailable
from knowledge.ingest.embed_queue import EmbeddingQueue
from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import get_or_create_source, register_file
from knowledge.models import Chunk, DocumentVersion
from tests.knowledge.conftest import ingest
from tests.knowledge.embedders import TrigramEmbedder

POISON = "Этот абзац модель не принимает"


class SlowTrigramEmbedder(TrigramEmbedder):
    """Trigram vectors; each call takes ``pause`` seconds (a real model's time per call), is
    recorded, and refuses a call holding the ``POISON`` sentence (as a server refuses an input
    it cannot take), whatever else the call holds."""

    def __init__(self, pause: float = 0.3) -> None:
        self.pause = pause
        self.calls: list[list[str]] = []
        self._lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> Embeddings:
        with self._lock:
            self.calls.append(list(texts))
        time.sleep(self.pause)
        if any(POISON in text for text in texts):
            raise EmbeddingUnavailable(
                "the embeddings server at http://gpu-1:8080/v1/embeddings refused the request "
                "(413: input too long)"
            )
        return super().embed_documents(texts)


def pages(root, count: int, poison: int | None = None):
    """``count`` small Markdown pages of two sections each (two chunks at most)."""
    root.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        extra = f"\n\n{POISON}.\n" if n == poison else ""
        (root / f"page-{n:02d}.md").write_text(
            f"# Page {n}\n\n## Setup\n\nStand {n} is updated on Fridays at {n} o'clock.\n\n"
            f"## Checks\n\nRun the smoke suite number {n} after the update.{extra}\n",
            encoding="utf-8",
        )
    return root


def files_in_call(call: list[str]) -> set[str]:
    return {text.split(" › ")[0].split("\n")[0] for text in call}


def test_chunks_of_several_files_share_one_model_call(db, tmp_path):
    model = SlowTrigramEmbedder()
    summary = ingest(pages(tmp_path / "wiki", 8), source="Wiki", embedder=model)
    assert summary["ready"] == 8 and summary["failed"] == 0
    texts = sum(len(call) for call in model.calls)
    assert texts == summary["chunks"] == Chunk.objects.count()
    # One call per file before; now the files started while the model works share a call.
    assert len(model.calls) < 8, [len(call) for call in model.calls]
    assert max(len(files_in_call(call)) for call in model.calls) >= 2
    assert all(len(call) <= 32 for call in model.calls)  # EMBED_BATCH


def test_vectors_equal_those_of_one_by_one_ingest(db, tmp_path):
    model = SlowTrigramEmbedder(pause=0.05)
    ingest(pages(tmp_path / "wiki", 6), source="Together", embedder=model)
    alone = get_or_create_source("Alone")
    for path in sorted((tmp_path / "wiki").iterdir()):
        registration = register_file(
            alone, path.name, path.read_bytes(), filename=path.name, via="cli", enqueue=False
        )
        result = ingest_version(registration.version.pk, embedder=TrigramEmbedder())
        assert result.status == "ready"

    def vectors(source: str) -> dict[tuple[str, int], tuple[str, list[float]]]:
        rows = Chunk.objects.filter(source__name=source, searchable=True)
        return {
            (c.document.path, c.position): (c.text, list(c.embedding))
            for c in rows.select_related("document")
        }

    together, one_by_one = vectors("Together"), vectors("Alone")
    assert together.keys() == one_by_one.keys() and len(together) >= 6
    for key, (text, vector) in together.items():
        assert text == one_by_one[key][0]
        assert np.array_equal(np.float32(vector), np.float32(one_by_one[key][1])), key


def test_a_file_the_model_refuses_fails_alone_and_its_batch_mates_are_ready(db, tmp_path):
    model = SlowTrigramEmbedder()
    summary = ingest(pages(tmp_path / "wiki", 6, poison=3), source="Wiki", embedder=model)
    rows = {row["document"]: row for row in summary["documents"]}
    bad = rows.pop("page-03.md")
    assert bad["status"] == "failed"
    assert bad["error"] == (
        "Not indexed: the embeddings server at http://gpu-1:8080/v1/embeddings refused the "
        "request (413: input too long). Reindex it once the embeddings server is back."
    )
    assert {row["status"] for row in rows.values()} == {"ready"}
    # It did share a model call with other files, which then went on without it.
    shared = [call for call in model.calls if any(POISON in t for t in call) and len(call) > 2]
    assert shared and len(files_in_call(shared[0])) >= 2
    assert not Chunk.objects.filter(document_id=bad["document_id"], searchable=True).exists()
    assert DocumentVersion.objects.filter(status="ready").count() == 5


def test_a_later_version_waits_for_the_earlier_and_reuses_its_vectors(db, tmp_path):
    def section(name: str) -> str:  # long enough to be a chunk of its own
        words = " ".join(
            f"{name.lower()}{n} step is checked by the duty engineer." for n in range(40)
        )
        return f"## {name}\n\n{words}\n\n"

    series = tmp_path / "series"
    series.mkdir()
    (series / "guide_v1.md").write_text("# Guide\n\n" + section("Setup") + section("Checks"))
    (series / "guide_v2.md").write_text(
        "# Guide\n\n" + section("Setup") + section("Checks") + section("Rollback")
    )
    (series / "ORDER.txt").write_text("guide_v1.md\nguide_v2.md\n")
    model = SlowTrigramEmbedder(pause=0.2)
    summary = ingest(series, source="History", versions=True, embedder=model)
    assert summary["ready"] == 2
    first, second = (row["chunks"] for row in summary["documents"])
    assert first >= 2 and second > first
    embedded = [text for call in model.calls for text in call]
    # The second version started once the first was stored, and reused its unchanged chunks.
    assert len(embedded) == len(set(embedded)) == second


# --- the queue alone ------------------------------------------------------------------------------


class Recording:
    """A deterministic model: the vector of "t<n>" is n in its first dimension."""

    model_id, dimensions, sparse_dimensions = "recording", 4, None

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.calls: list[list[str]] = []
        self.gate = gate

    def embed_documents(self, texts: Sequence[str]) -> Embeddings:
        if self.gate is not None:
            self.gate.wait(5)
        self.calls.append(list(texts))
        if "bad" in texts:
            raise EmbeddingUnavailable("the model refused 'bad'")
        dense = np.zeros((len(texts), 4), dtype=np.float32)
        dense[:, 0] = [float(t[1:]) for t in texts]
        return Embeddings(dense, [{0: float(t[1:])} for t in texts])

    def embed_query(self, text: str) -> Embeddings:
        return self.embed_documents([text])


def test_queue_fills_each_call_in_submission_order_and_splits_long_submissions():
    gate = threading.Event()
    model = Recording(gate)
    with EmbeddingQueue(model, batch=4) as queue:
        first = queue.submit(["t0"])  # taken at once: the call waits on the gate
        time.sleep(0.2)
        second = queue.submit(["t1", "t2"])
        third = queue.submit(["t3", "t4", "t5", "t6", "t7"])
        gate.set()
        results = [ticket.result(5) for ticket in (first, second, third)]
    assert model.calls == [["t0"], ["t1", "t2", "t3", "t4"], ["t5", "t6", "t7"]]
    assert [list(r.dense[:, 0]) for r in results] == [[0], [1, 2], [3, 4, 5, 6, 7]]
    assert results[2].sparse == [{0: float(n)} for n in range(3, 8)]


def test_queue_retries_a_failed_call_per_submission_so_only_the_culprit_fails():
    gate = threading.Event()
    model = Recording(gate)
    with EmbeddingQueue(model, batch=8) as queue:
        blocker = queue.submit(["t9"])
        time.sleep(0.2)
        good = queue.submit(["t1", "t2"])
        bad = queue.submit(["t3", "bad"])
        after = queue.submit(["t5"])
        gate.set()
        assert list(good.result(5).dense[:, 0]) == [1, 2]
        assert list(after.result(5).dense[:, 0]) == [5]
        with pytest.raises(EmbeddingUnavailable, match="refused 'bad'"):
            bad.result(5)
        assert blocker.result(5).dense.shape == (1, 4)
    assert model.calls[1] == ["t1", "t2", "t3", "bad", "t5"]
    assert model.calls[2:] == [["t1", "t2"], ["t3", "bad"], ["t5"]]
