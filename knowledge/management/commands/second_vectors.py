"""``manage.py second_vectors [--threads N]``: the second vectors made here, now.

The workers make them after each ingest (``knowledge.fill_second_vectors``); this makes the
ones still missing in this process, with a progress bar: after ``manage.py ingest`` without a
running worker, after changing the model or where it runs (``KB_SECOND_EMBEDDER_URL``), or to
see how long a knowledge base takes.
"""

from __future__ import annotations

import os
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from knowledge.embedding import build_second_embedder
from knowledge.ingest.second import fill_second_vectors, progress


class Command(BaseCommand):
    help = "Make the second vectors (e5, each sentence and row) of the chunks still without them."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--threads", type=int, default=os.cpu_count() or 1, help="the model's threads here"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        embedder = build_second_embedder(threads=max(1, options["threads"]))
        before = progress()
        if embedder is None or before is None:
            raise CommandError("The second vectors are turned off (KB_SECOND_EMBEDDER=none).")
        missing = before.total - before.done
        started = time.perf_counter()
        with tqdm(total=missing, unit="chunk", disable=not missing, dynamic_ncols=True) as bar:
            seen = [0]

            def report(done: int) -> None:
                bar.update(done - seen[0])
                seen[0] = done

            done, _ = fill_second_vectors(embedder, report=report)
        after = progress()
        self.stdout.write(
            f"Second vectors ({after.model_id}) of {done} chunks made in "
            f"{time.perf_counter() - started:.1f} s; {after.done} of {after.total} searchable "
            "chunks have them."
        )
