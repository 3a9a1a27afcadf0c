"""``manage.py reembed [--model KIND --path FOLDER] [--model-id ID] [--batch N]``.

Re-embeds every chunk with the configured embedder (``KB_EMBEDDER``) or the one named here,
stores the new model id with the vectors and the versions, builds its vector index, and leaves
the knowledge base searchable with that model. Configure the same model for the portal and the
workers (``KB_EMBEDDER``, ``KB_EMBEDDER_PATH``): search refuses vectors of another model.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand
from tqdm import tqdm

from knowledge.embedding import Embedder, build_embedder, get_embedder
from knowledge.ingest.reembed import chunks_to_reembed, reembed


class Command(BaseCommand):
    help = "Re-embed every chunk with the configured (or the given) embedding model."
    # Tests hand in an embedder object (a small real model built in the test).
    stealth_options = ("embedder",)

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--model",
            choices=["use", "bge-m3", "sentence-transformers"],
            help="the embedder kind (default: KB_EMBEDDER)",
        )
        parser.add_argument("--path", default="", help="the model's local folder")
        parser.add_argument("--model-id", default="", help="the id stored with the vectors")
        parser.add_argument("--batch", type=int, default=settings.EMBED_BATCH)

    def handle(self, *args: Any, **options: Any) -> None:
        embedder: Embedder = options.get("embedder") or (
            build_embedder(options["model"], options["path"], options["model_id"])
            if options["model"]
            else get_embedder()
        )
        total = chunks_to_reembed(embedder.model_id).count()
        started = time.perf_counter()
        with tqdm(total=total, unit="chunk", disable=not total, dynamic_ncols=True) as bar:
            report = reembed(embedder, batch=max(1, options["batch"]), progress=bar.update)
        self.stdout.write(
            f"Re-embedded {report.chunks} chunks with {report.model_id} "
            f"({report.dimensions} dimensions) in {time.perf_counter() - started:.1f} s; "
            f"{report.versions} versions switched"
            + (f" from {', '.join(report.previous_models)}" if report.previous_models else "")
            + f"; vector index {report.index} ready."
        )
        configured = settings.EMBEDDER_ID or ""
        if options["model"] and (
            options["model"] != settings.EMBEDDER or (configured and configured != report.model_id)
        ):
            self.stdout.write(
                self.style.WARNING(
                    f"The portal is configured for KB_EMBEDDER={settings.EMBEDDER}: set it to "
                    f"{options['model']} (and KB_EMBEDDER_PATH) and restart the web and worker "
                    "processes, or searches will be refused as a model mismatch."
                )
            )
