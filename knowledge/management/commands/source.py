"""``manage.py source add|sync|list``: sources that sync themselves (a git wiki, a folder,
an issue tracker's closed tickets).

``source sync NAME`` runs the same sync service as the workers' schedule and the "Sync now"
button, then ingests what it registered in this process (no worker needed), like ``ingest``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from knowledge.ingest.many import ingest_versions
from knowledge.models import DocumentVersion, Source, redact_url
from knowledge.sources.base import sync_settings_problems
from knowledge.sources.sync import sync_source
from knowledge.sources.tracker import FLAVOURS, token_variables, tracker_url

CONTENT_KIND = {
    "git": Source.Kind.WIKI,
    "folder": Source.Kind.FOLDER,
    "tracker": Source.Kind.TRACKER,
}


class Command(BaseCommand):
    help = "Add, sync and list sources that sync themselves (git, folder, tracker)."

    def add_arguments(self, parser: CommandParser) -> None:
        verbs = parser.add_subparsers(dest="verb", required=True)
        add = verbs.add_parser("add", help="add a source that syncs itself")
        add.add_argument("name")
        add.add_argument("--kind", required=True, choices=["git", "folder", "tracker"])
        add.add_argument(
            "--url", default="", help="git: a URL or local path; folder: its path; tracker: its API"
        )
        add.add_argument("--branch", default="", help="git: the branch (default: the remote's)")
        add.add_argument("--path", default="", help="only files under this folder of it")
        add.add_argument("--base-url", default="", help="a page's link = base URL + its path")
        add.add_argument("--priority", type=int, default=1, help="cascade tier (1 first)")
        add.add_argument("--history", type=int, default=1, help="git: commits per page as versions")
        add.add_argument("--interval", type=int, default=15, help="minutes between syncs (0: off)")
        add.add_argument("--private", action="store_true", help="only staff read it at first")
        add.add_argument(
            "--mcp-tool", default="", help="coding agents' ask_<NAME> tool (default: the kind)"
        )
        add.add_argument("--no-mcp", action="store_true", help="no ask_ tool for coding agents")
        tracker = add.add_argument_group("tracker")
        tracker.add_argument("--tracker", choices=FLAVOURS, help="which tracker's API")
        tracker.add_argument(
            "--query",
            default="",
            help="jira: JQL; yandex: a filter (JSON) or a query; gitlab: the project id or path",
        )
        tracker.add_argument("--org", default="", help="yandex: the organisation id (X-Org-ID)")
        tracker.add_argument(
            "--cloud-org", default="", help="yandex: a Yandex Cloud organisation (X-Cloud-Org-ID)"
        )
        tracker.add_argument(
            "--marker", default="", help="the resolution comment's marker (KB_TRACKER_MARKER)"
        )
        sync = verbs.add_parser("sync", help="sync a source now and ingest what changed")
        sync.add_argument("name")
        sync.add_argument("--json", action="store_true", help="print a machine-readable summary")
        listing = verbs.add_parser("list", help="the sources and their last sync")
        listing.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        getattr(self, f"_{options['verb']}")(options)

    # --- add -----------------------------------------------------------------------------------

    def _add(self, options: dict[str, Any]) -> None:
        if Source.objects.filter(name__iexact=options["name"]).exists():
            raise CommandError(f"a source named {options['name']!r} exists; change it in the admin")
        tracking = options["kind"] == "tracker"
        if tracking and not options["tracker"]:
            raise CommandError(f"a tracker source needs --tracker {'|'.join(FLAVOURS)}")
        source = Source(
            name=options["name"],
            kind=CONTENT_KIND[options["kind"]],
            connector=options["kind"],
            sync_url=_tracker_url(options) if tracking else _local_or_url(options["url"]),
            branch=options["branch"],
            subpath=options["path"].strip("/"),
            base_url=options["base_url"],
            priority=options["priority"],
            history_depth=options["history"],
            sync_interval_minutes=options["interval"],
            is_public=not options["private"],
            # Two tickets that match equally: the later-closed one first (versions are dated
            # at the resolution).
            prefer_fresh=tracking,
            mcp_listed=not options["no_mcp"],
            mcp_tool=options["mcp_tool"].strip().lower(),
        )
        try:
            source.full_clean()
            if problems := sync_settings_problems(source):
                raise ValidationError(problems)
        except ValidationError as exc:
            problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
            raise CommandError(problems) from None
        source.save()
        self.stdout.write(
            f"Added {source.name} ({source.connector}, {redact_url(source.sync_url)}); "
            f"sync it with: manage.py source sync {_quoted(source.name)}"
        )
        if tracking:
            own, default = token_variables(source)
            self.stdout.write(f"  its token: {own} (or {default}) in the workers' environment")

    # --- sync ----------------------------------------------------------------------------------

    def _sync(self, options: dict[str, Any]) -> None:
        source = _source(options["name"])
        started = time.perf_counter()
        outcome = sync_source(source.pk, enqueue=False)
        ingested = self._ingest(outcome.version_ids, quiet=options["json"])
        summary = {
            **outcome.as_dict(),
            "ingested": len(ingested),
            "ready": sum(1 for status in ingested.values() if status == "ready"),
            "failed": sum(1 for status in ingested.values() if status == "failed"),
            "seconds": round(time.perf_counter() - started, 2),
        }
        if options["json"]:
            self.stdout.write(json.dumps(summary, ensure_ascii=False, indent=2))
        else:
            self.stdout.write(f"{source.name}: {outcome.summary()}")
            if ingested:
                self.stdout.write(
                    f"  ingested {summary['ingested']} versions: {summary['ready']} ready, "
                    f"{summary['failed']} failed, in {summary['seconds']:.1f} s"
                )
        if outcome.status == Source.SyncStatus.FAILED:
            raise CommandError(outcome.error)

    def _ingest(self, version_ids: list[int], *, quiet: bool) -> dict[int, str]:
        """Ingest the sync's new versions here (one model thread embedding the chunks of
        several versions per call, ``knowledge.ingest.many``); version id -> final status."""
        bar = tqdm(total=len(version_ids), unit="version", disable=quiet or not version_ids)
        results = ingest_versions(version_ids, done=lambda result: bar.update())
        bar.close()
        statuses: dict[int, str] = {}
        for version_id in version_ids:
            result = results[version_id]
            if result.status == "skipped":  # a worker took it: report what it is now
                status = DocumentVersion.objects.filter(pk=version_id).values_list(
                    "status", flat=True
                )
                statuses[version_id] = status.first() or "gone"
            else:
                statuses[version_id] = result.status
        return statuses

    # --- list ----------------------------------------------------------------------------------

    def _list(self, options: dict[str, Any]) -> None:
        rows = [_row(source) for source in Source.objects.all()]
        if options["json"]:
            self.stdout.write(json.dumps(rows, ensure_ascii=False, indent=2))
            return
        for row in rows:
            syncs = (
                f"{row['connector']} {row['url']}" + (f" @{row['branch']}" if row["branch"] else "")
                if row["connector"]
                else "no sync"
            )
            last = row["last_sync_error"] or row["last_sync_result"] or "never synced"
            when = row["last_synced_at"] or ""
            self.stdout.write(
                f"{row['name']} · tier {row['priority']} · {row['kind']} · {syncs} · "
                f"{row['documents']} documents\n  {row['last_sync_status'] or 'never'} {when} {last}"
            )


def _source(name: str) -> Source:
    source = Source.objects.filter(name__iexact=name).first()
    if source is None:
        known = ", ".join(Source.objects.values_list("name", flat=True)) or "none"
        raise CommandError(f"no source named {name!r} (sources: {known})")
    return source


def _row(source: Source) -> dict[str, Any]:
    return {
        "id": source.pk,
        "name": source.name,
        "kind": source.kind,
        "connector": source.connector,
        "url": redact_url(source.sync_url),
        "branch": source.branch,
        "path": source.subpath,
        "base_url": source.base_url,
        "priority": source.priority,
        "history": source.history_depth,
        "interval_minutes": source.sync_interval_minutes,
        "documents": source.documents.filter(removed_at__isnull=True).count(),
        "last_synced_at": source.last_synced_at.isoformat() if source.last_synced_at else None,
        "last_sync_status": source.last_sync_status,
        "last_sync_result": source.last_sync_result,
        "last_sync_error": source.last_sync_error,
        "cursor": source.sync_cursor,
    }


def _local_or_url(value: str) -> str:
    """A local path given relative to here is stored absolute (git runs in another folder)."""
    value = value.strip()
    if value and "://" not in value and Path(value).expanduser().exists():
        return str(Path(value).expanduser().resolve())
    return value


def _tracker_url(options: dict[str, Any]) -> str:
    return tracker_url(
        options["url"],
        tracker=options["tracker"],
        query=options["query"],
        org=options["org"],
        cloud_org=options["cloud_org"],
        marker=options["marker"],
    )


def _quoted(name: str) -> str:
    return f'"{name}"' if " " in name else name
