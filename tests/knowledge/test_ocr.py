"""Scans and images through the real upload and ingest: recognised with Tesseract, searchable.

The scans are made here from known text (``tests/knowledge/scans.py``), uploaded through the
real page as staff and ingested by the task's own code in this process (as test_bad_input
does); the OCR is the real Tesseract of the machine (``./kb test`` installs it).
"""

from __future__ import annotations

import threading

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from knowledge import services
from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import register_file
from knowledge.models import Chunk, Document, DocumentVersion, Source
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.types import Filters
from knowledge.retrieval.weights import Hits
from knowledge.tasks import ingest_version_task
from tests.knowledge.conftest import wait_for
from tests.knowledge.scans import page_png, scanned_pdf
from tests.knowledge.test_bad_input import run_pending_ingests, upload

ACT = (
    "<h1>Акт приёмки стенда</h1>"
    "<p>Стенд обновляют по пятницам после девяти вечера, когда трафик минимален.</p>"
    "<p>Ответственный за выкладку сообщает о ней в канале релизов заранее.</p>"
)
REPORT = (
    "<h1>Test report</h1>"
    "<p>The payment gateway timed out twice during the night load test.</p>"
    "<p>Retries with backoff kept every order; no payment was charged twice.</p>"
)
TABLE = (
    "<h2>Quarterly figures</h2><p>(In thousands)</p>"
    "<table><tr><td></td><td>2024</td><td>2023</td></tr>"
    "<tr><td>Licences sold</td><td>12,480</td><td>9,715</td></tr>"
    "<tr><td>Support contracts</td><td>3,204</td><td>2,988</td></tr>"
    "<tr><td>Total revenue</td><td>15,684</td><td>12,703</td></tr></table>"
)


def found(document: Document, question: str) -> list[Chunk]:
    """The document's chunks among the search hits for ``question``."""
    hits = search(
        question,
        filters=Filters(document_ids=[document.pk]),
        options=SearchOptions(min_score=-1.0, hits=Hits(cascade=False)),
    ).hits
    chunks = Chunk.objects.in_bulk([h.chunk_id for h in hits])
    return [chunks[h.chunk_id] for h in hits if chunks[h.chunk_id].document_id == document.pk]


def uploaded(client, alice, name: str, data: bytes) -> DocumentVersion:
    client.force_login(alice)
    assert upload(client, SimpleUploadedFile(name, data)).status_code == 302
    run_pending_ingests()
    return DocumentVersion.objects.get(document__path=name)


def test_a_scanned_pdf_is_recognised_and_found_by_a_sentence_on_its_page(client, alice, settings):
    settings.CHUNK_MIN_TOKENS = 0  # each page's short section a chunk of its own
    version = uploaded(client, alice, "act.pdf", scanned_pdf([REPORT, ACT]))
    assert version.status == "ready", version.error

    hits = found(version.document, "стенд обновляют по пятницам после девяти вечера")
    assert "Стенд обновляют по пятницам" in hits[0].text and hits[0].page == 2
    hits = found(version.document, "payment gateway timed out during the night")
    assert "payment gateway timed out" in hits[0].text and hits[0].page == 1

    # The version keeps how it was read: engine, languages, a confidence per page.
    assert version.ocr["engine"].startswith("Tesseract ")
    assert version.ocr["languages"] == "rus+eng"
    assert [p["page"] for p in version.ocr["pages"]] == [1, 2]
    assert all(p["confidence"] > 80 for p in version.ocr["pages"])
    assert version.poorly_recognised_pages == []


def test_a_png_is_ingested_as_a_scan_and_found_by_a_sentence_on_it(client, alice):
    version = uploaded(client, alice, "report.png", page_png(REPORT))
    assert (version.status, version.format, version.page_count) == ("ready", "image", 1)
    hits = found(version.document, "retries with backoff kept every order")
    assert hits and "no payment was charged twice" in hits[0].text
    assert hits[0].page == 1


def test_an_image_named_as_another_format_is_read_as_what_it_holds(client, alice):
    version = uploaded(client, alice, "act.docx", page_png(ACT))
    assert version.status == "ready", version.error
    assert version.format == "image"
    assert "its content is a PNG image; read as a scan" in " ".join(version.parsed["warnings"])
    assert found(version.document, "ответственный за выкладку сообщает в канале релизов")


