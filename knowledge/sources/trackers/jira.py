"""Jira (REST API 2): ``GET /rest/api/2/search`` with JQL, paged by ``startAt``/``maxResults``,
``fields=summary,resolutiondate,updated,comment``; a ticket with more comments than the search
returned reads the rest from ``GET /rest/api/2/issue/<key>/comment``.

The update-time condition is relative (``updated >= -90m``): JQL reads absolute times in the
account's time zone, a relative one means the same on every server.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import quote

from knowledge.sources.base import SyncError
from knowledge.sources.trackers.http import JsonClient
from knowledge.sources.trackers.types import Comment, Ticket, parse_time

FIELDS = "summary,resolutiondate,updated,comment"
_ORDER_BY = re.compile(r"\border\s+by\b", re.IGNORECASE)


class Jira:
    def __init__(self, client: JsonClient, query: str, page_size: int) -> None:
        self.client = client
        self.scope = _ORDER_BY.split(query, maxsplit=1)[0].strip()  # ours orders the listing
        self.page_size = page_size

    def jql(self, since: datetime | None) -> str:
        if since is None:
            condition = "resolution IS NOT EMPTY"
        else:
            minutes = math.ceil((datetime.now(UTC) - since).total_seconds() / 60) + 1
            condition = f"updated >= -{max(1, minutes)}m"
        scope = f"({self.scope}) AND " if self.scope else ""
        return f"{scope}{condition} ORDER BY updated DESC"

    def tickets(self, since: datetime | None) -> Iterator[Ticket]:
        jql, start = self.jql(since), 0
        while True:
            params = {"jql": jql, "startAt": start, "maxResults": self.page_size, "fields": FIELDS}
            data, _ = self.client.get("/rest/api/2/search", params)
            issues = data.get("issues") if isinstance(data, dict) else None
            if not isinstance(issues, list):
                raise SyncError(f"The tracker at {self.client.host} did not list issues.")
            for issue in issues:
                yield self._ticket(issue)
            start += len(issues)
            if not issues or start >= int(data.get("total") or 0):
                return

    def _ticket(self, issue: dict) -> Ticket:
        fields = issue.get("fields") or {}
        key = str(issue.get("key") or "")
        listed = fields.get("comment") or {}
        comments = [_comment(c) for c in listed.get("comments") or []]
        complete = int(listed.get("total") or 0) <= len(comments)
        return Ticket(
            key=key,
            path=key,
            summary=str(fields.get("summary") or ""),
            url=f"{self.client.base}/browse/{key}",
            updated=parse_time(fields.get("updated")),
            resolved=parse_time(fields.get("resolutiondate")),
            comments=comments if complete else None,
        )

    def comments(self, ticket: Ticket) -> list[Comment]:
        if ticket.comments is not None:
            return ticket.comments
        found: list[Comment] = []
        while True:
            params = {"startAt": len(found), "maxResults": self.page_size}
            data, _ = self.client.get(f"/rest/api/2/issue/{quote(ticket.key)}/comment", params)
            page = data.get("comments") if isinstance(data, dict) else None
            if not isinstance(page, list):
                raise SyncError(f"The tracker at {self.client.host} did not list comments.")
            found += [_comment(c) for c in page]
            if not page or len(found) >= int(data.get("total") or 0):
                return found


def _comment(comment: dict) -> Comment:
    return Comment(
        str(comment.get("id", "")), comment.get("body") or "", parse_time(comment.get("created"))
    )
