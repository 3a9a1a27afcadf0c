"""Backup and restore (`manage.py backup PATH`, `manage.py restore PATH [--force]`).

The acceptance runs the commands as a user does, in their own processes on their own embedded
PostgreSQL and Redis in a temporary data folder: ingest, search, back up, wipe the data folder,
restore into it, search again. The refusals run in-process on the session's test database.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from knowledge.models import Chunk, Document, DocumentVersion
from operations.backup import sha256_file
from portal.embedded import EmbeddedLayout, stop_all
from portal.pgtools import target_from_django
from tests.conftest import ARTIFACTS, CORPUS, ROOT, free_port, ingest_folder

WIKI = CORPUS / "wiki_qa_bible_ru" / "obshee"
PAGES = [
    "principy-testirovaniya.md",
    "defekty-i-oshibki.md",
    "qa-qc-testing.md",
    "verifikaciya-i-validaciya-verification-and-validation.md",
    "sereznost-i-prioritet-defekta-severity-and-priority.md",
]
SPEC = CORPUS / "specs_hse_app_ru" / "ТЗ-Шакруа-Максим-БПИ182.docx"
QUESTIONS = [
    "Какие существуют принципы тестирования?",
    "Что такое парадокс пестицида?",
    "Чем ошибка отличается от дефекта?",
    "В чем разница между QA и QC?",
    "Чем верификация отличается от валидации?",
    "Серьезность и приоритет дефекта",
    "Требования к надежности программы",
    "Наименование программы",
    "Требования к программной документации",
    "Какие технические средства нужны для работы приложения?",
]

embedded_only = pytest.mark.skipif(
    bool(os.environ.get("DATABASE_URL")), reason="runs the commands on their own embedded services"
)


def _pages(folder: Path, names: list[str]) -> Path:
    folder.mkdir(parents=True)
    for name in names:
        shutil.copy(WIKI / name, folder / name)
    return folder


class Portal:
    """`manage.py` commands run as processes on a data folder of their own (no DATABASE_URL)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.log_path = ARTIFACTS / "logs" / f"backup-{data_dir.name}.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path.write_text("")
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("KB_", "DJANGO_ALLOW")) and k not in ("DATABASE_URL", "REDIS_URL")
        }
        self.env.update(
            KB_DATA_DIR=str(data_dir),
            KB_REDIS_PORT=str(free_port()),
            KB_DEMO="0",
            KB_EMBEDDED_FAST_UNSAFE="1",
        )

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        with open(self.log_path, "a") as log:
            log.write(f"$ manage.py {' '.join(args)}  -> {result.returncode}\n{result.stderr}\n")
        assert result.returncode == 0, f"{args}:\n{result.stdout}\n{result.stderr[-3000:]}"
        return result

    def stop(self) -> None:
        """Stop servers a killed command may have left behind (each command stops its own)."""
        layout = EmbeddedLayout(self.data_dir, int(self.env["KB_REDIS_PORT"]))
        if self.data_dir.exists():
            stop_all(layout)

    def search(self, questions: list[str]) -> list[dict]:
        """`manage.py search QUESTION --json` for each question, two processes at a time."""
        with ThreadPoolExecutor(max_workers=2) as pool:
            outputs = pool.map(lambda q: self.run("search", q, "--json").stdout, questions)
            return [json.loads(output) for output in outputs]

    def stored_files(self) -> dict[str, str]:
        root = self.data_dir / "files"
        return {
            p.relative_to(root).as_posix(): sha256_file(p) for p in root.rglob("*") if p.is_file()
        }


@pytest.fixture
def portals() -> Iterator[Callable[[str], Portal]]:
    """Data folders outside pytest's tmp_path: a pytest session starting meanwhile makes
    /tmp/pytest-of-<user> private again, and the embedded PostgreSQL runs as another user."""
    root = Path(tempfile.mkdtemp(prefix="kb-backup-test-"))
    started: list[Portal] = []

    def make(name: str) -> Portal:
        started.append(Portal(root / name))
        return started[-1]

    yield make
    for portal in started:
        portal.stop()
    shutil.rmtree(root, ignore_errors=True)


@embedded_only
def test_backup_wipe_restore_gives_the_same_search_results(tmp_path, portals):
    portal = portals("data")
    portal.run("migrate", "-v0")
    portal.run("ingest", str(_pages(tmp_path / "wiki", PAGES)), "--source", "Wiki")
    portal.run("ingest", str(SPEC), "--source", "Specs")
    before = portal.search(QUESTIONS)
    assert sum(1 for result in before if result["results"]) >= 8
    files_before = portal.stored_files()

    backup = tmp_path / "backup"
    output = portal.run("backup", str(backup)).stdout
    assert "6 documents, 6 versions" in output
    manifest = json.loads((backup / "manifest.json").read_text())
    assert manifest["counts"]["documents"] == 6 and manifest["counts"]["versions"] == 6
    assert manifest["counts"]["chunks"] > 6 and manifest["counts"]["files"] == 6
    assert manifest["embedding_models"] == ["use-multilingual-v3"]
    assert manifest["database"]["name"] == "knowledge_belt"
    assert re.fullmatch(r"\d+\.\d+", manifest["database"]["server_version"])
    assert manifest["portal_commit"] is None or re.fullmatch(
        r"[0-9a-f]{40}", manifest["portal_commit"]
    )
    assert {e["path"] for e in manifest["files"]} == {"database.dump"} | {
        f"files/{name}" for name in files_before
    }
    for entry in manifest["files"]:
        assert sha256_file(backup / entry["path"]) == entry["sha256"]
        assert (backup / entry["path"]).stat().st_size == entry["size"]

    shutil.rmtree(portal.data_dir)  # every process has exited: the servers are stopped
    output = portal.run("restore", str(backup)).stdout
    assert "6 documents, 6 versions" in output and "6 files" in output

    assert portal.search(QUESTIONS) == before
    assert portal.stored_files() == files_before


