"""Restoring a backup folder written by ``operations.backup``.

Order, so that a bad backup changes nothing and a good one leaves a working portal:
every file's checksum is verified first; the database is checked for portal data (replaced only
with ``force``) and for other sessions (a running portal or worker); the dump is restored in one
transaction, so a failing restore leaves the database as it was; the stored files are copied
back; and ``migrate`` brings an older backup up to the current schema.

The restore empties the portal's tables (and drops its own SQL routines) itself instead of
``pg_restore --clean``: ``--clean`` drops only what the dump holds, and a table added by a newer
migration would survive and make ``migrate`` fail on it. Extensions stay (pgvector may need a superuser to create on an external
server), and the extension's comment is skipped for the same reason.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connections
from django.db.migrations.recorder import MigrationRecorder

from knowledge.models import Chunk, Document, DocumentVersion, Source
from operations.backup import (
    DUMP,
    FILES,
    MANIFEST,
    BackupError,
    Progress,
    Silent,
    copy_with_digest,
    sha256_file,
    stored_path,
)
from portal.pgtools import (
    Target,
    failure,
    find_tool,
    server_version,
    stream_stderr,
    target_from_django,
)

# Empties the portal's schema inside the restore's transaction (see the module docstring).
RESET_SQL = """
SET lock_timeout = '30s';
DO $reset$
DECLARE item record;
BEGIN
  FOR item IN
    SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
      -- not an extension's, and not a sequence its table's column owns (dropped with it)
      AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                      AND d.objid = c.oid AND d.deptype IN ('e', 'a', 'i'))
  LOOP
    EXECUTE format('DROP %s IF EXISTS public.%I CASCADE',
      CASE item.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
        WHEN 'S' THEN 'SEQUENCE' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
      item.relname);
  END LOOP;
  -- The portal's own SQL routines (the aggregate kb_tsvector_agg), not an extension's.
  FOR item IN
    SELECT p.oid::regprocedure::text AS signature, p.prokind FROM pg_proc p
    JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = 'public'
      AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
                      AND d.objid = p.oid AND d.deptype = 'e')
  LOOP
    EXECUTE format('DROP %s IF EXISTS %s CASCADE',
      CASE item.prokind WHEN 'a' THEN 'AGGREGATE' WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END,
      item.signature);
  END LOOP;
