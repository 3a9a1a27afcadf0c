"""Fixtures for the ingestion tests: the real corpus, the real ingest command, real workers.

The QA Bible wiki (238 pages, ~240k words) takes minutes to embed on this machine, so the
tests that need it share the session's demo knowledge base (``demo_kb`` in tests/conftest.py),
ingested once per session.
"""

from __future__ import annotations

import io
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from tests.conftest import ROOT, WorkerProcess

CORPUS = ROOT.parent / "shared" / "corpus"
PMI = CORPUS / "specs_hse_app_ru" / "Программа и методика испытаний.docx"
WIKI = CORPUS / "wiki_qa_bible_ru"
PMI_VERSIONS = CORPUS / "versions" / "hse_app_ru"
SEC_PDFS = CORPUS / "sec10q_en" / "data" / "v1" / "docs"
# A worker started with this settings module gives up on a silent ingest after 3 seconds.
STALE_SETTINGS = "tests.knowledge.stale_settings"


def ingest(*paths: Path | str, **options: Any) -> dict[str, Any]:
    """Run ``manage.py ingest PATH... --json`` and return its summary."""
    out = io.StringIO()
    call_command("ingest", *map(str, paths), json=True, stdout=out, **options)
    return json.loads(out.getvalue())


@pytest.fixture(scope="session")
def qa_bible(demo_kb):
    """The QA Bible wiki source of the session's demo knowledge base (ingested once per session,
    by the shared ``demo_kb`` fixture; for ``db`` tests only, see there)."""
    return demo_kb["QA Bible"]


def wait_for(
    predicate,
    *,
    timeout: float = 600,
    what: str = "condition",
    interval: float = 0.2,
    state: Callable[[], str] | None = None,
):
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` seconds
    (with what ``state`` says about the situation then, when given)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    seen = f": {state()}" if state else ""
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}{seen}")


def finished_tasks(worker: WorkerProcess, name: str = "knowledge.ingest_version") -> int:
    """How many ``name`` tasks the worker has started, once it is running none (else -1).

    Asked from the worker itself (Celery's remote control): its log holds warnings only.
    """
    from portal.celery import app

    inspect = app.control.inspect(timeout=1.0)
    stats, active = inspect.stats() or {}, inspect.active() or {}
    mine = [host for host in stats if host.startswith(worker.name + "@")]
    if not mine or active.get(mine[0]):
        return -1
    return stats[mine[0]].get("total", {}).get(name, 0)


@pytest.fixture
def stale_workers(transactional_db, monkeypatch) -> Iterator[Callable[[], WorkerProcess]]:
    """Starts real workers that take a version over once its heartbeat is 3 seconds old and
    embed 8 chunks per batch (``tests/knowledge/stale_settings.py``); all stopped at the end."""
    started: list[WorkerProcess] = []

    def start() -> WorkerProcess:
        with monkeypatch.context() as patch:
            patch.setenv("DJANGO_SETTINGS_MODULE", STALE_SETTINGS)
            started.append(WorkerProcess(f"stale{len(started)}-{os.getpid()}"))
        return started[-1]

    yield start
    for process in started:
        process.stop()
