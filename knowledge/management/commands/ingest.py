"""``manage.py ingest PATH... [--source NAME] [--json] [--versions] [--jobs N]``.

Registers files and folders through the same service as the upload button and runs the same
ingest stages in this process (no worker needed), with a progress bar. One thread owns the
embedding model and fills each of its calls with the chunks of several files, while the files
are parsed and stored around it (``knowledge.ingest.many``); ``--jobs 2`` parses and stores in
two threads.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _
from tqdm import tqdm

from knowledge.ingest.batch import plan_files, register_planned
from knowledge.ingest.many import ingest_versions
from knowledge.ingest.pipeline import IngestResult
from knowledge.ingest.registration import Registration, get_or_create_source
from knowledge.models import DocumentVersion, Source


class Command(BaseCommand):
    help = "Ingest files and folders into the knowledge base (in this process) and report."
    # Tests hand in an embedder object (a small real model built in the test).
    stealth_options = ("embedder",)

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--source", default="", help="source name (default: the folder's name)")
        parser.add_argument("--kind", default="", choices=["", *Source.Kind.values])
        parser.add_argument("--base-url", default="", help="a page's link = base URL + its path")
        parser.add_argument(
            "--versions",
            action="store_true",
            help="the files are versions of one document each (grouped by name without the date; "
            "ordered by the folder's ORDER.txt, else as given)",
        )
        parser.add_argument("--document", default="", help="with --versions: the document's path")
        parser.add_argument("--force", action="store_true", help="re-ingest unchanged versions too")
        parser.add_argument("--json", action="store_true", help="print a machine-readable summary")
        parser.add_argument(
            "--jobs",
            type=int,
            default=1,
            help="threads parsing and storing files (the model, in a thread of its own, embeds "
            "the chunks of several files per call either way); every version is registered "
            "first, in order",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        paths: list[Path] = [p.expanduser().resolve() for p in options["paths"]]
        for path in paths:
            if not path.exists():
                raise CommandError(_("%(path)s: no such file or folder") % {"path": path})
        source = self._source(paths, options)
        planned = plan_files(paths, as_versions=options["versions"], document=options["document"])
        if not planned:
            raise CommandError(_("no supported files (.docx .pdf .xlsx .md .markdown .txt) found"))
        started = time.perf_counter()
        rows = self._run(
            source,
            planned,
            force=options["force"],
            quiet=options["json"],
            jobs=max(1, options["jobs"]),
            embedder=options.get("embedder"),
        )
        summary = self._summary(source, rows, time.perf_counter() - started)
        if options["json"]:
            self.stdout.write(json.dumps(summary, ensure_ascii=False, indent=2))
        else:
            self._print(summary)

    def _source(self, paths: list[Path], options: dict[str, Any]) -> Source:
        name = options["source"] or (paths[0].name if paths[0].is_dir() else "Uploads")
        defaults: dict[str, Any] = {"root_path": str(paths[0])}
        if options["kind"]:
            defaults["kind"] = options["kind"]
        if options["base_url"]:
            defaults["base_url"] = options["base_url"]
        source = get_or_create_source(name, **defaults)
        if options["base_url"] and source.base_url != options["base_url"]:
            Source.objects.filter(pk=source.pk).update(base_url=options["base_url"])
        return source

    def _run(
        self, source: Source, planned, *, force: bool, quiet: bool, jobs: int, embedder=None
    ) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = [{} for _item in planned]
        waiting: dict[int, tuple[int, dict[str, Any], Registration]] = {}
        bar = tqdm(total=len(planned), unit="file", disable=quiet, dynamic_ncols=True)
        for i, item in enumerate(planned):
            row: dict[str, Any] = {"file": str(item.path), "document": item.document_path}
            if item.problem:
                rows[i] = {**row, "status": "refused", "error": item.problem, "created": False}
                bar.update()
                continue
            # Every file registered first, in the planned order, so a series' version numbers
            # follow it whatever order the versions end in.
            registration = register_planned(source, item, via="cli", enqueue=False)
            waiting[registration.version.pk] = (i, row, registration)
        lock = threading.Lock()

        def done(result: IngestResult) -> None:
            i, row, registration = waiting[result.version_id]
            finished = _row(row, registration, result)
            with lock:
                rows[i] = finished
                bar.set_postfix_str(Path(row["file"]).name[-40:])
                bar.update()

        ingest_versions(list(waiting), force=force, embedder=embedder, jobs=jobs, done=done)
        bar.close()
        return rows

    def _summary(
        self, source: Source, rows: list[dict[str, Any]], seconds: float
    ) -> dict[str, Any]:
        def count(status: str) -> int:
            return sum(1 for r in rows if r["status"] == status)

        return {
            "source": {"id": source.pk, "name": source.name},
            "files": len(rows),
            "new_versions": sum(1 for r in rows if r.get("created")),
            "unchanged": sum(1 for r in rows if not r.get("created") and r["status"] != "refused"),
            "ready": count(DocumentVersion.Status.READY),
            "failed": count(DocumentVersion.Status.FAILED),
            "refused": count("refused"),
            "chunks": sum(r.get("chunks", 0) for r in rows if r.get("created")),
            "seconds": round(seconds, 2),
            "documents": rows,
        }

    def _print(self, summary: dict[str, Any]) -> None:
        self.stdout.write(
            _(
                "%(source)s: %(files)d files, %(new)d new versions, %(unchanged)d unchanged, "
                "%(ready)d ready, %(failed)d failed, %(refused)d refused; %(chunks)d chunks "
                "in %(seconds).1f s"
            )
            % {
                "source": summary["source"]["name"],
                "files": summary["files"],
                "new": summary["new_versions"],
                "unchanged": summary["unchanged"],
                "ready": summary["ready"],
                "failed": summary["failed"],
                "refused": summary["refused"],
                "chunks": summary["chunks"],
                "seconds": summary["seconds"],
            }
        )
        for row in summary["documents"]:
            if row["status"] in ("failed", "refused"):
                self.stdout.write(self.style.ERROR(f"  {row['document']}: {row['error']}"))


def _row(row: dict[str, Any], registration: Registration, result: IngestResult) -> dict[str, Any]:
    """The report's line for a version once its ingest ended."""
    version = registration.version
    # Only what the report shows: the parsed document is large.
    version.refresh_from_db(fields=["number", "label", "status", "chunk_count", "error", "timings"])
    return {
        **row,
        "created": registration.created,
        "document_id": registration.document.pk,
        "version_id": version.pk,
        "version": version.number,
        "label": version.display_label,
        "status": version.status,
        "chunks": version.chunk_count,
        "error": version.error,
        "skipped": result.status == "skipped",
        "timings": version.timings,
    }
