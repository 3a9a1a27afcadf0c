"""The demo knowledge base the run command loads on first start.

Three sources of real documents: the QA Bible wiki, the HSE app specifications and the GitHub
Terms of Service. The specifications come with their history: the successive versions of the
test programme (ПМИ) and the requirements (ТЗ) from ``versions/hse_app_ru`` are registered, in
the order of its ORDER.txt, as the earlier versions of those two documents. The Terms of
Service are only a history (53 versions, ``versions/github_tos_en``), the last of them current.
So the Versions pages and version-aware answers, Russian and English, have something real.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from knowledge.embedding import build_second_embedder
from knowledge.ingest.batch import (
    Planned,
    document_key,
    plan_files,
    read_order_file,
    register_planned,
)
from knowledge.ingest.many import ingest_versions
from knowledge.ingest.registration import get_or_create_source
from knowledge.ingest.second import fill_second_vectors
from knowledge.models import Source


@dataclass(frozen=True)
class DemoSource:
    name: str
    folder: str  # current documents, each its own; "" for a source that is only a history
    kind: str
    description: str
    base_url: str = ""
    history: str = ""  # a folder of earlier versions, named <key>_<date>_<sha>.docx
    history_documents: dict[str, str] = field(default_factory=dict)  # key -> document path


DEMO_SOURCES = [
    DemoSource(
        "QA Bible",
        "wiki_qa_bible_ru",
        Source.Kind.WIKI,
        "A Markdown wiki about software testing (GPL-3.0, VladislavEremeev/QA_bible).",
        "https://github.com/VladislavEremeev/QA_bible/blob/935773d7e94c26c2358ecd93bb58918463f539c3/",
    ),
    DemoSource(
        "HSE app specifications",
        "specs_hse_app_ru",
        Source.Kind.SPECS,
        "GOST-style project documents: test programme, requirements, explanatory note (MIT).",
        history="versions/hse_app_ru",
        history_documents={
            "ПМИ.docx": "Программа и методика испытаний.docx",
            "TZ.docx": "ТЗ-Шакруа-Максим-БПИ182.docx",
        },
    ),
    DemoSource(
        "GitHub Terms of Service",
        "",
        Source.Kind.SPECS,
        "The GitHub Terms of Service and their 53 versions, 2017-2026 (CC0-1.0, github/site-policy).",
        history="versions/github_tos_en",
        history_documents={"tos.md": "github-terms-of-service.md"},
    ),
]


def plan_source(root: Path, demo: DemoSource) -> list[Planned]:
    """The files of one demo source in registration order: history first, then the folder."""
    planned: list[Planned] = []
    if demo.history and (root / demo.history).is_dir():
        folder = root / demo.history
        for name in read_order_file(folder):
            target = demo.history_documents.get(document_key(name))
            if target and (folder / name).is_file():
                planned.append(Planned(folder / name, target))
    if demo.folder:
        planned += [p for p in plan_files([root / demo.folder]) if not p.problem]
    return planned


def _present(root: Path, demo: DemoSource) -> Path | None:
    """The folder that holds the source's files, or None when the corpus lacks it."""
    folder = root / (demo.folder or demo.history)
    return folder if folder.is_dir() else None


def _demo_plans(root: Path) -> list[tuple[Source, list[Planned]]]:
    """Each demo source present under ``root`` (created with its description and folder), with
    its files in registration order."""
    plans = []
    for demo in DEMO_SOURCES:
        folder = _present(root, demo)
        if folder is None:
            continue
        source = get_or_create_source(
            demo.name,
            kind=demo.kind,
            description=demo.description,
            base_url=demo.base_url,
            root_path=str(folder),
        )
        plans.append((source, plan_source(root, demo)))
    return plans


def load_demo_knowledge_base() -> str:
    """Register the demo documents once (the worker ingests them); returns what it did."""
    root = settings.DEMO_CORPUS_DIR
    if Source.objects.exists():
        return ""
    if not root.is_dir():
        return f"Demo knowledge base not loaded: {root} not found (KB_DEMO_CORPUS)"
    counts = []
    for source, planned in _demo_plans(root):
        for item in planned:
            register_planned(source, item, via="demo", enqueue=True)
        counts.append(f"{len(planned)} files from {source.name}")
    if not counts:
        return ""
    return "Loading the demo knowledge base: " + ", ".join(counts) + " (watch the Documents page)"


def ingest_demo_now(root: Path | None = None, progress=None) -> int:
    """Register and ingest the demo documents in this process (no worker), when the knowledge
    base is empty: for ``manage.py eval --demo`` and the benchmarks. Every file is registered
    first (in order), then the versions are ingested around one model thread that embeds the
    chunks of several files per call (``knowledge.ingest.many``). Returns the files ingested;
    ``progress(name, done, total)`` is called as each version ends."""
    root = root or settings.DEMO_CORPUS_DIR
    if Source.objects.exists() or not root.is_dir():
        return 0
    plans = [(source, item) for source, planned in _demo_plans(root) for item in planned]
    names: dict[int, str] = {}  # version -> its source's name (same bytes: the same version)
    for source, item in plans:
        registration = register_planned(source, item, via="demo", enqueue=False)
        names[registration.version.pk] = source.name
    ended = 0

    def done(result) -> None:
        nonlocal ended
        ended += 1
        if progress is not None:
            progress(names[result.version_id], ended, len(names))

    ingest_versions(list(names), done=done)
    # What the workers do after each version, here at the end, on every core.
    fill_second_vectors(build_second_embedder(threads=os.cpu_count()))
    return len(plans)
