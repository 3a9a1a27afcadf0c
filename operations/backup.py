"""Backups of the portal: a consistent dump of the database and the stored files, in one folder.

A backup folder holds::

    database.dump          pg_dump's custom format (-Fc) of the whole database
    files/blobs/ab/ab…     every file a document version refers to (knowledge.ingest.storage)
    manifest.json          what the backup is (database, server, models, counts) and the size
                           and sha256 of every file above; written last

The dump and the facts in the manifest come from one exported snapshot (``pg_dump --snapshot``),
so the counts are those of the dump even while the portal keeps working. Files are stored once
per content hash and written before the version row that names them commits, so copying them
after the snapshot finds every file the dump refers to (unless a version was removed meanwhile:
its file is listed as missing). Restoring is ``operations.restore``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import psycopg
from django.conf import settings
from django.core.exceptions import SuspiciousFileOperation
from django.core.files.storage import default_storage
from django.utils import timezone

from knowledge.models import Chunk, Document, DocumentVersion
from portal.pgtools import (
    PgTool,
    Target,
    failure,
    find_tool,
    server_version,
    stream_stderr,
    target_from_django,
)

MANIFEST = "manifest.json"
DUMP = "database.dump"
FILES = "files"
FORMAT = 1
_BLOCK = 1024 * 1024


class BackupError(RuntimeError):
    """A backup or restore cannot go on; the message says why in plain words."""


class Progress(Protocol):
    """Where a long step reports how far it is (the commands draw a progress bar)."""

    def stage(self, title: str, total: int | None = None, unit: str = "it") -> None: ...

    def advance(self, n: int = 1) -> None: ...


class Silent:
    """No progress shown (tests, other services)."""

    def stage(self, title: str, total: int | None = None, unit: str = "it") -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass


@dataclass
class Facts:
    """What the snapshot holds, read in the same transaction pg_dump dumps."""

    server_version: str
    server_major: int
    counts: dict[str, int]
    embedding_models: list[str]
    files: list[str]
    tables: int
    missing_files: list[str] = field(default_factory=list)


def create_backup(target: Path, progress: Progress | None = None) -> dict[str, Any]:
    """Back up the portal's database and stored files into ``target`` (new or empty).

    Returns the manifest, which is also written to ``target/manifest.json``. On any failure
    whatever was written is removed again, so a folder with a manifest is a complete backup.
    """
    progress = progress or Silent()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise BackupError(
            f"{target} already exists and is not an empty folder: "
            "back up into a new or empty folder, so no earlier backup is overwritten"
        )
    created = not target.exists()
    target.mkdir(parents=True, exist_ok=True)
    try:
        return _write_backup(target, progress)
    except BaseException:
        if created:
            shutil.rmtree(target, ignore_errors=True)
        else:
            for child in target.iterdir():
                if child.is_dir():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        raise


def _write_backup(target: Path, progress: Progress) -> dict[str, Any]:
    db = target_from_django()
    with db.connect(autocommit=False) as conn:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.read_only = True
        snapshot = conn.execute("SELECT pg_export_snapshot()").fetchone()[0]
        facts = _read_facts(conn, db.dbname)
        tool = find_tool("pg_dump", server_major=facts.server_major)
        # The exporting transaction stays open until pg_dump is done: that is what keeps the
        # snapshot importable.
        _dump(tool, db, snapshot, target / DUMP, facts.tables, progress)
    entries = [_entry(target, target / DUMP)]
    entries += _copy_files(facts, target / FILES, progress)
    manifest = {
        "format": FORMAT,
        "created_at": timezone.now().isoformat(timespec="seconds"),
        "portal_commit": _git_commit(),
        "database": {
            "name": db.dbname,
            "server_version": facts.server_version,
            "pg_dump_version": tool.version,
            "dump": DUMP,
        },
        "embedding_models": facts.embedding_models,
        "counts": {**facts.counts, "files": len(entries) - 1},
        "missing_files": facts.missing_files,
        "files": entries,
    }
    tmp = target / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    tmp.replace(target / MANIFEST)
    return manifest


def _read_facts(conn: psycopg.Connection, dbname: str) -> Facts:
    version, major = server_version(conn)
    documents, versions, chunks = (m._meta.db_table for m in (Document, DocumentVersion, Chunk))
    if conn.execute("SELECT to_regclass(%s)", [documents]).fetchone()[0] is None:
        raise BackupError(
            f"the database {dbname} holds no portal tables (it was never migrated): "
            "nothing to back up"
        )
    counts = {
        name: conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
        for name, table in (("documents", documents), ("versions", versions), ("chunks", chunks))
    }
    models = conn.execute(
        f"SELECT embedding_model FROM \"{chunks}\" WHERE embedding_model <> '' "
        f"UNION SELECT embedding_model FROM \"{versions}\" WHERE embedding_model <> '' ORDER BY 1"
    ).fetchall()
    files = conn.execute(
        f"SELECT DISTINCT file FROM \"{versions}\" WHERE file <> '' ORDER BY 1"
    ).fetchall()
    tables = conn.execute(
        "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
        "AND n.nspname NOT LIKE 'pg_toast%%'"
    ).fetchone()[0]
    return Facts(version, major, counts, [m for (m,) in models], [f for (f,) in files], int(tables))


def _dump(
    tool: PgTool, db: Target, snapshot: str, path: Path, tables: int, progress: Progress
) -> None:
    progress.stage("Dumping the database", total=tables, unit="table")
    args = [str(tool.path), "--format=custom", "--verbose", f"--snapshot={snapshot}"]
    args += ["--file", str(path), "--dbname", db.conninfo]
    process = subprocess.Popen(
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=db.env(),
    )
    lines = stream_stderr(
        process, lambda line: progress.advance() if "dumping contents of table" in line else None
    )
    if process.wait() != 0:
        raise BackupError(failure("pg_dump", process.returncode, lines))


def _copy_files(facts: Facts, folder: Path, progress: Progress) -> list[dict[str, Any]]:
    progress.stage("Copying the stored files", total=len(facts.files), unit="file")
    entries = []
    for name in facts.files:
        source = stored_path(name)
        if not source.is_file():
            facts.missing_files.append(name)
            progress.advance()
            continue
        destination = folder / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        digest, size = copy_with_digest(source, destination)
        entries.append({"path": f"{FILES}/{name}", "size": size, "sha256": digest})
        progress.advance()
    return entries


def stored_path(name: str) -> Path:
    """Where the storage keeps a version's file (a name like ``blobs/ab/ab…``)."""
    try:
        return Path(default_storage.path(name))
    except SuspiciousFileOperation:
        raise BackupError(
            f"a version's file name leads out of the storage folder: {name}"
        ) from None


def _entry(root: Path, path: Path) -> dict[str, Any]:
    return {
        "path": path.relative_to(root).as_posix(),
        "size": path.stat().st_size,
        "sha256": sha256_file(path),
    }


def sha256_file(path: Path, progress: Progress | None = None) -> str:
    """The file's sha256 (hex); ``progress`` advances by the bytes read."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
            if progress:
                progress.advance(len(block))
    return digest.hexdigest()


def copy_with_digest(source: Path, destination: Path) -> tuple[str, int]:
    """Copy a file (through a temporary name, then renamed) and return its sha256 and size."""
    digest = hashlib.sha256()
    size = 0
    tmp = destination.with_name(destination.name + ".part")
    with open(source, "rb") as reader, open(tmp, "wb") as writer:
        while block := reader.read(_BLOCK):
            digest.update(block)
            writer.write(block)
            size += len(block)
        writer.flush()
        os.fsync(writer.fileno())
    tmp.replace(destination)
    return digest.hexdigest(), size


def _git_commit() -> str | None:
    try:
        result = subprocess.run(
            ["git", "-C", str(settings.BASE_DIR), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except OSError:
        return None
    if result.returncode != 0:
        return None  # not a git checkout (an installed package, an exported tree)
    return result.stdout.strip() or None
