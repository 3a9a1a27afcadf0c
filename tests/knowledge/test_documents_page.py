"""The documents page: who may see, upload and reindex; CSRF; live progress; the browser run.

The browser test is the whole story as staff live it: two files uploaded through the real page
served by uvicorn, ingested by a real worker, progress shown while they ingest, then "ready";
a bad file then shows its error in plain words.
"""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from knowledge.ingest.registration import register_file
from knowledge.models import Document, DocumentVersion, Source
from tests.conftest import login, screenshot
from tests.knowledge.conftest import PMI
from tests.knowledge.test_bad_input import page_rows, png
from tests.knowledge.test_tasks import big_page

PAGE = b"# Release handbook\n\nThe release branch freezes two days before the release.\n"


@pytest.fixture
def specs(db) -> Document:
    source = Source.objects.create(name="Specs")
    return register_file(source, "handbook.md", PAGE, enqueue=False).document


# --- who may do what ------------------------------------------------------------------------------


def test_anonymous_users_are_sent_to_login(client, specs):
    for method, url in [
        ("get", "/documents/"),
        ("get", f"/documents/{specs.pk}/"),
        ("post", "/documents/upload/"),
        ("post", "/documents/reindex/"),
        ("post", f"/documents/{specs.pk}/reindex/"),
    ]:
        response = getattr(client, method)(url)
        assert response.status_code == 302, url
        assert response.url.startswith("/login/"), url
    assert DocumentVersion.objects.count() == 1


def test_reader_sees_documents_but_cannot_upload_or_reindex(client, bob, specs):
    client.force_login(bob)
    html = client.get("/documents/").content.decode()
    assert "handbook.md" in html
    assert 'name="files"' not in html and "Reindex" not in html
    upload = client.post(
        "/documents/upload/",
        {"files": [SimpleUploadedFile("x.md", b"# X\n\nText.\n")], "new_source": "Mine"},
    )
    assert upload.status_code == 403
    for url in [
        "/documents/reindex/",
        f"/documents/{specs.pk}/reindex/",
        f"/sources/{specs.source_id}/reindex/",
    ]:
        assert client.post(url).status_code == 403, url
    assert not Source.objects.filter(name="Mine").exists()
    assert list(DocumentVersion.objects.values_list("status", "attempts")) == [("pending", 0)]


def test_user_outside_a_private_source_does_not_see_its_documents(client, bob, eve, specs):
    Source.objects.filter(pk=specs.source_id).update(is_public=False)
    specs.source.readers.add(bob)
    client.force_login(eve)
    assert "handbook.md" not in client.get("/documents/").content.decode()
    assert client.get(f"/documents/{specs.pk}/").status_code == 404
    client.force_login(bob)
    assert client.get(f"/documents/{specs.pk}/").status_code == 200


def test_upload_and_reindex_need_the_csrf_token(alice, specs):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    files = {"files": [SimpleUploadedFile("x.md", b"# X\n\nText.\n")], "new_source": "Team"}
    assert client.post("/documents/upload/", files).status_code == 403
    assert client.post(f"/documents/{specs.pk}/reindex/").status_code == 403
    assert not Document.objects.filter(path="x.md").exists()

    html = client.get("/documents/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    files = {"files": [SimpleUploadedFile("x.md", b"# X\n\nText.\n")], "new_source": "Team"}
    response = client.post("/documents/upload/", {**files, "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert Document.objects.filter(path="x.md", source__name="Team").exists()
    reindex = client.post(f"/documents/{specs.pk}/reindex/", HTTP_X_CSRFTOKEN=token)
    assert reindex.status_code == 302


# --- live progress ------------------------------------------------------------------------------


def test_table_fragment_polls_and_shows_progress_while_a_version_ingests(client, bob, specs):
    client.force_login(bob)
    DocumentVersion.objects.filter(document=specs).update(
        status="embedding", progress=42, stage="embedding"
    )
    response = client.get("/documents/", HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert "<html" not in html and 'id="documents-table"' in html  # the fragment only
    assert "HX-Request" in response["Vary"]
    assert 'hx-trigger="every 2s"' in html
    assert 'aria-valuenow="42"' in html and "embedding 42%" in html
    assert '<span class="badge embedding">1 embedding</span>' in html  # counts refresh too

    DocumentVersion.objects.filter(document=specs).update(status="ready", progress=100, stage="")
    html = client.get("/documents/", HTTP_HX_REQUEST="true").content.decode()
    assert "hx-trigger" not in html and 'role="progressbar"' not in html
    assert page_rows(html)["handbook.md"][0] == "ready"


# --- the browser run -------------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.worker
def test_staff_upload_through_the_page_shows_progress_then_ready_then_errors(
    portal_server, worker, page, alice, tmp_path
):
    handbook = big_page(tmp_path)  # long enough to be caught ingesting
    login(page, portal_server.url, "alice")
    page.goto(portal_server.url + "/documents/")
    page.set_input_files("input[name=files]", [str(handbook), str(PMI)])
    page.fill("input[name=new_source]", "Team docs")
    page.click("form.upload-form button[type=submit]")
    page.wait_for_url(re.compile(r"/documents/\?source=\d+"))
    assert "2 new versions queued" in page.locator(".messages").inner_text()
    assert page.locator("tr.doc-row").count() == 2
    page.locator("tr.doc-row [role=progressbar]").first.wait_for()
    screenshot(page, "documents-ingesting")

    # The table refreshes itself (HTMX polling) until both are ready.
    page.locator('tr.doc-row[data-status="ready"]').nth(1).wait_for(timeout=900_000)
    # The versions' rows; the meaning index has a bar of its own (no test worker fills it).
    assert page.locator("tr.doc-row [role=progressbar]").count() == 0
    chunks = page.locator("tr.doc-row td:nth-child(5)").all_inner_texts()
    assert all(int(n) > 0 for n in chunks)
    screenshot(page, "documents-ready")

    bad = tmp_path / "diagram.docx"
    bad.write_bytes(png())
    page.set_input_files("input[name=files]", [str(bad)])
    page.click("form.upload-form button[type=submit]")
    page.locator('tr.doc-row[data-status="failed"]').wait_for(timeout=120_000)
    error = page.locator('tr.doc-row[data-status="failed"] .error').inner_text()
    assert error == "No text was recognised in the image"
    assert page.locator('tr.doc-row[data-status="ready"]').count() == 2
    assert page.locator(".status-counts").inner_text().split() == ["1", "failed", "2", "ready"]
    screenshot(page, "documents-error")


def test_reindex_goes_back_to_the_portal_only(client, alice, specs):
    client.force_login(alice)
    back = client.post(f"/documents/{specs.pk}/reindex/", {"next": f"/documents/{specs.pk}/"})
    assert back.url == f"/documents/{specs.pk}/"
    for target in ("https://evil.example/", "//evil.example/x"):
        response = client.post(f"/documents/{specs.pk}/reindex/", {"next": target})
        assert response.url == "/documents/"
