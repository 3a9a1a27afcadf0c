"""The synced sources on the Documents page: last sync and its result for readers, the origin
and "Sync now" for staff (an HTMX POST with the CSRF token), polled while a sync runs; and the
browser run: a git wiki synced from the page by a real worker, then its comparison page."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils import timezone

from knowledge.models import Document, Source
from portal.models import AuditEvent
from tests.conftest import login, screenshot
from tests.knowledge.conftest import wait_for
from tests.knowledge.sources.conftest import EXCEPTIONS, SHIFT_LEFT, ZBP, add_source

TOKEN_URL = "https://editor:s3cret-token@git.example.com/team/wiki.git"


@pytest.fixture
def wiki_source(db) -> Source:
    return Source.objects.create(
        name="Team wiki",
        kind="wiki",
        connector="git",
        sync_url=TOKEN_URL,
        branch="main",
        last_synced_at=timezone.now(),
        last_sync_status="ok",
        last_sync_result="Documents 4 added; 4 new versions (commit 3fa2c1d).",
    )


def test_readers_see_the_last_sync_but_not_the_origin_or_the_button(client, bob, wiki_source):
    client.force_login(bob)
    html = client.get("/documents/").content.decode()
    assert "Synced sources" in html and "Team wiki" in html
    assert "Documents 4 added; 4 new versions (commit 3fa2c1d)." in html
    assert "git.example.com" not in html and "Sync now" not in html
    assert client.post(f"/sources/{wiki_source.pk}/sync/").status_code == 403


def test_staff_see_the_origin_without_its_token(client, alice, wiki_source):
    client.force_login(alice)
    html = client.get("/documents/").content.decode()
    assert "https://***@git.example.com/team/wiki.git" in html and "branch main" in html
    assert "s3cret" not in html
    assert "Sync now" in html and "every 15 min" in html


def test_sync_now_needs_the_csrf_token_and_queues_the_sync(alice, wiki_source):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post(f"/sources/{wiki_source.pk}/sync/").status_code == 403
    wiki_source.refresh_from_db()
    assert wiki_source.last_sync_status == "ok"

    html = client.get("/documents/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    response = client.post(
        f"/sources/{wiki_source.pk}/sync/", HTTP_X_CSRFTOKEN=token, HTTP_HX_REQUEST="true"
    )
    fragment = response.content.decode()
    assert response.status_code == 200 and "<html" not in fragment
    assert 'id="sources"' in fragment and 'hx-trigger="every 2s"' in fragment
    assert '<span class="badge sync-queued">Queued</span>' in fragment
    assert "disabled" in fragment  # no second click while it is queued
    wiki_source.refresh_from_db()
    assert wiki_source.last_sync_status == "queued"
    assert AuditEvent.objects.filter(action="source-sync", target="Team wiki").exists()


def test_the_card_is_polled_while_syncing_then_the_page_reloads(client, alice, wiki_source):
    client.force_login(alice)
    Source.objects.filter(pk=wiki_source.pk).update(last_sync_status="running")
    poll = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "sources"}
    response = client.get("/documents/", **poll)
    assert '<span class="badge sync-running">Syncing</span>' in response.content.decode()
    assert "HX-Request" in response["Vary"]
    Source.objects.filter(pk=wiki_source.pk).update(
        last_sync_status="failed", last_sync_error='The branch "main" does not exist in x.'
    )
    done = client.get("/documents/", **poll)
    assert done["HX-Refresh"] == "true"  # the documents it brought are in the table then
    html = client.get("/documents/").content.decode()
    assert "The branch &quot;main&quot; does not exist in x." in html
    assert 'hx-trigger="every 2s"' not in html


# --- the browser run -------------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.worker
def test_staff_sync_a_git_wiki_from_the_page_and_compare_an_edited_page(
    portal_server, worker, page, alice, wiki
):
    add_source("QA Bible (git)", str(wiki.path), "--base-url", "https://wiki.example.com/")
    source = Source.objects.get(name="QA Bible (git)")
    login(page, portal_server.url, "alice")
    page.goto(f"{portal_server.url}/documents/?source={source.pk}")
    row = page.locator('tr.source-row[data-source="QA Bible (git)"]')
    assert "Never synced" in row.inner_text() and "never" in row.locator(".last-sync").inner_text()

    row.locator("button.sync-now").click()
    # The card polls until the worker has synced; then the page reloads with the documents.
    page.locator('tr.source-row[data-status="ok"]').wait_for(timeout=120_000)
    assert "Documents 4 added" in page.locator(".sync-result").inner_text()
    page.locator('tr.doc-row[data-status="ready"]').nth(3).wait_for(timeout=300_000)
    assert page.locator("tr.doc-row").count() == 4
    screenshot(page, "documents-git-source")

    zbp = Document.objects.get(source=source, path=ZBP)
    wiki.append(ZBP, EXCEPTIONS)
    (wiki.path / SHIFT_LEFT).unlink()
    wiki.commit("Exceptions to the ZBP; shift-left page retired", day="2024-03-05")
    page.locator("button.sync-now").click()
    page.locator(".sync-result", has_text="1 changed, 1 removed").wait_for(timeout=120_000)
    wait_for(
        lambda: zbp.versions.filter(status="ready").count() == 2,
        timeout=300,
        what="the edited page's second version",
    )
    page.reload()
    assert page.locator("tr.doc-row").count() == 3  # the deleted page left the list
    screenshot(page, "documents-git-source-synced")

    page.goto(f"{portal_server.url}/documents/{zbp.pk}/versions/")
    screenshot(page, "versions-git-page")
    page.goto(f"{portal_server.url}/documents/{zbp.pk}/compare/")
    body = page.locator("body").inner_text()
    assert "Исключения" in body and "журнал техдолга" in body
    assert "2024-03-01" in body and "2024-03-05" in body
    screenshot(page, "compare-git-page")


def test_the_admin_edits_the_sync_and_syncs_on_demand(client, alice, wiki_source):
    client.force_login(alice)
    page = client.get(f"/admin/knowledge/source/{wiki_source.pk}/change/").content.decode()
    assert 'name="sync_url"' in page and 'name="history_depth"' in page
    assert "Documents 4 added; 4 new versions (commit 3fa2c1d)." in page  # read-only result
    Source.objects.filter(pk=wiki_source.pk).update(sync_cursor="3fa2c1d" * 5)
    form = {
        "name": "Team wiki",
        "kind": "wiki",
        "priority": 1,
        "is_public": "on",
        "connector": "git",
        "sync_url": TOKEN_URL,
        "branch": "release",  # another origin: the next sync lists everything again
        "history_depth": 3,
        "sync_interval_minutes": 30,
    }
    response = client.post(f"/admin/knowledge/source/{wiki_source.pk}/change/", form)
    assert response.status_code == 302, response.content[:300]
    wiki_source.refresh_from_db()
    assert (wiki_source.branch, wiki_source.history_depth, wiki_source.sync_cursor) == (
        "release",
        3,
        "",
    )
    action = {"action": "sync_now", "_selected_action": [wiki_source.pk]}
    client.post("/admin/knowledge/source/", action)
    wiki_source.refresh_from_db()
    assert wiki_source.last_sync_status == "queued"
