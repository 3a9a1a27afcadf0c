"""GitLab (REST API v4): ``GET /api/v4/projects/:id/issues`` (``state=closed`` on a first sync,
every state ``updated_after`` the cursor later, so a reopened issue is seen), paged by
``page``/``per_page`` and ``X-Next-Page``; comments are the issue's notes
(``/projects/:id/issues/:iid/notes``), system notes ("closed", "changed the label") left out.

A personal, project or group access token goes in ``PRIVATE-TOKEN``; an OAuth token as
``Bearer``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import quote

from knowledge.sources.base import SyncError
from knowledge.sources.trackers.http import JsonClient
from knowledge.sources.trackers.types import Comment, Ticket, parse_time


class GitLab:
    def __init__(self, client: JsonClient, project: str, page_size: int) -> None:
        self.client = client
        self.project = quote(project.strip().strip("/"), safe="")  # "42" or "group%2Fproject"
        self.page_size = page_size

    def tickets(self, since: datetime | None) -> Iterator[Ticket]:
        params: dict = {"order_by": "updated_at", "sort": "desc", "per_page": self.page_size}
        if since is None:
            params["state"] = "closed"
        else:
            params["updated_after"] = since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for issue in self._pages(f"/api/v4/projects/{self.project}/issues", params):
            yield _ticket(issue)

    def comments(self, ticket: Ticket) -> list[Comment]:
        path = f"/api/v4/projects/{self.project}/issues/{ticket.ref['iid']}/notes"
        params = {"sort": "asc", "order_by": "created_at", "per_page": self.page_size}
        return [
            Comment(
                str(note.get("id", "")), note.get("body") or "", parse_time(note.get("created_at"))
            )
            for note in self._pages(path, params)
            if not note.get("system")
        ]

    def _pages(self, path: str, params: dict) -> Iterator[dict]:
        page = "1"
        while page:
            items, headers = self.client.get(path, {**params, "page": page})
            if not isinstance(items, list):
                raise SyncError(f"The tracker at {self.client.host} did not list {path}.")
            yield from items
            following = headers.get("X-Next-Page")
            if following is None:  # GitLab leaves it out past 10,000 items: a full page goes on
                following = str(int(page) + 1) if len(items) >= self.page_size else ""
            page = following.strip()


def _ticket(issue: dict) -> Ticket:
    iid = issue.get("iid")
    references = issue.get("references") or {}
    closed = issue.get("state") == "closed"
    return Ticket(
        key=str(references.get("full") or f"#{iid}"),
        path=f"issues/{iid}",
        summary=str(issue.get("title") or ""),
        url=str(issue.get("web_url") or ""),
        updated=parse_time(issue.get("updated_at")),
        resolved=parse_time(issue.get("closed_at")) if closed else None,
        ref={"iid": iid},
    )
