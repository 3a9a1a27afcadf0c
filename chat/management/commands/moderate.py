"""``manage.py moderate "QUESTION" [--json]``: which moderation rule, if any, refuses a question.

For staff editing the rules in the admin: try a question (or one a line from a file with
``--file``) without asking it; nothing is stored, searched or journaled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from chat.moderation.rules import check, reply


class Command(BaseCommand):
    help = "Show which moderation rule refuses a question (nothing is asked or stored)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("question", nargs="?", default="")
        parser.add_argument("--file", default="", help="a text file, one question a line")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        questions = [options["question"]] if options["question"] else []
        if options["file"]:
            try:
                text = Path(options["file"]).read_text(encoding="utf-8")
            except OSError as exc:
                raise CommandError(
                    _("cannot read %(file)s: %(error)s") % {"file": options["file"], "error": exc}
                ) from None
            questions += [line.strip() for line in text.splitlines() if line.strip()]
        if not questions:
            raise CommandError(_("give a question or --file"))
        results = []
        for question in questions:
            verdict = check(question)
            results.append(
                {
                    "question": question,
                    "refused": verdict is not None,
                    "moderation": verdict.as_dict() if verdict else None,
                    "answer": reply(verdict, question) if verdict else None,
                }
            )
        if options["json"]:
            self.stdout.write(json.dumps(results, ensure_ascii=False, indent=2))
            return
        for row in results:
            verdict = row["moderation"]
            if verdict:
                self.stdout.write(
                    _(
                        "REFUSED  %(question)s\n         rule «%(rule)s» (%(kind)s, %(by)s): «%(matched)s»"
                    )
                    % {"question": row["question"], **verdict}
                )
            else:
                self.stdout.write(_("allowed  %(question)s") % {"question": row["question"]})
