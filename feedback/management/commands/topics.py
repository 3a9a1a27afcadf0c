"""``manage.py topics [--recluster] [--json]``: tag the dialog turns stored without topics."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand
from django.utils.translation import gettext as _

from feedback.tagging import recluster_gaps, tag_untagged


class Command(BaseCommand):
    help = (
        "Give topics to the journal's turns that have none (those stored before topics "
        "existed) and group the refused questions into clusters; --recluster groups every "
        "refused question again."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--recluster",
            action="store_true",
            help="group every refused question again (the content gaps' clustering)",
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        counts = tag_untagged(recluster=options["recluster"])
        if options["recluster"] and "clusters" not in counts:
            counts["clusters"] = recluster_gaps()
        if options["json"]:
            self.stdout.write(json.dumps(counts, ensure_ascii=False))
            return
        tagged = sum(v for k, v in counts.items() if k != "clusters")
        if tagged:
            kinds = ", ".join(f"{k} {n}" for k, n in sorted(counts.items()) if k != "clusters")
            self.stdout.write(_("%(n)d turns tagged: %(kinds)s") % {"n": tagged, "kinds": kinds})
        else:
            self.stdout.write(_("No turn without topics."))
        if "clusters" in counts:
            self.stdout.write(_("Refused questions in %(n)d clusters.") % {"n": counts["clusters"]})
