"""manage.py export_eval: rated answers as a JSON Lines regression set."""

from __future__ import annotations

import sys
from datetime import date

from django.core.management.base import BaseCommand, CommandError

from feedback.export import export_lines, ratings_for_export


class Command(BaseCommand):
    help = (
        "Write rated answers as a JSON Lines regression set (question, expected behaviour, "
        "expected answer, gold sources); see feedback.export for the rules."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--since", help="Ratings given on or after this date (YYYY-MM-DD).")
        parser.add_argument("--rating", choices=["down", "up", "all"], default="all")
        parser.add_argument("--output", help="File to write (default: standard output).")

    def handle(self, *args, since=None, rating="all", output=None, **options) -> None:
        try:
            day = date.fromisoformat(since) if since else None
        except ValueError as exc:
            raise CommandError(f"--since must be a date like 2025-01-31, not {since!r}") from exc
        rows = ratings_for_export(since=day, value=rating)
        count = 0
        stream = open(output, "w", encoding="utf-8") if output else sys.stdout  # noqa: SIM115
        try:
            for line in export_lines(rows.iterator(chunk_size=500)):
                stream.write(line)
                count += 1
        finally:
            if output:
                stream.close()
        self.stderr.write(f"{count} regression case{'s' if count != 1 else ''} written")
