"""Real version histories in the test database, ingested once per module.

The 16 DOCX versions of ``versions/hse_app_ru`` go in through ``manage.py ingest --versions``
(the same registration and ingest services as every entry point), once for this package of
tests. They are committed outside the per-test transactions so that every test sees them, and
removed when the package's tests are done; each test's own changes are rolled back with its
transaction.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import pytest
from django.core.management import call_command
from django.db import connections

from .helpers import HSE


@dataclass
class Ingested:
    source_id: int
    pmi_id: int
    tz_id: int
    report: dict

    def version(self, filename: str):
        from knowledge.models import DocumentVersion

        return DocumentVersion.objects.get(filename=filename, document__source_id=self.source_id)


def remove_source(source_id: int) -> None:
    """Delete a source's rows and put the search statistics back in step (a cascade delete
    does not go through the searchable flip that maintains them)."""
    from knowledge import termstats
    from knowledge.models import Source

    Source.objects.filter(pk=source_id).delete()
    termstats.rebuild()
    # Once the browser tests have run, this teardown can be in another context than the one
    # that opened the test connection; left open, its session stops the test database drop.
    connections.close_all()


def ingest_folder(folder, source: str) -> dict:
    out = io.StringIO()
    call_command("ingest", str(folder), "--versions", source=source, json=True, stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture(scope="package")
def hse(django_db_setup, django_db_blocker):
    from knowledge.models import Document, Source

    with django_db_blocker.unblock():
        report = ingest_folder(HSE, "HSE versions")
        source = Source.objects.get(name="HSE versions")
        documents = {d.path: d.pk for d in Document.objects.filter(source=source)}
        yield Ingested(source.pk, documents["ПМИ.docx"], documents["TZ.docx"], report)
        remove_source(source.pk)
