"""Re-chunk and re-embed a benchmark knowledge base from its stored parses, without parsing again.

A chunking or embedding-text change is measured on a copy of a kept knowledge base (parsing the
20 SEC PDFs again takes a quarter of an hour): every ready version goes through the normal
ingest service (``ingest_version(force=True)``) with its parse step reading the version's stored
parse (``DocumentVersion.parsed``) instead of its file; vectors of unchanged embedded texts are
reused, as a re-ingest does.

Run: ``cp -a var/bench-sec var/bench-sec-copy`` (no server running on it), then
``KB_BENCH_DATA_DIR=var/bench-sec-copy .venv/bin/python benchmarks/rechunk.py sec`` and
``KB_BENCH_DATA_DIR=var/bench-sec-copy .venv/bin/python benchmarks/retrieval_sec.py --reuse``.
``--quick`` (no name): a knowledge base of its own, five wiki pages ingested here, re-chunked.
"""

from __future__ import annotations

import argparse
import io
import time

from _setup import CORPUS, arguments, setup, teardown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "name", nargs="?", help="the benchmark's name: var/bench-<name> or KB_BENCH_DATA_DIR"
    )
    args = arguments(parser)
    if not args.name and not args.quick:
        parser.error("name the benchmark whose knowledge base is re-chunked")
    setup(args.name or "rechunk", fresh=not args.name)
    try:
        if not args.name:
            from django.core.management import call_command

            pages = sorted((CORPUS / "wiki_qa_bible_ru").rglob("*.md"))[:5]
            call_command("ingest", *map(str, pages), source="Wiki", json=True, stdout=io.StringIO())
        import knowledge.ingest.pipeline as pipeline
        from knowledge.models import DocumentVersion
        from knowledge.parsing.base import ParsedDocument

        def stored_parse(version: DocumentVersion, _token: str = "") -> ParsedDocument:
            parsed = DocumentVersion.objects.values_list("parsed", flat=True).get(pk=version.pk)
            return ParsedDocument.from_dict(parsed)

        # The one step replaced: parse reads the stored parse; chunk, embed and store are the
        # ingest's own.
        pipeline._parse = stored_parse
        started = time.perf_counter()
        ready = DocumentVersion.Status.READY
        ids = list(DocumentVersion.objects.filter(status=ready).values_list("pk", flat=True))
        for pk in ids:
            result = pipeline.ingest_version(pk, force=True)
            if result.status != "ready":
                raise SystemExit(f"version {pk}: {result.status} {result.error}")
        print(f"{len(ids)} versions re-chunked in {time.perf_counter() - started:.0f} s")
    finally:
        teardown()


if __name__ == "__main__":
    main()