def test_a_scanned_table_keeps_its_rows_on_their_lines(client, alice):
    version = uploaded(client, alice, "figures.png", page_png(TABLE))
    assert version.status == "ready", version.error
    tables = [b for b in version.parsed["blocks"] if b["kind"] == "table"]
    assert tables, version.parsed["blocks"]
    rows = tables[0]["table"]["rows"]
    assert ["Licences sold", "12,480", "9,715"] in rows
    assert ["Total revenue", "15,684", "12,703"] in rows


def test_pages_over_the_page_limit_fail_with_a_plain_error(client, alice, settings):
    settings.OCR_MAX_PAGES = 2
    version = uploaded(client, alice, "long-scan.pdf", scanned_pdf([REPORT, ACT, REPORT]))
    assert version.status == "failed"
    assert version.error == (
        "The document has 3 scanned pages to recognise; at most 2 are recognised per document "
        "(KB_OCR_MAX_PAGES). Split it into smaller files, or raise the limit."
    )
    assert not version.chunks.exists()


def test_recognition_past_the_time_limit_fails_with_a_plain_error(client, alice, settings):
    settings.OCR_TIME_LIMIT_SECONDS = 0
    version = uploaded(client, alice, "slow-scan.pdf", scanned_pdf([REPORT, ACT]))
    assert version.status == "failed"
    assert version.error.startswith(
        "Recognising the scan took longer than the limit of 0 minutes (KB_OCR_TIME_LIMIT_SECONDS)"
    )


@pytest.mark.parametrize(
    ("name", "build", "message"),
    [
        (
            "photo.png",
            lambda: page_png(REPORT)[:3000],  # cut short
            "The file is a damaged PNG image (it may be truncated); it cannot be read",
        ),
        (
            "photo.jpg",
            lambda: b"\xff\xd8\xff\xe0" + b"not really a jpeg" * 20,
            "The file is a damaged JPEG image (it may be truncated); it cannot be read",
        ),
    ],
)
def test_a_damaged_image_gets_a_plain_error(client, alice, name, build, message):
    version = uploaded(client, alice, name, build())
    assert (version.status, version.error) == ("failed", message)


def test_without_tesseract_a_scan_says_what_to_install_and_health_shows_ocr_down(
    client, alice, settings
):
    from portal.health import forget_cached_states

    settings.OCR_TESSERACT = "/nonexistent/tesseract"
    version = uploaded(client, alice, "act.pdf", scanned_pdf([ACT]))
    assert version.status == "failed"
    assert version.error.startswith("The PDF is a scan and needs OCR, but tesseract OCR is not")
    assert "tesseract-ocr, tesseract-ocr-rus, tesseract-ocr-eng" in version.error

    forget_cached_states()
    body = client.get("/healthz/services").json()  # the uploader (alice) is staff
    assert body["services"]["ocr"]["ok"] is False
    assert "apt-get install tesseract-ocr tesseract-ocr-rus" in body["services"]["ocr"]["detail"]
    forget_cached_states()


def test_healthz_shows_the_ocr_engine_to_staff_only(client, alice, bob):
    from portal.health import forget_cached_states

    forget_cached_states()
    client.force_login(alice)
    ocr = client.get("/healthz/services").json()["services"]["ocr"]
    assert ocr["ok"] is True and ocr["detail"].startswith("Tesseract ")
    assert "languages rus+eng" in ocr["detail"]
    client.force_login(bob)
    assert client.get("/healthz/services").status_code in (302, 403)
    assert "services" not in client.get("/healthz").json()
    forget_cached_states()


def test_pages_under_the_confidence_threshold_are_listed_in_the_readers_language(
    client, alice, settings
):
    settings.OCR_MIN_CONFIDENCE = 100  # every page is then "recognised poorly"
    version = uploaded(client, alice, "act.pdf", scanned_pdf([REPORT, ACT]))
    assert version.poorly_recognised_pages == [1, 2]
    page = client.get(f"/documents/{version.document_id}/", HTTP_ACCEPT_LANGUAGE="ru").content
    assert "Страницы 1, 2 распознаны плохо" in page.decode()
    english = client.get(f"/documents/{version.document_id}/", HTTP_ACCEPT_LANGUAGE="en")
    assert "Pages 1, 2 were recognised poorly" in english.content.decode()


def test_the_viewer_marks_recognised_pages_and_serves_their_images(client, alice, bob):
    version = uploaded(client, alice, "act.pdf", scanned_pdf([REPORT, ACT]))
    html = client.get(f"/documents/{version.document_id}/").content.decode()
    assert html.count('class="ocr-page') == 2
    assert f'href="/versions/{version.pk}/pages/2.png"' in html
    image = client.get(f"/versions/{version.pk}/pages/2.png")
    assert image["Content-Type"] == "image/png" and image.content.startswith(b"\x89PNG")
    assert client.get(f"/versions/{version.pk}/pages/3.png").status_code == 404

    # A reader outside the source does not get the page either.
    source = version.document.source
    source.is_public = False
    source.save()
    client.force_login(bob)
    assert client.get(f"/versions/{version.pk}/pages/2.png").status_code == 404


