"""Syncing the QA Bible wiki as a git repository: the first sync, then an incremental one.

The whole wiki (``../shared/corpus/wiki_qa_bible_ru``) is committed into a fresh repository in
a temporary folder and added as a git source, then synced through the same service as
``manage.py source sync`` (fetch, list or diff, register in one transaction) and its new versions
ingested in this process, one after the other, as the command does. Then one page is edited
and committed, and the source synced again; then synced once more with no new commit. Prints,
for each sync, the git-and-registration time, the ingest time and what was (re-)ingested.

Run: ``.venv/bin/python benchmarks/git_sync.py [--pages N] [--quick]`` (``--pages``: only the
first N pages, for a quicker look; ``--quick``: ten).
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from _setup import CORPUS, arguments, setup, teardown

WIKI = CORPUS / "wiki_qa_bible_ru"
EDITED = "obshee/politika-otsutstviya-bagov-zbp-zero-bug-policy.md"


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com"}
    env.update(GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com")
    run = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)
    return run.stdout.decode().strip()


def make_repository(target: Path, pages: int) -> int:
    """The wiki (or its first ``pages`` files) committed into a new repository; returns how
    many files it holds."""
    files = sorted(p for p in WIKI.rglob("*") if p.is_file())
    if pages:
        files = [p for p in files if p.suffix == ".md"][:pages]
    if pages and WIKI / EDITED not in files:
        files.append(WIKI / EDITED)
    for path in files:
        copy = target / path.relative_to(WIKI)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
    git(target, "init", "--quiet", "--initial-branch", "main")
    git(target, "add", "--all")
    git(target, "commit", "--quiet", "-m", "QA Bible")
    return len(files)


def timed_sync(source_id: int) -> dict:
    """One sync as ``manage.py source sync`` runs it: the service, then the ingest here."""
    from knowledge.ingest.pipeline import ingest_version
    from knowledge.models import DocumentVersion
    from knowledge.sources.sync import sync_source

    started, cpu_started = time.perf_counter(), _cpu()
    outcome = sync_source(source_id, enqueue=False)
    synced, cpu_synced = time.perf_counter(), _cpu()
    statuses = [ingest_version(pk).status for pk in outcome.version_ids]
    done, cpu_done = time.perf_counter(), _cpu()
    chunks = sum(
        DocumentVersion.objects.filter(pk__in=outcome.version_ids).values_list(
            "chunk_count", flat=True
        )
    )
    return {
        "outcome": outcome,
        "sync_s": synced - started,
        "ingest_s": done - synced,
        "total_s": done - started,
        "sync_cpu_s": cpu_synced - cpu_started,
        "ingest_cpu_s": cpu_done - cpu_synced,
        "ready": statuses.count("ready"),
        "failed": statuses.count("failed"),
        "chunks": chunks,
    }


def _cpu() -> float:
    """CPU seconds of this process and of the git commands it ran (PostgreSQL not counted)."""
    mine, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


def report(title: str, run: dict) -> None:
    outcome = run["outcome"]
    print(f"\n{title}: {outcome.summary()}")
    print(
        f"  git + registration {run['sync_s']:7.2f} s   ingest {run['ingest_s']:7.2f} s   "
        f"total {run['total_s']:7.2f} s"
    )
    print(
        f"  CPU here and in git: registration {run['sync_cpu_s']:6.2f} s   "
        f"ingest {run['ingest_cpu_s']:7.2f} s   (the machine is shared: CPU is the steadier)"
    )
    print(
        f"  versions ingested {len(outcome.version_ids)} ({run['ready']} ready, "
        f"{run['failed']} failed), {run['chunks']} chunks"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=0, help="only the first N pages")
    args = arguments(parser)
    if args.quick:
        args.pages = 10
    data_dir = setup("git_sync")
    from django.core.management import call_command

    from knowledge.embedding import get_embedder
    from knowledge.models import Document, Source

    loading = time.perf_counter()
    get_embedder().embed_documents(["warm-up"])  # once per process, as in a worker
    load_s = time.perf_counter() - loading

    with tempfile.TemporaryDirectory() as scratch:
        repo = Path(scratch) / "qa-bible"
        files = make_repository(repo, args.pages)
        call_command(
            "source", "add", "QA Bible", "--kind", "git", f"--url={repo}", stdout=io.StringIO()
        )
        source = Source.objects.get(name="QA Bible")
        print(f"QA Bible wiki as a git repository: {files} files, one commit; data in {data_dir}")
        print(f"  model load (once per process, not counted): {load_s:.1f} s")
        first = timed_sync(source.pk)
        report("First sync", first)

        with (repo / EDITED).open("a", encoding="utf-8") as page:
            page.write(
                "\n## Исключения\n\nКосметические дефекты архивных модулей — раз в квартал.\n"
            )
        git(repo, "commit", "--quiet", "-am", "One page edited")
        second = timed_sync(source.pk)
        report("Incremental sync after one changed page", second)

        third = timed_sync(source.pk)
        report("Sync with no new commit", third)

    documents = Document.objects.filter(source=source, removed_at__isnull=True).count()
    print(f"\nDocuments in the source: {documents}")
    if second["total_s"]:
        print(
            f"First sync / incremental sync (total time): {first['total_s'] / second['total_s']:.0f} x"
        )
    teardown()


if __name__ == "__main__":
    main()
