"""``manage.py analyse "DESCRIPTION" [--json] [--user NAME] [--component DOC:SECTION]``: the
guided test analysis's mind map of a described change, without the questions (the same builder
as the page: ``scenarios.analysis.analyse``).

Without ``--user`` it reads every source (the command line runs as staff, as ``search`` does).
The map prints as an indented outline; ``--json`` prints the tree (each node: ``label``,
``kind``, ``url``, ``note``, ``source`` for a node standing for a section, ``children``; the
root's ``gap`` says whether any requirement describes the change and which nothing tests).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from portal.accounts import reader_for_command
from scenarios.analysis import AnalysisInputError, analyse
from scenarios.exports import walk


class Command(BaseCommand):
    help = "The test-analysis mind map of a described change (requirements, tests, checks)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("description", help="the change, as a tracker task describes it")
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        parser.add_argument("--user", default="", help="read only what this user may read")
        parser.add_argument(
            "--component", default="", help="the changed part: DOCUMENT_ID:SECTION (a tile's value)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        user = reader_for_command(options["user"])
        try:
            tree = analyse(options["description"], user, component=options["component"])
        except AnalysisInputError as exc:
            raise CommandError(str(exc)) from None
        if options["json"]:
            self.stdout.write(json.dumps(tree, ensure_ascii=False, indent=2))
            return
        for depth, node in walk(tree):
            label = f"{node['prefix']} {node['label']}" if node.get("prefix") else node["label"]
            note = f"  ({node['note']})" if node.get("note") and depth > 0 else ""
            self.stdout.write(f"{'  ' * depth}{'- ' if depth else ''}{label}{note}")