def test_a_text_pdf_is_not_recognised(client, alice):
    import pymupdf

    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 72), "The release branch freezes two days before the release.")
    version = uploaded(client, alice, "handbook.pdf", document.tobytes())
    assert version.status == "ready" and version.ocr == {}


def test_the_documents_page_shows_the_page_being_recognised(client, alice, settings):
    source = Source.objects.create(name="Scans")
    version = register_file(source, "act.pdf", scanned_pdf([ACT]), enqueue=False).version
    DocumentVersion.objects.filter(pk=version.pk).update(
        status="parsing", stage="ocr 3/50", progress=4
    )
    client.force_login(alice)
    assert "recognising text: page 3 of 50 4%" in client.get("/documents/").content.decode()
    russian = client.get("/documents/", HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert "распознавание текста: страница 3 из 50 4%" in russian


@pytest.mark.django_db(transaction=True)
def test_a_reindex_stops_a_recognition_under_way_and_starts_it_again(alice):
    source = Source.objects.create(name="Scans")
    pages = [REPORT, ACT] * 3
    version = register_file(source, "long.pdf", scanned_pdf(pages), enqueue=False).version
    outcome = {}

    def ingest() -> None:
        try:
            outcome["result"] = ingest_version(version.pk)
        finally:
            connection.close()

    running = threading.Thread(target=ingest)
    running.start()
    wait_for(
        lambda: DocumentVersion.objects.get(pk=version.pk).stage in ("ocr 1/6", "ocr 2/6"),
        timeout=120,
        interval=0.05,
        what="the first pages recognised",
    )
    try:
        assert services.reindex("document", version.document_id, alice) == 1
    finally:
        # The reindex queued its task on the session's Redis, where no worker of this test
        # takes it; a later test's worker must not find it there (and count it as its own).
        from portal.celery import app

        app.control.purge()
    running.join(timeout=300)
    assert outcome["result"].status == "skipped"  # the run gave the version up at its next page
    stopped = DocumentVersion.objects.get(pk=version.pk)
    assert stopped.status == "pending" and not stopped.chunks.exists()

    ingest_version_task(version.pk, force=True)  # what the queued reindex does on a worker
    again = DocumentVersion.objects.get(pk=version.pk)
    assert again.status == "ready" and again.attempts == 2
    assert [p["page"] for p in again.ocr["pages"]] == list(range(1, len(pages) + 1))


def test_pictures_of_a_synced_folder_are_not_documents_but_dropped_ones_are(tmp_path):
    from knowledge.ingest.files import iter_document_files

    (tmp_path / "page.md").write_text("# Page\n\nText.\n", encoding="utf-8")
    (tmp_path / "diagram.png").write_bytes(page_png(REPORT, dpi=72))
    dropped = [relative for _, relative, _ in iter_document_files(tmp_path)]
    synced = [relative for _, relative, _ in iter_document_files(tmp_path, images=False)]
    assert (dropped, synced) == (["diagram.png", "page.md"], ["page.md"])


@pytest.mark.browser
def test_the_viewer_shows_each_recognised_page_marked_beside_its_image(portal_server, page, alice):
    from tests.conftest import login, screenshot

    source = Source.objects.create(name="Scans")
    version = register_file(source, "act.pdf", scanned_pdf([REPORT, ACT]), enqueue=False).version
    assert ingest_version(version.pk).status == "ready"
    version.refresh_from_db()
    assert version.poorly_recognised_pages == []  # clean pages: over the default 70

    login(page, portal_server.url, "alice")
    page.goto(f"{portal_server.url}/documents/{version.document_id}/")
    marks = page.locator(".ocr-page")
    assert marks.count() == 2
    assert "Recognised (OCR)" in marks.first.inner_text()
    assert "Page 1: the text below was recognised from the page image" in marks.first.inner_text()
    # The thumbnails are real images of the pages, loaded by the browser.
    thumbs = page.locator(".ocr-page img")
    thumbs.last.scroll_into_view_if_needed()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.ocr-page img')].every(i => i.naturalWidth > 100)"
    )
    assert page.locator(".ocr-page.poor").count() == 0
    screenshot(page, "document-scan-recognised")
