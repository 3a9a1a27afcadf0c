"""Bad files: each gets a clear error on its version and on the documents page, and nothing
else is lost (the other documents stay ready and searchable).

Files go in through the real upload page as staff; the ingest task then runs in this process
(its code, not a worker: these files fail before any embedding). Every bad file is built here
from the corpus or from scratch.
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
from html import unescape

import pymupdf
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils.html import escape

from knowledge.models import Chunk, Document, DocumentVersion
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.types import Filters
from knowledge.retrieval.weights import Hits
from knowledge.tasks import ingest_version_task
from tests.knowledge.conftest import PMI

GOOD = (
    "# Release handbook\n\n## Freeze\n\nThe release branch freezes two days before the release.\n"
)


def png() -> bytes:
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 300, 120), 0)
    pixmap.clear_with(220)
    return pixmap.tobytes("png")


def gif() -> bytes:
    """A 1x1 GIF: images other than PNG, JPEG and TIFF are not read."""
    return b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"


def encrypted_pdf() -> bytes:
    document = pymupdf.open()
    document.new_page().insert_text((72, 72), "Quarterly figures, confidential")
    return document.tobytes(
        encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="secret"
    )


def scanned_pdf() -> bytes:
    """A PDF whose page is an image only, and a blank one: no text layer, nothing to read."""
    document = pymupdf.open()
    document.new_page().insert_image(pymupdf.Rect(72, 72, 372, 192), stream=png())
    return document.tobytes()


def zip_bomb(declared_size: int | None = None) -> bytes:
    """A .docx whose document.xml unpacks to 50 MB from ~50 KB. With ``declared_size`` its
    headers lie about that size (so a check of the declared sizes alone would let it pass)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
            'content-types"/>',
        )
        archive.writestr("word/document.xml", b"<w:document>" + b" " * 50 * 2**20 + b"</w>")
    data = bytearray(buffer.getvalue())
    if declared_size is not None:
        name = b"word/document.xml"
        # Local header: size at +22, name length at +26, name at +30. Central: +24, +28, +46.
        for signature, size_at, length_at, name_at in (
            (b"PK\x03\x04", 22, 26, 30),
            (b"PK\x01\x02", 24, 28, 46),
        ):
            at = data.find(signature)
            while at != -1:
                length = struct.unpack_from("<H", data, at + length_at)[0]
                if data[at + name_at : at + name_at + length] == name:
                    struct.pack_into("<I", data, at + size_at, declared_size)
                at = data.find(signature, at + 4)
    return bytes(data)