@embedded_only
def test_an_older_backup_is_migrated_to_the_current_schema(tmp_path, portals):
    old = portals("old")
    old.run("migrate", "-v0")
    old.run("migrate", "knowledge", "0007", "-v0")  # the schema before document terms
    old.run("backup", str(tmp_path / "backup"))

    fresh = portals("fresh")
    output = fresh.run("restore", str(tmp_path / "backup")).stdout
    assert re.search(r"\d+ migrations applied", output)
    assert "[ ]" not in fresh.run("showmigrations").stdout


# --- refusals, in-process on the test database ----------------------------------------------------


def _counts() -> tuple[int, int, int]:
    return Document.objects.count(), DocumentVersion.objects.count(), Chunk.objects.count()


def _stored(media_root: Path) -> dict[str, str]:
    return {str(p): sha256_file(p) for p in (media_root / "blobs").rglob("*") if p.is_file()}


def _close_other_sessions() -> None:
    """A restore refuses while other sessions use the database (a running portal). In the whole
    suite, threads of earlier tests in this process can still hold a connection to the test
    database: they are closed here, so these tests see only their own session."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND backend_type = 'client backend' "
            "AND pid <> pg_backend_pid()"
        )


@pytest.fixture
def backed_up(transactional_db, tmp_path):
    """Two pages ingested and backed up; then a third page, which a restore would remove."""
    ingest_folder(_pages(tmp_path / "wiki", PAGES[:2]), "Wiki")
    call_command("backup", str(tmp_path / "backup"), quiet=True, stdout=io.StringIO())
    ingest_folder(_pages(tmp_path / "more", PAGES[2:3]), "More")
    _close_other_sessions()
    return tmp_path / "backup"


def test_backup_refuses_a_folder_that_is_not_empty(tmp_path):
    target = tmp_path / "earlier"
    target.mkdir()
    (target / "manifest.json").write_text("{}")
    with pytest.raises(CommandError, match="already exists and is not an empty folder"):
        call_command("backup", str(target), quiet=True)
    assert [p.name for p in target.iterdir()] == ["manifest.json"]
    assert (target / "manifest.json").read_text() == "{}"


def test_a_corrupted_backup_file_is_named_and_nothing_is_restored(backed_up, settings):
    manifest = json.loads((backed_up / "manifest.json").read_text())
    blob = next(e["path"] for e in manifest["files"] if e["path"].startswith("files/"))
    data = bytearray((backed_up / blob).read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit, same size
    (backed_up / blob).write_bytes(bytes(data))
    counts, stored = _counts(), _stored(Path(settings.MEDIA_ROOT))

    with pytest.raises(CommandError, match=rf"{re.escape(blob)}: checksum mismatch"):
        call_command("restore", str(backed_up), force=True, quiet=True)

    assert _counts() == counts and Document.objects.filter(source__name="More").exists()
    assert _stored(Path(settings.MEDIA_ROOT)) == stored


def test_a_damaged_dump_is_named_too(backed_up):
    with open(backed_up / "database.dump", "r+b") as handle:
        handle.seek(100)
        byte = handle.read(1)
        handle.seek(100)
        handle.write(bytes([byte[0] ^ 0xFF]))
    counts = _counts()
    with pytest.raises(CommandError, match="database.dump: checksum mismatch"):
        call_command("restore", str(backed_up), force=True, quiet=True)
    assert _counts() == counts


def test_restore_refuses_portal_data_unless_forced_then_replaces_it(backed_up):
    with pytest.raises(CommandError, match=r"already holds portal data \(2 sources, 3 documents"):
        call_command("restore", str(backed_up), quiet=True)
    assert Document.objects.filter(source__name="More").exists()

    out = io.StringIO()
    call_command("restore", str(backed_up), force=True, quiet=True, stdout=out)

    assert "Replacing the portal data in" in out.getvalue()
    assert "2 sources, 3 documents, 3 versions" in out.getvalue()
    assert not Document.objects.filter(source__name="More").exists()
    assert Document.objects.count() == 2


def test_restore_refuses_while_another_session_uses_the_database(backed_up):
    with target_from_django().connect(), pytest.raises(CommandError, match="other session"):
        call_command("restore", str(backed_up), force=True, quiet=True)
    assert Document.objects.filter(source__name="More").exists()


def test_restore_of_a_folder_without_manifest_says_so(tmp_path):
    (tmp_path / "database.dump").write_bytes(b"PGDMP")
    with pytest.raises(CommandError, match="has no manifest.json: not a backup folder"):
        call_command("restore", str(tmp_path), quiet=True)
