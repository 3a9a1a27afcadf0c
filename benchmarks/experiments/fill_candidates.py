"""Second vectors for the chunks a question set's searches can reach, and no others: what an
experiment on the ranking with e5 needs (``first_stage.py --sec``) without waiting for every
unit of a large knowledge base. Not product code.

Run: ``.venv/bin/python benchmarks/experiments/fill_candidates.py NAME`` (``sec``: the SEC 10-Q
questions on ``var/bench-sec``).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _setup import setup, teardown  # noqa: E402


def candidate_ids(questions: list[str]) -> list[int]:
    from knowledge.retrieval import SearchOptions, search
    from knowledge.retrieval.weights import Hits, Retrieval

    wide = SearchOptions(
        hits=Hits(k=60, per_document=60, spread=0),
        retrieval=Retrieval(candidates=60),
        min_score=-1.0,
        meaning=False,
    )
    found: set[int] = set()
    for question in questions:
        result = search(question, options=wide, reranker=None)
        found.update(c.found_id for c in result.candidates)
        found.update(c.chunk_id for c in result.candidates)
    return sorted(found)


def fill(ids: list[int]) -> None:
    import numpy as np

    from knowledge.embedding import build_second_embedder
    from knowledge.ingest.second import pack, unit_texts, units_key
    from knowledge.models import Chunk, ChunkVector
    from knowledge.units import CUTTING, units

    embedder = build_second_embedder(threads=os.cpu_count())
    have = set(
        ChunkVector.objects.filter(
            chunk_id__in=ids, model_id=embedder.model_id, cutting=CUTTING
        ).values_list("chunk_id", flat=True)
    )
    todo = [i for i in ids if i not in have]
    started = time.perf_counter()
    for first in range(0, len(todo), 16):
        batch = dict(
            Chunk.objects.filter(pk__in=todo[first : first + 16]).values_list("pk", "text")
        )
        rows = []
        for pk, text in batch.items():
            cut = units(text)
            texts = unit_texts(cut)
            wanted = [t for t in texts if t is not None]
            dense = embedder.embed_documents(wanted).dense if wanted else np.zeros((0, 384))
            matrix = np.zeros((len(texts), embedder.dimensions), dtype=np.float32)
            at = [i for i, t in enumerate(texts) if t is not None]
            if at:
                matrix[at] = dense
            rows.append(
                ChunkVector(
                    chunk_id=pk,
                    model_id=embedder.model_id,
                    cutting=CUTTING,
                    units_key=units_key(cut),
                    count=len(texts),
                    vectors=pack(matrix) if len(texts) else b"",
                )
            )
        ChunkVector.objects.bulk_create(rows, ignore_conflicts=True)
        done = min(first + 16, len(todo))
        print(
            f"\r  {done}/{len(todo)} chunks, {time.perf_counter() - started:.0f} s",
            end="",
            flush=True,
        )
    print()


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "sec"
    setup(name, fresh=False)
    try:
        from retrieval_sec import load_questions

        ids = candidate_ids([q["Question"] for q in load_questions()])
        print(f"{len(ids)} candidate chunks")
        fill(ids)
    finally:
        teardown()


if __name__ == "__main__":
    main()
