"""Fixtures for the ingestion tests: the real corpus, the real ingest command, real workers.

The QA Bible wiki (238 pages, ~240k words) takes minutes to embed on this machine, so the
tests that need it share the session's demo knowledge base (``demo_kb`` in tests/conftest.py),
ingested once per session.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
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


@pytest.fixture
def stale_worker(transactional_db, monkeypatch) -> Iterator[WorkerProcess]:
    """A real worker that takes a version over once its heartbeat is 3 seconds old."""
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", STALE_SETTINGS)
    process = WorkerProcess(f"stale-{id(monkeypatch)}")
    monkeypatch.delenv("DJANGO_SETTINGS_MODULE")
    yield process
    process.stop()
