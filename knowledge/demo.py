"""The demo knowledge base the run command loads on first start (two sources of real documents)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from knowledge.batch import plan_files, register_planned
from knowledge.models import Source
from knowledge.registration import get_or_create_source


@dataclass(frozen=True)
class DemoSource:
    name: str
    folder: str
    kind: str
    description: str
    base_url: str = ""


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
    ),
]


def load_demo_knowledge_base() -> str:
    """Register the demo documents once (the worker ingests them); returns what it did."""
    root = settings.DEMO_CORPUS_DIR
    if Source.objects.exists():
        return ""
    if not root.is_dir():
        return f"Demo knowledge base not loaded: {root} not found (KB_DEMO_CORPUS)"
    counts = []
    for demo in DEMO_SOURCES:
        folder = root / demo.folder
        if not folder.is_dir():
            continue
        source = get_or_create_source(
            demo.name,
            kind=demo.kind,
            description=demo.description,
            base_url=demo.base_url,
            root_path=str(folder),
        )
        planned = [p for p in plan_files([folder]) if not p.problem]
        for item in planned:
            register_planned(source, item, via="demo", enqueue=True)
        counts.append(f"{len(planned)} from {demo.name}")
    if not counts:
        return ""
    return "Loading the demo knowledge base: " + ", ".join(counts) + " (watch the Documents page)"
