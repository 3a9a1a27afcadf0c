"""Ingest throughput on the QA Bible wiki, through the same code as ``manage.py ingest``.

The whole wiki (238 Markdown pages) is ingested end to end into an empty knowledge base by the
``ingest`` management command (registration, parse, chunk, embed, store, in this process). Then
the very texts the model saw (each chunk's embedding text) are embedded once more with the same
model and batch size, with nothing else around it: that is the physical floor. Prints pages/s,
chunks/s, peak RSS and the ratio of total ingest time to that bare embedding time (goal <= 1.1,
issue 17), plus the per-stage timings each version records. The model works in a thread of its
own while the files are parsed and stored (``knowledge.ingest.many``), so the stages overlap;
``embed_s`` is a version's share of the model calls that held its chunks, and their sum over
the total time says how busy the model was.

The machine is shared, so wall-clock figures move with the load; the CPU seconds of this process
plus its PostgreSQL backend are printed too, and the CPU ratio is the steadier one.

Run: ``.venv/bin/python benchmarks/ingest.py [--pages N] [--profile] [--quick]``: ``--pages`` ingests only the
first N pages (a quicker look), ``--profile`` adds a cProfile of the ingest (our functions by
cumulative time, everything by own time) to find the overhead; ``--quick``: the first 12 pages.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _setup import CORPUS, arguments, setup, teardown

WIKI = CORPUS / "wiki_qa_bible_ru"


class CpuClock:
    """CPU seconds of this process and of PostgreSQL (every backend, the ended ones included:
    the postmaster accounts for the children it reaped), which does the storing."""

    def __init__(self) -> None:
        import psutil
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            self.postmaster = psutil.Process(cursor.fetchone()[0]).parent()
        self.me = psutil.Process()

    def read(self) -> tuple[float, float]:
        import psutil

        mine = self.me.cpu_times()
        server = self.postmaster.cpu_times()
        total = server.user + server.system + server.children_user + server.children_system
        for child in self.postmaster.children():
            try:
                times = child.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += times.user + times.system
        return mine.user + mine.system, total


def wiki_folder(pages: int | None, scratch: Path) -> Path:
    """The wiki, or a copy of its first ``pages`` pages (same relative paths)."""
    if not pages:
        return WIKI
    for path in sorted(WIKI.rglob("*.md"))[:pages]:
        target = scratch / "wiki" / path.relative_to(WIKI)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return scratch / "wiki"


def ingest_wiki(folder: Path, profile: bool, jobs: int) -> tuple[dict, float]:
    """``manage.py ingest`` of the folder (``jobs`` 0: the command's default); summary, seconds."""
    from django.core.management import call_command

    out = io.StringIO()
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    started = time.perf_counter()
    options = {"jobs": jobs} if jobs else {}
    call_command("ingest", str(folder), source="QA Bible", json=True, stdout=out, **options)
    elapsed = time.perf_counter() - started
    if profiler is not None:
        import pstats

        profiler.disable()
        stats = pstats.Stats(profiler, stream=sys.stdout)
        print("\nProfile of the ingest: our functions by cumulative time")
        stats.sort_stats("cumulative").print_stats(r"/work/main/(knowledge|portal)/", 30)
        print("\nProfile of the ingest: top 20 functions by own time")
        stats.sort_stats("tottime").print_stats(20)
    return json.loads(out.getvalue()), elapsed


def bare_embedding_seconds(embedder) -> tuple[float, int]:
    """Embed the stored chunks' embedding texts again, in the ingest's batches, and time it."""
    from django.conf import settings

    from knowledge.chunking import ChunkDraft
    from knowledge.ingest.pipeline import embedding_text
    from knowledge.models import DocumentVersion

    texts: list[str] = []
    versions = DocumentVersion.objects.filter(status="ready").select_related("document")
    for version in versions.order_by("pk"):
        title = (version.parsed or {}).get("title") or version.document.title
        for chunk in version.chunks.order_by("position"):
            draft = ChunkDraft(
                text=chunk.text,
                heading_path=chunk.heading_path,
                section=chunk.section,
                sections=chunk.sections,
                block_type=chunk.block_type,
                block_start=chunk.block_start,
                block_end=chunk.block_end,
                token_count=chunk.token_count,
            )
            texts.append(embedding_text(title, draft))
    batch = settings.EMBED_BATCH
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        embedder.embed_documents(texts[start : start + batch])
    return time.perf_counter() - started, len(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=0, help="only the first N pages")
    parser.add_argument(
        "--jobs", type=int, default=0, help="manage.py ingest --jobs (default: its own)"
    )
    parser.add_argument("--profile", action="store_true")
    args = arguments(parser)
    if args.quick:
        args.pages = 12
    setup("ingest")
    from knowledge.embedding import get_embedder

    loading = time.perf_counter()
    embedder = get_embedder()  # loaded once per process, as in a worker; not ingest time
    embedder.embed_documents(["warm-up"])
    load_s = time.perf_counter() - loading
    clock = CpuClock()
    load_before = f"{os.getloadavg()[0]:.2f}"

    with tempfile.TemporaryDirectory() as scratch:
        folder = wiki_folder(args.pages, Path(scratch))
        words = sum(len(p.read_text(encoding="utf-8").split()) for p in folder.rglob("*.md"))
        cpu_before = clock.read()
        summary, total_s = ingest_wiki(folder, args.profile, args.jobs)
        cpu_after = clock.read()
    pages, chunks = summary["files"], summary["chunks"]
    stages: Counter[str] = Counter()
    for row in summary["documents"]:
        stages.update(row.get("timings") or {})
    cpu_bare_before = clock.read()[0]
    bare_s, texts = bare_embedding_seconds(embedder)
    cpu_bare = clock.read()[0] - cpu_bare_before
    cpu_ingest = cpu_after[0] - cpu_before[0]
    cpu_db = cpu_after[1] - cpu_before[1]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(
        f"\nQA Bible wiki: {pages} pages, {words} words -> {chunks} chunks, "
        f"model {embedder.model_id}, manage.py ingest --jobs {args.jobs or 'default'}"
    )
    print(
        f"  status: {summary['ready']} ready, {summary['failed']} failed, "
        f"{summary['refused']} refused"
    )
    print(f"  load average at the start and the end: {load_before} / {os.getloadavg()[0]:.2f}")
    print(f"  model load (once per process, not counted): {load_s:.1f} s")
    print(f"  ingest total           {total_s:8.1f} s")
    for key in ("parse_s", "chunk_s", "embed_s", "store_s"):
        print(f"    {key:<20} {stages.get(key, 0.0):8.1f} s  (sum of the per-version timings)")
    # The stages overlap the model's work: the model's share of the total is what matters.
    print(f"    model busy           {stages.get('embed_s', 0.0) / total_s:8.1%} of the total")
    print(f"  bare embedding         {bare_s:8.1f} s  ({texts} texts, same model and batches)")
    print(f"  pages/s   {pages / total_s:8.2f}")
    print(f"  chunks/s  {chunks / total_s:8.2f}")
    print(f"  peak RSS  {peak_mb:8.0f} MB (this process; PostgreSQL runs apart)")
    ratio = total_s / bare_s if bare_s else float("inf")
    print(f"  ratio total / bare embedding (wall): {ratio:.3f} (goal <= 1.1)")
    print(
        f"  CPU: ingest {cpu_ingest:.1f} s here + {cpu_db:.1f} s in PostgreSQL; "
        f"bare embedding {cpu_bare:.1f} s"
    )
    cpu_ratio = (cpu_ingest + cpu_db) / cpu_bare if cpu_bare else float("inf")
    print(f"  ratio total / bare embedding (CPU):  {cpu_ratio:.3f} (goal <= 1.1)")
    second_vectors(clock)
    teardown()


def second_vectors(clock: CpuClock) -> None:
    """The second vectors of the wiki (e5, each unit), made after the ingest as the workers
    make them, here on every core: how long until they are all in."""
    from knowledge.embedding import build_second_embedder
    from knowledge.ingest.second import fill_second_vectors
    from knowledge.models import ChunkVector

    embedder = build_second_embedder(threads=os.cpu_count())
    if embedder is None:
        print("  second vectors: turned off (KB_SECOND_EMBEDDER=none)")
        return
    embedder.embed_documents(["warm-up"])
    cpu_before = clock.read()[0]
    started = time.perf_counter()
    done, _ = fill_second_vectors(embedder)
    wall = time.perf_counter() - started
    units = sum(ChunkVector.objects.values_list("count", flat=True))
    print(
        f"  second vectors (e5, {os.cpu_count()} threads): {done} chunks, {units} units in "
        f"{wall:.1f} s ({units / wall:.0f} units/s), {clock.read()[0] - cpu_before:.1f} s of CPU"
    )


if __name__ == "__main__":
    main()
