"""A small, real issue tracker for tests: one HTTP server speaking the subset of three APIs the
tracker connector uses, over the same tickets.

- Yandex Tracker: ``POST /v2/issues/_search`` (a filter object or a query; ``perPage``/``page``,
  ``X-Total-Pages``), ``GET /v2/issues/<key>/comments`` (``perPage``, ``id``); ``Authorization:
  OAuth <token>`` and ``X-Org-ID`` required.
- Jira: ``GET /rest/api/2/search`` (JQL: ``project = X``, ``resolution IS NOT EMPTY``,
  ``updated >= -Nm``; ``startAt``/``maxResults``; at most two comments listed inline),
  ``GET /rest/api/2/issue/<key>/comment``; ``Authorization: Bearer <token>``.
- GitLab: ``GET /api/v4/projects/<id>/issues`` (``state``, ``updated_after``; ``page``/
  ``per_page``, ``X-Next-Page``), ``.../issues/<iid>/notes`` (a system note in each closed
  issue); ``PRIVATE-TOKEN: <token>``.

Scripted trouble: the token expires after N more requests (401 from then on, until the client
uses the renewed one), the next request after N answers with a status (a 500), or every request
is redirected elsewhere (a 302). Every credential header it receives is kept (``credentials``):
a second server on another loopback address (``host="127.0.0.2"``) is a host that must never
see a token. Standard library only.

    with TrackerTestServer() as tracker:
        tracker.ticket(1, "Export fails", resolved=day(5), comments=["#RESOLVED Fixed"])
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

QUEUE = "SUP"
PROJECT = "team/support"


@dataclass
class Note:
    id: int
    text: str
    at: datetime
    system: bool = False


@dataclass
class Issue:
    iid: int
    summary: str
    updated: datetime
    resolved: datetime | None
    notes: list[Note] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{QUEUE}-{self.iid}"


def stamp(moment: datetime | None, *, gitlab: bool = False) -> str | None:
    if moment is None:
        return None
    moment = moment.astimezone(UTC)
    if gitlab:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000+0000")


class TrackerTestServer:
    def __init__(self, *, token: str = "token-1", org: str = "org-1", host: str = "127.0.0.1"):
        self.token = token
        self.org = org
        self.host = host
        self.issues: dict[int, Issue] = {}
        self.requests: list[tuple[str, str]] = []  # (method, path with query)
        self.credentials: list[str] = []  # every Authorization or PRIVATE-TOKEN value received
        self.redirect: str = ""  # answer every request with a 302 to this address
        self.listed_pages = 0  # pages of tickets served
        self._lock = threading.Lock()
        self._ids = 100
        self._expire_after: tuple[int, str] | None = None
        self._fail_after: tuple[int, int] | None = None
        self._http: ThreadingHTTPServer | None = None

    # --- tickets ------------------------------------------------------------------------------

    def ticket(
        self,
        iid: int,
        summary: str,
        *,
        updated: datetime,
        resolved: datetime | None = None,
        comments: tuple[str, ...] | list[str] = (),
    ) -> Issue:
        issue = Issue(iid, summary, updated, resolved)
        self.issues[iid] = issue
        for text in comments:
            self.comment(iid, text, at=updated)
        if resolved is not None:
            issue.notes.append(Note(self._next_id(), "closed", resolved, system=True))
        return issue

    def comment(self, iid: int, text: str, *, at: datetime) -> Note:
        note = Note(self._next_id(), text, at)
        issue = self.issues[iid]
        issue.notes.append(note)
        issue.updated = max(issue.updated, at)
        return note

    def edit(self, iid: int, old: str, new: str, *, at: datetime) -> None:
        """Change the text of the ticket's comment that says ``old``; the ticket is updated."""
        issue = self.issues[iid]
        next(n for n in issue.notes if n.text == old).text = new
        issue.updated = at

    def _next_id(self) -> int:
        self._ids += 1
        return self._ids

    # --- trouble ------------------------------------------------------------------------------

    def expire_token_after(self, requests: int, *, renewed: str) -> None:
        """Serve ``requests`` more requests; then the token is ``renewed`` (the old one: 401)."""
        with self._lock:
            self._expire_after = (requests, renewed)

    def fail_after(self, requests: int, status: int = 500) -> None:
        """Serve ``requests`` more requests, then answer one with ``status``."""
        with self._lock:
            self._fail_after = (requests, status)

    def trouble(self) -> int | None:
        """The status to answer this request with instead, if any (counts the request)."""
        with self._lock:
            if self._expire_after is not None:
                left, renewed = self._expire_after
                self._expire_after = (left - 1, renewed) if left > 0 else None
                if left == 0:
                    self.token = renewed
            if self._fail_after is not None:
                left, status = self._fail_after
                self._fail_after = (left - 1, status) if left > 0 else None
                if left == 0:
                    return status
        return None

    # --- the three APIs -----------------------------------------------------------------------

    def listed(self, *, since: datetime | None, resolved_only: bool) -> list[Issue]:
        self.listed_pages += 1
        found = [
            i
            for i in self.issues.values()
            if (since is None or i.updated >= since) and not (resolved_only and i.resolved is None)
        ]
        return sorted(found, key=lambda i: (i.updated, i.iid), reverse=True)

    def yandex_search(self, body: dict) -> list[Issue]:
        if "filter" in body:
            found = body["filter"]
            assert found.get("queue") == QUEUE, found
            assert body.get("order") == "-updatedAt", body
            since = (found.get("updatedAt") or {}).get("from")
            resolved_only = found.get("resolution") == "notEmpty()"
        else:
            query = body["query"]
            assert f"Queue: {QUEUE}" in query and query.endswith('"Sort By": Updated DESC'), query
            match = re.search(r'Updated: >= "([^"]+)"', query)
            since = match[1].replace(" ", "T") + "+00:00" if match else None
            resolved_only = "Resolution: notEmpty()" in query
        return self.listed(since=_time(since), resolved_only=resolved_only)

    def jira_search(self, jql: str) -> list[Issue]:
        assert re.match(rf"\(project = {QUEUE}\) AND ", jql), jql
        assert jql.endswith(" ORDER BY updated DESC"), jql
        minutes = re.search(r"updated >= -(\d+)m", jql)
        since = datetime.now(UTC) - timedelta(minutes=int(minutes[1])) if minutes else None
        return self.listed(since=since, resolved_only="resolution IS NOT EMPTY" in jql)

    def gitlab_search(self, params: dict[str, str]) -> list[Issue]:
        assert params.get("order_by") == "updated_at" and params.get("sort") == "desc", params
        state = params.get("state", "all")
        return self.listed(
            since=_time(params.get("updated_after")), resolved_only=state == "closed"
        )

    # --- running ------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        assert self._http is not None
        return f"http://{self.host}:{self._http.server_address[1]}"

    def __enter__(self) -> TrackerTestServer:
        self._http = ThreadingHTTPServer((self.host, 0), _Handler)
        self._http.daemon_threads = True
        self._http.owner = self  # type: ignore[attr-defined]
        threading.Thread(target=self._http.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()


def _time(value: str | None) -> datetime | None:
    if not value:
        return None
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _page(items: list, page: int, size: int) -> list:
    return items[(page - 1) * size : page * size]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def tracker(self) -> TrackerTestServer:
        return self.server.owner  # type: ignore[attr-defined]

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        self._serve("POST")

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        parts = urlsplit(self.path)
        params = dict(parse_qsl(parts.query))
        tracker = self.tracker
        tracker.requests.append((method, self.path))
        tracker.credentials += [
            value
            for name in ("Authorization", "PRIVATE-TOKEN")
            if (value := self.headers.get(name))
        ]
        if tracker.redirect:
            return self._send(302, {}, {"Location": tracker.redirect + self.path})
        status = tracker.trouble()
        if status is not None:
            return self._send(status, {"errorMessages": ["Internal server error"]})
        segments = parts.path.strip("/").split("/")
        if segments[:2] == ["v2", "issues"]:
            return self._yandex(method, segments[2:], params, body)
        if segments[:3] == ["rest", "api", "2"]:
            return self._jira(segments[3:], params)
        if segments[:3] == ["api", "v4", "projects"]:
            return self._gitlab(segments[3:], params)
        self._send(404, {"message": "404 Not Found"})

    # --- Yandex Tracker -----------------------------------------------------------------------

    def _yandex(self, method: str, rest: list[str], params: dict, body: dict) -> None:
        tracker = self.tracker
        if self.headers.get("Authorization") != f"OAuth {tracker.token}":
            return self._send(401, {"errorMessages": ["Not authorized"], "statusCode": 401})
        if self.headers.get("X-Org-ID") != tracker.org:
            return self._send(403, {"errorMessages": ["Organization not found"]})
        if method == "POST" and rest == ["_search"]:
            found = tracker.yandex_search(body)
            size, page = int(params.get("perPage", 50)), int(params.get("page", 1))
            pages = max(1, -(-len(found) // size))
            headers = {"X-Total-Pages": str(pages), "X-Total-Count": str(len(found))}
            return self._send(200, [_yandex_issue(i) for i in _page(found, page, size)], headers)
        if method == "GET" and len(rest) == 2 and rest[1] == "comments":
            issue = next(i for i in tracker.issues.values() if i.key == unquote(rest[0]))
            after = int(params.get("id", 0))
            notes = [n for n in issue.notes if n.id > after and not n.system]
            size = int(params.get("perPage", 50))
            return self._send(200, [_yandex_comment(n) for n in notes[:size]])
        self._send(404, {"errorMessages": ["Not found"]})

    # --- Jira ---------------------------------------------------------------------------------

    def _jira(self, rest: list[str], params: dict) -> None:
        tracker = self.tracker
        if self.headers.get("Authorization") != f"Bearer {tracker.token}":
            return self._send(401, {"errorMessages": ["You are not authenticated."]})
        start, size = int(params.get("startAt", 0)), int(params.get("maxResults", 50))
        if rest == ["search"]:
            assert params.get("fields") == "summary,resolutiondate,updated,comment", params
            found = tracker.jira_search(params["jql"])
            issues = [_jira_issue(i) for i in found[start : start + size]]
            payload = {"startAt": start, "maxResults": size, "total": len(found), "issues": issues}
            return self._send(200, payload)
        if len(rest) == 3 and rest[0] == "issue" and rest[2] == "comment":
            issue = next(i for i in tracker.issues.values() if i.key == unquote(rest[1]))
            notes = [n for n in issue.notes if not n.system]
            page = [_jira_comment(n) for n in notes[start : start + size]]
            payload = {"startAt": start, "maxResults": size, "total": len(notes), "comments": page}
            return self._send(200, payload)
        self._send(404, {"errorMessages": ["Not found"]})

    # --- GitLab -------------------------------------------------------------------------------

    def _gitlab(self, rest: list[str], params: dict) -> None:
        tracker = self.tracker
        if self.headers.get("PRIVATE-TOKEN") != tracker.token:
            return self._send(401, {"message": "401 Unauthorized"})
        if not rest or unquote(rest[0]) != PROJECT:
            return self._send(404, {"message": "404 Project Not Found"})
        if rest[1:] == ["issues"]:
            found = tracker.gitlab_search(params)
            items = [_gitlab_issue(i, self.tracker.base_url) for i in found]
        elif len(rest) == 4 and rest[1] == "issues" and rest[3] == "notes":
            assert params.get("sort") == "asc", params
            items = [_gitlab_note(n) for n in tracker.issues[int(rest[2])].notes]
        else:
            return self._send(404, {"message": "404 Not Found"})
        size, page = int(params.get("per_page", 20)), int(params.get("page", 1))
        more = page * size < len(items)
        headers = {"X-Next-Page": str(page + 1) if more else "", "X-Total": str(len(items))}
        self._send(200, _page(items, page, size), headers)

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(raw)


def _yandex_issue(issue: Issue) -> dict:
    resolved = issue.resolved is not None
    return {
        "key": issue.key,
        "summary": issue.summary,
        "updatedAt": stamp(issue.updated),
        "resolvedAt": stamp(issue.resolved),
        "resolution": {"key": "fixed", "display": "Fixed"} if resolved else None,
        "status": {"key": "closed" if resolved else "open"},
        "queue": {"key": QUEUE},
    }


def _yandex_comment(note: Note) -> dict:
    return {
        "id": note.id,
        "text": note.text,
        "createdAt": stamp(note.at),
        "updatedAt": stamp(note.at),
    }


def _jira_issue(issue: Issue) -> dict:
    notes = [n for n in issue.notes if not n.system]
    inline = [_jira_comment(n) for n in notes[:2]]  # a search lists only the first comments
    return {
        "key": issue.key,
        "fields": {
            "summary": issue.summary,
            "updated": stamp(issue.updated),
            "resolutiondate": stamp(issue.resolved),
            "comment": {"comments": inline, "maxResults": 2, "total": len(notes), "startAt": 0},
        },
    }


def _jira_comment(note: Note) -> dict:
    return {"id": str(note.id), "body": note.text, "created": stamp(note.at)}


def _gitlab_issue(issue: Issue, base: str) -> dict:
    return {
        "iid": issue.iid,
        "title": issue.summary,
        "state": "closed" if issue.resolved else "opened",
        "updated_at": stamp(issue.updated, gitlab=True),
        "closed_at": stamp(issue.resolved, gitlab=True),
        "web_url": f"{base}/{PROJECT}/-/issues/{issue.iid}",
        "references": {"full": f"{PROJECT}#{issue.iid}"},
    }


def _gitlab_note(note: Note) -> dict:
    return {
        "id": note.id,
        "body": note.text,
        "system": note.system,
        "created_at": stamp(note.at, gitlab=True),
    }
