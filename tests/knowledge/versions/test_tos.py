"""The 53 GitHub Terms of Service versions as one document; two of them ingested."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from knowledge.ingest.batch import plan_files, register_planned
from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import get_or_create_source
from knowledge.models import Document, DocumentVersion
from knowledge.versions import services

from .conftest import remove_source
from .helpers import TOS, order

pytestmark = pytest.mark.django_db
INGESTED = ("tos__2025-03-24_65318a5.md", "tos__2025-09-29_a4234fc.md")


@pytest.fixture(scope="module")
def tos(django_db_setup, django_db_blocker):
    """All 53 versions registered as ``manage.py ingest --versions`` does; only the two the
    tests compare are parsed and embedded (the rest stay pending)."""
    with django_db_blocker.unblock():
        source = get_or_create_source("GitHub ToS history")
        for planned in plan_files([TOS], as_versions=True):
            register_planned(source, planned, via="cli", enqueue=False)
        for name in INGESTED:
            version = DocumentVersion.objects.get(document__source=source, filename=name)
            assert ingest_version(version.pk).status == "ready"
        yield Document.objects.get(source=source)
        remove_source(source.pk)


def test_53_versions_are_one_document_in_the_order_of_the_order_file(tos):
    versions = list(tos.versions.order_by("number"))
    assert [v.filename for v in versions] == order(TOS)
    assert [v.number for v in versions] == list(range(1, 54))
    # Nine versions share 2023-12-27; the order file, not the date, orders them.
    same_day = [v.label for v in versions if str(v.label_date) == "2023-12-27"]
    assert same_day[0] == "2023-12-27 e3ec830" and same_day[-1] == "2023-12-27 dbdfe9c"
    assert len(same_day) == 9


def test_latest_ready_version_added_access_reciprocity(tos):
    assert services.section_changed_in_latest(tos, "1.6.8") is True
    assert services.section_changed_in_latest(
        tos, ["D. User-Generated Content", "Access Reciprocity"]
    )
    assert services.section_changed_in_latest(tos, "Governing Law") is True
    assert services.section_changed_in_latest(tos, "1.13.1") is False  # Pricing
    [old, new] = services.resolve_versions(tos, ["previous", "latest"])
    assert (old.filename, new.filename) == INGESTED
    text = services.changes_as_text(services.compare(old, new))
    assert "**1.6.8 Access Reciprocity**: added" in text


def test_history_shows_53_versions_and_compares_only_ready_neighbours(client, bob, tos):
    client.force_login(bob)
    html = client.get(reverse("document_versions", args=[tos.pk])).content.decode()
    assert len(re.findall(r'<tr id="v-\d+"', html)) == 53
    assert html.count("not comparable until both versions are ready") == 51
    newest_ready = tos.versions.get(filename=INGESTED[1])
    row = html.split(f'id="v-{newest_ready.pk}"')[1].split("</tr>")[0]
    assert "1 section changed, 1 added" in row


def test_comparison_page_deep_links_the_added_section(client, bob, tos):
    client.force_login(bob)
    old, new = (tos.versions.get(filename=name) for name in INGESTED)
    html = client.get(
        reverse("compare_versions", args=[tos.pk]), {"a": old.pk, "b": new.pk}
    ).content.decode()
    assert '<section class="diff-section st-added" id="sec-1-6-8">' in html
    assert 'href="#sec-1-6-8"' in html
    assert "By using automated means to access" in html


@pytest.mark.parametrize(
    ("language", "words"),
    [("en", "Open the comparison of the versions"), ("ru", "Открыть сравнение версий")],
)
def test_the_diff_answer_links_its_comparison_page(tos, language, words):
    from html import escape

    from portal.markdown import render_markdown

    old, new = (tos.versions.get(filename=name) for name in INGESTED)
    comparison = services.compare(old, new)
    html = render_markdown(services.changes_as_text(comparison, language=language))
    link = f'<a href="{escape(comparison.url)}" rel="noopener noreferrer">{words}</a>'
    assert f"<p>{link}</p>" in html  # a paragraph of its own, not in the last section's item
