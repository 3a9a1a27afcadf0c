"""Bounded memory and time for every file, through the ways files arrive: ``manage.py ingest``,
the upload page with a real worker, the drop folder's scan.

A zip whose parts unpack past the budget or use another method than deflate is refused before
it is unpacked (the worker stays small: its peak memory is measured), a PDF with too many pages
is refused before a page is read, an ingest that runs too long is stopped with a plain-words
error, and a hard link to a file outside a scanned folder is not read.
"""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import docx
import pymupdf
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from knowledge.models import Chunk, Document, DocumentVersion
from knowledge.tasks import scan_drop_folder
from tests.conftest import ROOT, WorkerProcess, subprocess_env
from tests.knowledge.conftest import wait_for

# Runs a command and reports its peak memory: a wrapper of its own, so that no earlier child
# of the test process counts.
PEAK = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stdout.write(done.stdout)\n"
    "sys.stderr.write(f'PEAK_MB {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024}')\n"
)


def _small_docx() -> bytes:
    document = docx.Document()
    document.add_heading("Бюджет", 1)
    document.add_paragraph("Небольшой документ про бюджет отдела.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _with_document_xml(body: bytes, method: int, declared: int | None = None) -> bytes:
    """A real DOCX whose word/document.xml is ``body`` packed with ``method``; ``declared``:
    the size its central directory claims instead of the true one (a lying zip)."""
    source = zipfile.ZipFile(io.BytesIO(_small_docx()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for info in source.infolist():
            if info.filename == "word/document.xml":
                package.writestr(zipfile.ZipInfo(info.filename), body, compress_type=method)
            else:
                package.writestr(info, source.read(info.filename), zipfile.ZIP_DEFLATED)
    data = bytearray(out.getvalue())
    if declared is not None:
        at = data.find(b"PK\x01\x02")
        while at != -1:
            length = struct.unpack("<H", data[at + 28 : at + 30])[0]
            if bytes(data[at + 46 : at + 46 + length]) == b"word/document.xml":
                data[at + 24 : at + 28] = struct.pack("<I", declared)
            at = data.find(b"PK\x01\x02", at + 4)
    return bytes(data)


def _ingest(path: Path) -> tuple[dict, int]:
    """``manage.py ingest PATH --json`` in a process of its own: (summary, peak memory in MB)."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK, sys.executable, "manage.py", "ingest", str(path), "--json"],
        cwd=ROOT,
        env=subprocess_env(KB_DEMO="0"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    peak = int(done.stderr.rsplit("PEAK_MB ", 1)[1])
    return json.loads(done.stdout[done.stdout.index("{") :]), peak


def test_a_bzip2_part_lying_about_its_size_is_refused_before_it_is_unpacked(
    transactional_db, tmp_path
):
    # 300 MB of blanks in bzip2 (a few hundred bytes), declared as 5 KB: zipfile would have
    # unpacked all of it in one call (699 MB peak before; the attack's 2 GB grew a worker to
    # 2.2 GB).
    xml = zipfile.ZipFile(io.BytesIO(_small_docx())).read("word/document.xml")
    bomb = _with_document_xml(xml + b" " * (300 * 2**20), zipfile.ZIP_BZIP2, declared=5000)
    assert len(bomb) < 100 * 1024
    (tmp_path / "budget.docx").write_bytes(bomb)
    summary, peak = _ingest(tmp_path / "budget.docx")
    row = summary["documents"][0]
    assert row["status"] == "failed"
    assert "compressed with bzip2" in row["error"] and "deflate only" in row["error"]
    assert peak < 200, f"peak {peak} MB"


def test_a_deflate_part_past_the_part_budget_is_refused_while_it_streams(
    transactional_db, tmp_path
):
    # 48 MB of real paragraphs in 4 MB: an honest ratio, so no check of declared sizes stops
    # it; python-docx would parse all of it (1.3 GB and ten minutes, before).
    xml = zipfile.ZipFile(io.BytesIO(_small_docx())).read("word/document.xml")
    start = xml.index(b"<w:body>") + len(b"<w:body>")
    paragraphs = b"".join(
        f"<w:p><w:r><w:t>Пункт {i} проверки {i * 7919 % 100003}</w:t></w:r></w:p>".encode()
        for i in range(48 * 2**20 // 60)
    )
    big = _with_document_xml(xml[:start] + paragraphs + xml[start:], zipfile.ZIP_DEFLATED)
    assert len(big) < 8 * 2**20
    (tmp_path / "long.docx").write_bytes(big)
    summary, peak = _ingest(tmp_path / "long.docx")
    row = summary["documents"][0]
    assert row["status"] == "failed"
    assert "word/document.xml unpacks to" in row["error"] and "at most 32 MB a part" in row["error"]
    assert peak < 200, f"peak {peak} MB"


def test_a_pdf_with_more_pages_than_the_limit_is_refused_before_a_page_is_read(
    transactional_db, tmp_path
):
    pdf = pymupdf.open()
    for number in range(1, 1201):
        pdf.new_page().insert_text((72, 72), f"Page {number}: what the report must hold.")
    (tmp_path / "manual.pdf").write_bytes(pdf.tobytes())
    summary, _ = _ingest(tmp_path / "manual.pdf")
    row = summary["documents"][0]
    assert row["status"] == "failed"
    assert "The PDF has 1200 pages; at most 1000 are read" in row["error"]


@pytest.mark.worker
def test_an_ingest_that_runs_past_the_time_limit_is_stopped_with_a_plain_error(
    transactional_db, client, alice, monkeypatch
):
    monkeypatch.setenv("KB_INGEST_TIME_LIMIT_SECONDS", "10")  # for the worker started next
    worker = WorkerProcess("time-limit")
    try:
        # Sixty pages of a grid of words: about a second each to read (tables are looked for).
        pdf = pymupdf.open()
        for number in range(60):
            page = pdf.new_page()
            for row in range(40):
                words = "  ".join(f"c{row}{col} {number * row + col}" for col in range(8))
                page.insert_text((40, 40 + row * 18), words, fontsize=8)
        client.force_login(alice)
        upload = SimpleUploadedFile("grid.pdf", pdf.tobytes())
        client.post("/documents/upload/", {"files": [upload], "new_source": "Reports"})
        version = DocumentVersion.objects.get(document__path="grid.pdf")
        wait_for(
            lambda: DocumentVersion.objects.filter(pk=version.pk, status="failed").exists(),
            what="the ingest to be stopped",
            timeout=120,
        )
        version.refresh_from_db()
        assert "took longer than 10 s, so it was stopped" in version.error
        assert not Chunk.objects.filter(version=version).exists()
    finally:
        worker.stop()


def test_a_hard_link_to_a_file_outside_a_scanned_folder_is_not_read(
    transactional_db, tmp_path, settings
):
    secret = tmp_path / "var" / "secret_key"
    secret.parent.mkdir()
    secret.write_text("django-insecure-hardlinked-secret-key-value")
    drop = tmp_path / "private_knowledge"
    drop.mkdir()
    (drop / "notes.txt").write_text("Планёрка по понедельникам в десять.")
    os.link(secret, drop / "key.txt")
    (drop / "twice.txt").write_text("Один файл, два имени внутри папки.")
    os.link(drop / "twice.txt", drop / "twice-again.txt")
    settings.DROP_FOLDER = drop
    scan_drop_folder()  # the beat task, run here
    paths = set(Document.objects.values_list("path", flat=True))
    assert "notes.txt" in paths and "twice.txt" in paths and "twice-again.txt" in paths
    assert "key.txt" not in paths
    assert not DocumentVersion.objects.filter(filename="key.txt").exists()
    # The command line walks folders the same way.
    done = subprocess.run(
        [sys.executable, "manage.py", "ingest", str(drop), "--source", "Notes", "--json"],
        cwd=ROOT,
        env=subprocess_env(KB_DEMO="0"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    summary = json.loads(done.stdout[done.stdout.index("{") :])
    refused = [r for r in summary["documents"] if r["status"] == "refused"]
    assert [Path(r["file"]).name for r in refused] == ["key.txt"]
    assert "hard link to a file outside this folder" in refused[0]["error"]


@pytest.mark.parametrize("swap", ["symlink", "hard link", "folder link"])
def test_a_file_swapped_after_the_drop_folders_listing_is_not_read(
    db, tmp_path, settings, monkeypatch, swap
):
    """The race of a scan: the listing checks a file, then someone swaps it for a link to the
    portal's secret key (or its folder for a link to another), before it is read. The swap is
    made at that exact moment, between the listing and the read, by wrapping the listing."""
    from knowledge.ingest import dropfolder

    secret = tmp_path / "var" / "secret_key"
    secret.parent.mkdir()
    secret.write_text("django-insecure-swapped-in-secret-key-value")
    drop = tmp_path / "private_knowledge"
    (drop / "team").mkdir(parents=True)
    (drop / "team" / "notes.txt").write_text("Планёрка по понедельникам в десять.")
    settings.DROP_FOLDER = drop
    listing = dropfolder.iter_document_files

    def listed_then_swapped(root, **options):
        for path, relative, problem in listing(root, **options):
            if swap == "folder link":
                (drop / "team").rename(drop / "moved")
                (tmp_path / "var" / "notes.txt").write_text(secret.read_text())
                (drop / "team").symlink_to(tmp_path / "var", target_is_directory=True)
            else:
                path.unlink()
                path.symlink_to(secret) if swap == "symlink" else os.link(secret, path)
            yield path, relative, problem

    monkeypatch.setattr(dropfolder, "iter_document_files", listed_then_swapped)
    report = dropfolder.sync_drop_folder()
    stored = [v.file.read() for v in DocumentVersion.objects.all()]
    assert not any(b"secret-key-value" in data for data in stored)
    assert report.refused and "replaced" in report.refused[0][1]


# Parses one file in a process of its own and prints what it found: the parse runs in C calls a
# signal may not interrupt, so the bound is the child's timeout, not the suite's.
PARSE = (
    "import json, sys, django\n"
    "django.setup()\n"
    "from knowledge.parsing.registry import parse_document\n"
    "path = sys.argv[1]\n"
    "doc = parse_document(open(path, 'rb').read(), filename=path.rsplit('/', 1)[-1])\n"
    "print(json.dumps({'blocks': [b.text for b in doc.blocks], 'warnings': doc.warnings}))\n"
)


def _workbook_with_a_long_attribute(repeats: int) -> bytes:
    """A checklist whose first cell carries an attribute of ``repeats`` cell references (" r='B2'",
    every 32nd another one: the file must stay under the zip-bomb ratio), and a formula cell
    without a saved value."""
    import random

    import openpyxl

    pick = random.Random(40)
    references = "".join(
        f" r='{chr(65 + pick.randrange(26))}{pick.randrange(1, 999)}'" if i % 32 == 0 else " r='B2'"
        for i in range(repeats)
    )

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Check", "Result", "Total"])
    sheet.append(["Login", "Pass", "=1+1"])
    plain = io.BytesIO()
    book.save(plain)
    crafted = io.BytesIO()
    with (
        zipfile.ZipFile(plain) as source,
        zipfile.ZipFile(crafted, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                attribute = b'<c x="' + references.encode() + b'" r="A1"'
                data = data.replace(b'<c r="A1"', attribute, 1)
            target.writestr(item, data)
    return crafted.getvalue()


@pytest.mark.parametrize("kind", ["xlsx", "md"])
def test_files_that_backtracked_for_hours_are_parsed_within_seconds(db, tmp_path, kind):
    """Crafted files at a size where the old patterns would run for an hour or more (the
    XLSX's formula-cell pattern took 12 s on 280 KB of sheet XML, quadratic in it; a line of
    "{%" without "%}" took 448 s at 160 KB, quadratic in the line): parsed in a child with a
    time limit of its own."""
    if kind == "xlsx":
        data = _workbook_with_a_long_attribute(700_000)  # 4.9 MB of XML in 90 KB
    else:
        data = ("# Release notes\n\nShipped on Friday.\n\n" + "{%a " * 200_000).encode()
    path = tmp_path / f"crafted.{kind}"
    path.write_bytes(data)
    done = subprocess.run(
        [sys.executable, "-c", PARSE, str(path)],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=20,  # generous: the file is read in about a second on a quiet machine
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.splitlines()[-1])
    if kind == "xlsx":
        assert any("| Login | Pass |" in text for text in found["blocks"])
        assert any("(C2)" in warning for warning in found["warnings"]), found["warnings"]
    else:
        assert "Shipped on Friday." in found["blocks"]


def test_a_version_whose_runs_keep_dying_is_given_up_on(db, settings):
    """A run killed past the hard limit or out of memory leaves its version active; the stall
    recovery takes it up again, but the second run in a row that died ends it as failed, with
    the reason (issue 50: it was the third, and each run of a file that exhausts the host's
    memory is minutes of a worker taken and the OOM killer again)."""
    from datetime import timedelta

    from django.utils import timezone

    from knowledge.ingest.pipeline import ingest_version
    from knowledge.ingest.registration import register_file
    from knowledge.models import Source

    source = Source.objects.create(name="Reports")
    version = register_file(source, "notes.md", b"# Notes\n\nText.\n", enqueue=False).version
    stale = timezone.now() - timedelta(seconds=settings.INGEST_STALE_SECONDS + 5)
    DocumentVersion.objects.filter(pk=version.pk).update(status="parsing", heartbeat_at=stale)
    assert ingest_version(version.pk).status == "ready"  # one run died: taken over, and fine
    DocumentVersion.objects.filter(pk=version.pk).update(
        status="parsing", heartbeat_at=stale, timings={"runs_stopped": 1}
    )
    assert ingest_version(version.pk).status == "skipped"
    version.refresh_from_db()
    assert version.status == "failed" and "stopped 2 times without finishing" in version.error
