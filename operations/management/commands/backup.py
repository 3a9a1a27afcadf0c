"""``manage.py backup PATH``: the database (pg_dump -Fc) and the stored files into an empty
folder, with a manifest of checksums (``operations.backup``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from operations.backup import BackupError, create_backup
from operations.management.commands._progress import BarProgress
from portal.pgtools import PgToolError


class Command(BaseCommand):
    help = "Back up the database and the stored files into PATH (a new or empty folder)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("path", type=Path, help="a new or empty folder")
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        target: Path = options["path"].expanduser().resolve()
        progress = BarProgress(disable=options["quiet"])
        try:
            manifest = create_backup(target, progress)
        except (BackupError, PgToolError) as exc:
            raise CommandError(str(exc)) from None
        finally:
            progress.close()
        counts, database = manifest["counts"], manifest["database"]
        size = sum(entry["size"] for entry in manifest["files"])
        self.stdout.write(
            f"Backed up {database['name']} (PostgreSQL {database['server_version']}) to {target}: "
            f"{counts['documents']} documents, {counts['versions']} versions, "
            f"{counts['chunks']} chunks, {counts['files']} files, {size / 1e6:.1f} MB; "
            f"embedding model {', '.join(manifest['embedding_models']) or 'none'}."
        )
        for name in manifest["missing_files"]:
            self.stdout.write(
                self.style.WARNING(f"  {name}: missing from the storage folder, not backed up")
            )
