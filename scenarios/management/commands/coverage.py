"""``manage.py coverage DOC --against DOC [--json] [--user NAME]``: the coverage map of a
requirements document by a test programme (``scenarios.coverage``), documents named by title.

Without ``--user`` it reads every source (the command line runs as staff, as ``search`` does).
Progress goes to stderr (one line per requirement when stderr is a terminal is too noisy, so a
line every ten), the table or the JSON to stdout.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from knowledge.models import Document
from portal.accounts import reader_for_command
from scenarios.coverage import CoverageError, CoverageMap, build_coverage
from scenarios.documents import DocumentLookupError, find_document


class Command(BaseCommand):
    help = "Which test sections of a test programme check each requirement of a document."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("document", help="the requirements document's title")
        parser.add_argument("--against", required=True, help="the test document's title")
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        parser.add_argument("--user", default="", help="read only what this user may read")

    def handle(self, *args: Any, **options: Any) -> None:
        user = reader_for_command(options["user"])
        requirements = self._find(options["document"], user)
        tests = self._find(options["against"], user)
        try:
            result = build_coverage(requirements, tests, user=user, progress=self._progress)
        except CoverageError as exc:
            raise CommandError(str(exc)) from None
        if options["json"]:
            self.stdout.write(json.dumps(result.as_dict(), ensure_ascii=False, indent=2))
        else:
            self._print(result)

    def _find(self, title: str, user) -> Document:
        try:
            return find_document(title, user)
        except DocumentLookupError as exc:
            raise CommandError(str(exc)) from None

    def _progress(self, done: int, total: int, requirement: str) -> None:
        if done == total or done % 10 == 0:
            self.stderr.write(
                _("checked %(done)d of %(total)d requirements") % {"done": done, "total": total}
            )

    def _print(self, result: CoverageMap) -> None:
        req, tests = result.requirements, result.tests
        self.stdout.write(
            f"{req['title']} ({req['version']}) -> {tests['title']} ({tests['version']})"
        )
        for row in result.rows:
            data = row.as_dict()
            covering = ", ".join(
                f"{c['section']} {c['title']} [{'+'.join(c['reasons'])}]"
                for c in data["covered_by"]
            )
            status = {"covered": "+", "uncovered": "-", "not_required": "n/a"}[data["status"]]
            text = data["text"] if len(data["text"]) < 90 else data["text"][:87] + "..."
            self.stdout.write(f"{status:>3} {data['id']:<9} {text}")
            if covering:
                self.stdout.write(f"{'':13}<- {covering}")
        summary = result.summary
        self.stdout.write(
            _(
                "%(requirements)d requirements: %(covered)d covered, %(uncovered)d uncovered, "
                "%(not_required)d without a requirement stated"
            )
            % summary
        )