END
$reset$;
"""


def _portal_tables() -> dict[str, str]:
    """What counts as portal data in a database (table: what a message calls its rows)."""
    return {
        Source._meta.db_table: "sources",
        Document._meta.db_table: "documents",
        DocumentVersion._meta.db_table: "versions",
        get_user_model()._meta.db_table: "user accounts",
    }


@dataclass
class RestoreReport:
    manifest: dict[str, Any]
    replaced: dict[str, int]  # what the database held before (empty: nothing)
    counts: dict[str, int]
    files: int
    migrations_applied: int


def read_manifest(folder: Path) -> dict[str, Any]:
    """The backup's manifest, or a plain-words error when the folder is not a backup."""
    path = folder / MANIFEST
    if not folder.is_dir():
        raise BackupError(f"{folder} is not a folder")
    if not path.is_file():
        raise BackupError(
            f"{folder} has no {MANIFEST}: not a backup folder, or an unfinished backup"
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        entries = {entry["path"]: entry for entry in manifest["files"]}
    except (ValueError, KeyError, TypeError) as exc:
        raise BackupError(f"{path} is damaged ({exc.__class__.__name__}: {exc})") from None
    if manifest.get("database", {}).get("dump", DUMP) not in entries:
        raise BackupError(f"{path} lists no database dump")
    return manifest


def verify_backup(folder: Path, progress: Progress | None = None) -> dict[str, Any]:
    """Check the size and sha256 of every file the manifest lists; returns the manifest.

    Raises ``BackupError`` naming the first file that is missing or differs.
    """
    progress = progress or Silent()
    manifest = read_manifest(folder)
    entries = manifest["files"]
    progress.stage("Verifying the backup", total=sum(e["size"] for e in entries), unit="B")
    for entry in entries:
        path = _inside(folder, entry["path"])
        if not path.is_file():
            raise BackupError(f"{entry['path']} is missing from the backup; nothing was restored")
        if path.stat().st_size != entry["size"] or sha256_file(path, progress) != entry["sha256"]:
            raise BackupError(
                f"{entry['path']}: checksum mismatch (the file is damaged or was changed after "
                "the backup); nothing was restored"
            )
    return manifest


def portal_data(conn: psycopg.Connection) -> dict[str, int]:
    """Rows of portal data the database holds, by what they are (only those with rows)."""
    held = {}
    for table, what in _portal_tables().items():
        if conn.execute("SELECT to_regclass(%s)", [f"public.{table}"]).fetchone()[0] is None:
            continue
        count = conn.execute(f'SELECT count(*) FROM public."{table}"').fetchone()[0]
        if count:
            held[what] = count
    return held


def describe(counts: dict[str, int]) -> str:
    """``{"sources": 1, "documents": 3}`` -> "1 source, 3 documents"."""
    parts = [f"{n} {what if n != 1 else what.removesuffix('s')}" for what, n in counts.items()]
    return ", ".join(parts) or "nothing"


def restore_backup(
    folder: Path,
    *,
    force: bool = False,
    progress: Progress | None = None,
    say: Callable[[str], None] | None = None,
) -> RestoreReport:
    """Restore the backup in ``folder`` into the configured database and storage folder.

    Verifies every checksum first, refuses a database holding portal data unless ``force``
    (``say`` then tells what is replaced), restores the dump in one transaction, copies the
    stored files back and migrates. Works into an empty data folder: the embedded servers and
    the database are created on the first connection.
    """
    progress = progress or Silent()
    manifest = verify_backup(folder, progress)
    db = target_from_django()
    with db.connect(autocommit=True) as conn:
        _, major = server_version(conn)
        others = _other_sessions(conn)
        held = portal_data(conn)
    if others:
        raise BackupError(
            f"{others} other session(s) are connected to the database {db.dbname}: stop the "
            "portal (web server and workers) before restoring"
        )
    if held and not force:
        raise BackupError(
            f"the database {db.dbname} already holds portal data ({describe(held)}); restoring "
            "replaces all of it: run again with --force to do so"
        )
    if held and say:
        say(f"Replacing the portal data in {db.dbname}: {describe(held)}.")
    _restore_database(folder / manifest["database"]["dump"], db, major, manifest, progress)
    connections.close_all()  # the schema under Django's connection has been replaced
    with db.connect(autocommit=True) as conn:
        counts = _counts(conn)
    expected = {k: manifest["counts"][k] for k in counts}
    if counts != expected:
        raise BackupError(f"the restored database holds {counts}, the backup said {expected}")
    files = _copy_back(folder, manifest, progress)
    return RestoreReport(manifest, held, counts, files, _migrate(progress))


def _restore_database(
    dump: Path, db: Target, server_major: int, manifest: dict[str, Any], progress: Progress
) -> None:
    written_by = int(str(manifest["database"].get("pg_dump_version", "0")).split(".")[0])
    tool = find_tool("pg_restore", server_major=server_major, at_least=written_by, needs="psql")
    listing = _run([str(tool.path), "--list", str(dump)], "pg_restore").splitlines()
    items = [line for line in listing if line.strip() and not line.startswith(";")]
    # The extension's comment needs the extension's owner; the extension itself is kept.
    keep = [line for line in items if not re.search(r"\bCOMMENT - EXTENSION\b", line)]
    progress.stage("Restoring the database", total=len(keep), unit="item")
    with (
        tempfile.NamedTemporaryFile("w", suffix=".list") as chosen,
        tempfile.TemporaryFile("w+") as psql_errors,
    ):
        chosen.write("\n".join(keep) + "\n")
        chosen.flush()
        restore = subprocess.Popen(
            [str(tool.path), "--no-owner", "--no-privileges", "--verbose"]
            + ["--use-list", chosen.name, "--file", "-", str(dump)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=db.env(),
        )
        # One transaction: the reset and the whole dump commit together or not at all.
        psql = subprocess.Popen(
            [str(tool.sibling("psql")), "-X", "-q", "-v", "ON_ERROR_STOP=1"]
            + ["--single-transaction", "-c", RESET_SQL, "-f", "-", "-d", db.conninfo],
            stdin=restore.stdout,
            stdout=subprocess.DEVNULL,
            stderr=psql_errors,
            env=db.env(),
        )
        assert restore.stdout is not None
        restore.stdout.close()  # psql holds the pipe now; pg_restore sees it close if psql stops
        lines = stream_stderr(restore, lambda line: progress.advance() if _is_item(line) else None)
        restore.wait()
        psql.wait()
        psql_errors.seek(0)
        if psql.returncode != 0:
            raise BackupError(
                failure("psql (restoring the dump)", psql.returncode, psql_errors.readlines())
                + "\nThe restore ran in one transaction: the database is as it was."
            )
        if restore.returncode != 0:
            raise BackupError(failure("pg_restore", restore.returncode, lines))


def _is_item(line: str) -> bool:
    return bool(re.match(r"pg_restore: (creating|processing data|executing)", line))


def _run(args: list[str], program: str) -> str:
    result = subprocess.run(args, capture_output=True, text=True, timeout=600, check=False)
    if result.returncode != 0:
        raise BackupError(failure(program, result.returncode, result.stderr.splitlines()))
    return result.stdout


def _other_sessions(conn: psycopg.Connection) -> int:
    ours = [c.connection.info.backend_pid for c in connections.all() if c.connection is not None]
    return conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND pid <> ALL(%s)",
        [ours],
    ).fetchone()[0]


def _counts(conn: psycopg.Connection) -> dict[str, int]:
    tables = {
        "documents": Document._meta.db_table,
        "versions": DocumentVersion._meta.db_table,
        "chunks": Chunk._meta.db_table,
    }
    return {
        what: conn.execute(f'SELECT count(*) FROM public."{table}"').fetchone()[0]
        for what, table in tables.items()
    }


def _copy_back(folder: Path, manifest: dict[str, Any], progress: Progress) -> int:
    stored = [e for e in manifest["files"] if e["path"].startswith(FILES + "/")]
    progress.stage("Copying the stored files back", total=len(stored), unit="file")
    for entry in stored:
        destination = stored_path(entry["path"].removeprefix(FILES + "/"))
        destination.parent.mkdir(parents=True, exist_ok=True)
        copy_with_digest(_inside(folder, entry["path"]), destination)
        progress.advance()
    return len(stored)


def _migrate(progress: Progress) -> int:
    progress.stage("Migrating to the current schema")
    recorder = MigrationRecorder(connections["default"])
    before = len(recorder.applied_migrations())
    call_command("migrate", interactive=False, verbosity=0)
    return len(recorder.applied_migrations()) - before


def _inside(folder: Path, relative: str) -> Path:
    path = (folder / relative).resolve()
    if not path.is_relative_to(folder.resolve()) or Path(relative).is_absolute():
        raise BackupError(f"{MANIFEST} names a file outside the backup folder: {relative}")
    return path
