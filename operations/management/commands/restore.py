"""``manage.py restore PATH [--force]``: a backup folder back into the configured database and
storage folder, then ``migrate`` (``operations.restore``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from operations.backup import BackupError
from operations.management.commands._progress import BarProgress
from operations.restore import restore_backup
from portal.pgtools import PgToolError


class Command(BaseCommand):
    help = "Restore a backup folder (checksums verified first), then migrate."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("path", type=Path, help="a folder written by manage.py backup")
        parser.add_argument(
            "--force",
            action="store_true",
            help="replace the portal data the database already holds",
        )
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        folder: Path = options["path"].expanduser().resolve()
        progress = BarProgress(disable=options["quiet"])
        try:
            report = restore_backup(
                folder, force=options["force"], progress=progress, say=self._say
            )
        except (BackupError, PgToolError) as exc:
            raise CommandError(str(exc)) from None
        finally:
            progress.close()
        counts, manifest = report.counts, report.manifest
        migrated = (
            f"{report.migrations_applied} migrations applied"
            if report.migrations_applied
            else "schema already current"
        )
        self.stdout.write(
            f"Restored the backup of {manifest['created_at']} from {folder}: "
            f"{counts['documents']} documents, {counts['versions']} versions, "
            f"{counts['chunks']} chunks, {report.files} files; {migrated}."
        )

    def _say(self, text: str) -> None:
        self.stdout.write(self.style.WARNING(text))