BAD_FILES = {
    "truncated DOCX": (
        "programme.docx",
        lambda: PMI.read_bytes()[: PMI.stat().st_size // 2],
        "The file is not a valid Word document (it may be truncated or damaged)",
    ),
    "encrypted PDF": ("report.pdf", encrypted_pdf, "The PDF is password-protected"),
    "blank scan": ("scan.pdf", scanned_pdf, "No text was recognised on the scanned pages"),
    "empty file": ("empty.docx", lambda: b"", "The file is empty"),
    "blank text file": ("blank.txt", lambda: b" \n\n\t\n", "The file is empty"),
    "blank PNG named .docx": ("diagram.docx", png, "No text was recognised in the image"),
    "GIF named .docx": (
        "diagram.docx",
        gif,
        "The file is a GIF image, not a Word document; it cannot be indexed",
    ),
    "zip bomb": (
        "bomb.docx",
        zip_bomb,
        "The file unpacks to 50 MB from 50 KB; it looks like a zip bomb and was not opened",
    ),
    "zip bomb with forged sizes": (
        "forged.docx",
        lambda: zip_bomb(declared_size=4096),
        "The file is not a valid Word document (it may be truncated or damaged)",
    ),
}


def page_rows(html: str) -> dict[str, tuple[str, str]]:
    """The documents page's table: document path -> (status, the row's HTML)."""
    rows = {}
    for status, row in re.findall(
        r'<tr class="doc-row" data-status="(\w+)">(.*?)</tr>', html, re.S
    ):
        path = re.search(r'<div class="muted small">(.*?)</div>', row).group(1)
        rows[unescape(path)] = (status, row)
    return rows


def upload(client, *files: SimpleUploadedFile, source: str = "Uploads", **options):
    return client.post(
        "/documents/upload/", {"files": list(files), "new_source": source}, **options
    )


def run_pending_ingests() -> None:
    """What the worker does with the tasks the upload enqueued (they wait for a commit here)."""
    for pk in DocumentVersion.objects.filter(status="pending").values_list("pk", flat=True):
        ingest_version_task(pk)


@pytest.fixture
def good_document(client, alice) -> Document:
    client.force_login(alice)
    upload(client, SimpleUploadedFile("handbook.md", GOOD.encode()))
    run_pending_ingests()
    document = Document.objects.get(path="handbook.md")
    assert document.current_version.status == "ready"
    return document


def assert_still_searchable(document: Document, client=None) -> None:
    document.refresh_from_db()
    if client is not None:
        assert page_rows(client.get("/documents/").content.decode())[document.path][0] == "ready"
    assert document.current_version.status == "ready"
    chunks = set(
        Chunk.objects.filter(document=document, searchable=True).values_list("pk", flat=True)
    )
    assert chunks
    hits = search(
        "when does the release branch freeze",
        filters=Filters(document_ids=[document.pk]),
        options=SearchOptions(hits=Hits(cascade=False), min_score=-1.0),
    ).hits
    assert {h.chunk_id for h in hits} & chunks


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_file_gets_a_clear_error_and_nothing_else_is_lost(client, good_document, case):
    name, build, message = BAD_FILES[case]
    response = upload(client, SimpleUploadedFile(name, build()))
    assert response.status_code == 302
    run_pending_ingests()

    version = DocumentVersion.objects.get(document__path=name)
    assert (version.status, version.error) == ("failed", message)
    assert not version.chunks.exists()

    status, row = page_rows(client.get("/documents/").content.decode())[name]
    assert status == "failed" and escape(message) in row
    assert_still_searchable(good_document, client)


def test_good_files_uploaded_with_a_bad_one_are_all_indexed(client, good_document):
    upload(
        client,
        SimpleUploadedFile("diagram.docx", png()),
        SimpleUploadedFile("notes.txt", "Стенд обновляют по пятницам.".encode()),
        SimpleUploadedFile(PMI.name, PMI.read_bytes()),
    )
    run_pending_ingests()
    statuses = dict(
        DocumentVersion.objects.values_list("document__path", "status").exclude(
            document=good_document
        )
    )
    assert statuses == {"diagram.docx": "failed", "notes.txt": "ready", PMI.name: "ready"}
    assert_still_searchable(good_document)


def test_upload_over_the_size_limit_is_refused_with_its_reason(client, good_document, settings):
    settings.MAX_UPLOAD_MB = 1
    response = upload(client, SimpleUploadedFile("huge.txt", b"word " * 300_000), follow=True)
    assert "huge.txt: over the 1 MB limit, not read" in response.content.decode()
    assert not Document.objects.filter(path="huge.txt").exists()
    assert_still_searchable(good_document)


@pytest.mark.parametrize(
    "name", ["../../../etc/cron.d/evil.md", "..\\..\\evil.md", "a/../../evil.md"]
)
def test_file_name_with_dot_dot_is_stored_safely_inside_the_media_folder(
    client, good_document, settings, name
):
    media = settings.MEDIA_ROOT.resolve()
    upload(client, SimpleUploadedFile(name, b"# Evil\n\nNothing to see.\n"))
    run_pending_ingests()
    version = DocumentVersion.objects.get(filename="evil.md")
    assert version.document.path == "evil.md" and version.status == "ready"
    stored = (media / version.file.name).resolve()
    assert stored.is_file() and stored.is_relative_to(media)
    # Nothing under the name it was sent with, anywhere: the bytes live under their hash.
    assert not (media / name.replace("\\", "/")).resolve().exists()
    assert not list(media.parent.rglob("evil*"))
    download = client.get(f"/versions/{version.pk}/download/")
    assert download["Content-Disposition"] == 'attachment; filename="evil.md"'
    assert_still_searchable(good_document)


def test_registered_paths_cannot_leave_their_source(db, alice):
    from knowledge.ingest.registration import register_file
    from knowledge.models import Source

    source = Source.objects.create(name="CLI")
    registration = register_file(source, "../../outside/../evil.md", b"# Evil\n", enqueue=False)
    assert registration.document.path == "outside/evil.md"
    assert registration.version.filename == "evil.md"
    assert registration.version.file.name.startswith("blobs/")
