"""Yandex Tracker (API v2): ``POST /v2/issues/_search`` with a filter object or a query in the
tracker's query language, paged by ``perPage``/``page`` (``X-Total-Pages``); comments from
``GET /v2/issues/<key>/comments``, paged by ``perPage`` and the last comment's ``id``.

Headers: ``Authorization: OAuth <token>`` (or ``Bearer <IAM token>``) and ``X-Org-ID`` (Yandex
360) or ``X-Cloud-Org-ID`` (Yandex Cloud Organization). The API speaks UTC.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from urllib.parse import quote

from knowledge.sources.base import SyncError
from knowledge.sources.trackers.http import JsonClient
from knowledge.sources.trackers.types import Comment, Ticket, parse_time

DEFAULT_WEB = "https://tracker.yandex.ru/"


class YandexTracker:
    def __init__(self, client: JsonClient, query: str, page_size: int) -> None:
        self.client = client
        self.query = query.strip()
        self.page_size = page_size

    def tickets(self, since: datetime | None) -> Iterator[Ticket]:
        body = self.search_body(since)
        page = 1
        while True:
            params = {"perPage": self.page_size, "page": page}
            issues, headers = self.client.post("/v2/issues/_search", params, body)
            if not isinstance(issues, list):
                raise SyncError(f"The tracker at {self.client.host} did not list issues.")
            for issue in issues:
                yield _ticket(issue)
            pages = headers.get("X-Total-Pages", "")
            last = page >= int(pages) if pages.isdigit() else len(issues) < self.page_size
            if last or not issues:
                return
            page += 1

    def search_body(self, since: datetime | None) -> dict:
        """A filter object stays one (``updatedAt`` from the cursor added to it); a query in the
        query language gets the same condition in its words. The first sync asks for resolved
        issues only; later ones for every issue updated since, so a reopened one is seen."""
        if self.query.startswith("{"):
            found = dict(json.loads(self.query))
            if since is not None:
                found["updatedAt"] = {"from": since.strftime("%Y-%m-%dT%H:%M:%S.000+0000")}
            else:
                found.setdefault("resolution", "notEmpty()")
            return {"filter": found, "order": "-updatedAt"}
        condition = (
            f'Updated: >= "{since:%Y-%m-%d %H:%M:%S}"' if since else "Resolution: notEmpty()"
        )
        query = f"({self.query}) AND {condition}" if self.query else condition
        return {"query": f'{query} "Sort By": Updated DESC'}

    def comments(self, ticket: Ticket) -> list[Comment]:
        found: list[Comment] = []
        after = None
        while True:
            params = {"perPage": self.page_size, **({"id": after} if after else {})}
            page, _ = self.client.get(f"/v2/issues/{quote(ticket.key)}/comments", params)
            if not isinstance(page, list):
                raise SyncError(f"The tracker at {self.client.host} did not list comments.")
            found += [
                Comment(str(c.get("id", "")), c.get("text") or "", parse_time(c.get("createdAt")))
                for c in page
            ]
            if len(page) < self.page_size:
                return found
            after = page[-1].get("id")


def _ticket(issue: dict) -> Ticket:
    updated = parse_time(issue.get("updatedAt")) or parse_time(issue.get("createdAt"))
    resolved = parse_time(issue.get("resolvedAt"))
    if resolved is None and issue.get("resolution"):
        resolved = updated  # resolved, its time not given: the last update is the closest
    key = str(issue.get("key") or "")
    return Ticket(
        key=key,
        path=key,
        summary=str(issue.get("summary") or ""),
        url="",
        updated=updated,
        resolved=resolved,
    )


def query_problem(query: str) -> str:
    """What is wrong with a Yandex query (a JSON filter object must parse), or ""."""
    if not query.strip().startswith("{"):
        return ""
    try:
        found = json.loads(query)
    except ValueError as exc:
        return f"The filter is not valid JSON ({exc.msg})."
    return "" if isinstance(found, dict) else "The filter must be a JSON object."
