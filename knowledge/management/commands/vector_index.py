"""``manage.py vector_index [--rebuild]``.

Lists the HNSW index of each embedding model with its build parameters and size, beside the
configured ones (``KB_HNSW_M``, ``KB_HNSW_EF_CONSTRUCTION``). ``--rebuild`` builds the indexes
whose parameters differ from the configured ones again (all of them with ``--all``), beside the
old ones, so search keeps working meanwhile; a progress bar counts the chunk table's blocks
read. ``--memory`` sets the build's ``maintenance_work_mem``.
"""

from __future__ import annotations

import re
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from knowledge.vector_index import (
    VectorIndex,
    build_parameters,
    rebuild_vector_index,
    vector_indexes,
)


class Command(BaseCommand):
    help = "Show the vector indexes' build parameters; rebuild them with the configured ones."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--rebuild", action="store_true", help="rebuild the indexes not built as configured"
        )
        parser.add_argument("--all", action="store_true", help="with --rebuild: every index")
        parser.add_argument(
            "--memory",
            default="1GB",
            help="maintenance_work_mem of the build (default 1GB; about 2.7 KB a chunk fits "
            "the graph of 512-dimension vectors)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not re.fullmatch(r"\d+\s*(kB|MB|GB|TB)", options["memory"]):
            raise CommandError(f"--memory {options['memory']!r}: a size such as 512MB or 2GB")
        m, ef_construction = build_parameters()
        indexes = vector_indexes()
        self.stdout.write(f"Configured: m={m}, ef_construction={ef_construction}.")
        if not indexes:
            self.stdout.write("No vector index yet (the first ingested chunks create it).")
        for index in indexes:
            self.stdout.write(self._line(index))
        if not options["rebuild"]:
            return
        chosen = [i for i in indexes if options["all"] or not i.current]
        if not chosen:
            self.stdout.write("Nothing to rebuild.")
        for index in chosen:
            started = time.perf_counter()
            with tqdm(unit="block", desc=index.model_id, dynamic_ncols=True) as bar:

                def progress(done: int, total: int, bar: tqdm = bar) -> None:
                    bar.total = total
                    bar.n = min(done, total)
                    bar.refresh()

                rebuild_vector_index(index, progress=progress, memory=options["memory"])
            rebuilt = next(i for i in vector_indexes() if i.name == index.name)
            self.stdout.write(
                f"Rebuilt in {time.perf_counter() - started:.1f} s: " + self._line(rebuilt)
            )

    @staticmethod
    def _line(index: VectorIndex) -> str:
        state = "as configured" if index.current else "rebuild to apply the configured ones"
        return (
            f"{index.model_id}: {index.name}, {index.dimensions} dimensions, m={index.m}, "
            f"ef_construction={index.ef_construction}, {index.size / 2**20:.1f} MiB ({state})"
        )
