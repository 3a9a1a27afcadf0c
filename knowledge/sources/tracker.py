"""Closed tickets of an issue tracker (Yandex Tracker, Jira, GitLab) as a source.

A ticket is indexed only when it is resolved and a comment of it carries the resolution marker
(``#RESOLVED`` unless the source or ``KB_TRACKER_MARKER`` says otherwise): the document is a
small Markdown page, "KEY: summary" as its title, the marked comment(s) as its body, the
resolution date. Its link opens the ticket; its version is dated at the resolution, so a source
that prefers fresh documents (tracker sources do) ranks the later-closed of two equal matches
first. Tickets without a marked comment are not indexed, and leave search when it is removed
or the ticket is reopened.

The cursor is the latest update time seen: the first sync lists every resolved ticket (the
listing is complete: tickets no longer there leave search), later ones every ticket updated
since (a few minutes of overlap: a ticket read twice makes no second version). Everything is
read from the tracker before the sync service writes anything, so a refused token or a server
error half-way keeps nothing and the cursor stays.

Where the source reads from is its ``sync_url``: the tracker's API address with the settings
as parameters, ``https://jira.example.com?tracker=jira&query=project = SUP``
(``tracker_url`` builds it; ``source add --kind tracker`` calls it). The token is never in the
database: ``KB_TRACKER_TOKEN_<source id>`` or ``KB_TRACKER_TOKEN`` in the workers' environment,
and it goes only to a host of ``KB_TRACKER_HOSTS``: the URL is typed by staff (the admin, the
command line), the token belongs to whoever runs the workers, and a URL naming any host would
hand it to that host. A redirect is never followed (``trackers.http``), so no other host gets it
either.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import parse_qsl, urlsplit, urlunsplit
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from knowledge.sources.base import ChangedItem, Changes, ItemVersion, SyncError
from knowledge.sources.trackers.gitlab import GitLab
from knowledge.sources.trackers.http import JsonClient
from knowledge.sources.trackers.jira import Jira
from knowledge.sources.trackers.types import Ticket, TrackerApi, parse_time
from knowledge.sources.trackers.yandex import DEFAULT_WEB, YandexTracker, query_problem
from portal.env import env_str

FLAVOURS = ("yandex", "jira", "gitlab")
PARAMETERS = ("tracker", "query", "org", "cloud_org", "marker")
OVERLAP = timedelta(minutes=10)  # tracker and portal clocks differ; re-reading costs nothing
_PORTED = re.compile(r"(?P<host>\[[^\]]*\]|[^:\[\]]*):(?P<port>\d+)")  # host:port, [::1]:port


@dataclass(frozen=True)
class TrackerSettings:
    flavour: str  # yandex, jira, gitlab
    base: str  # the API's address
    query: str = ""  # JQL, a Yandex filter (JSON) or query, a GitLab project id or path
    org: str = ""  # Yandex: X-Org-ID (Yandex 360)
    cloud_org: str = ""  # Yandex: X-Cloud-Org-ID (Yandex Cloud Organization)
    marker: str = ""  # "" = KB_TRACKER_MARKER


def tracker_url(base: str, **values: str) -> str:
    """A tracker source's ``sync_url``: the API address and the settings given (readable: only
    the characters a query string cannot hold are escaped)."""
    pairs = [(name, values[name].strip()) for name in PARAMETERS if values.get(name, "").strip()]
    query = "&".join(f"{name}={_escape(value)}" for name, value in pairs)
    return f"{base.strip().rstrip('/')}?{query}" if query else base.strip().rstrip("/")


def read_settings(url: str) -> TrackerSettings:
    """The settings in a tracker source's ``sync_url``; ValueError says what is wrong."""
    # Everything after "?" is settings, a "#" typed in the admin included (a marker).
    address, _, given = url.strip().partition("?")
    parts = urlsplit(address)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("A tracker is given by the http(s) address of its API.")
    if parts.username or parts.password:
        raise ValueError(
            "The token does not go in the URL: set KB_TRACKER_TOKEN_<source id> for the workers."
        )
    if not host_allowed(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)):
        raise ValueError(
            f"The tracker at {parts.hostname} is not among KB_TRACKER_HOSTS "
            f"({', '.join(settings.TRACKER_HOSTS) or 'none'}): the workers send a tracker token "
            "only to the hosts listed there. Add it to KB_TRACKER_HOSTS in the environment of "
            "the workers and of manage.py (a host, host:port or *.domain; comma-separated)."
        )
    values = dict(parse_qsl(given, keep_blank_values=True))
    unknown = sorted(set(values) - set(PARAMETERS))
    if unknown:
        raise ValueError(f"Unknown tracker setting(s): {', '.join(unknown)}.")
    found = TrackerSettings(
        flavour=values.get("tracker", "").strip().lower(),
        base=urlunsplit(parts._replace(fragment="")).rstrip("/"),
        **{name: values.get(name, "").strip() for name in PARAMETERS[1:]},
    )
    problem = _problem(found)
    if problem:
        raise ValueError(problem)
    return found


def _problem(found: TrackerSettings) -> str:
    if found.flavour not in FLAVOURS:
        return f"Say which tracker it is: tracker={'|'.join(FLAVOURS)}."
    if found.flavour == "gitlab" and not found.query:
        return "A GitLab source needs its project: its id or path (group/project) as the query."
    if found.flavour == "yandex":
        if not (found.org or found.cloud_org):
            return (
                "Yandex Tracker needs the organisation's id (org, or cloud_org for Yandex Cloud)."
            )
        return query_problem(found.query)
    return ""


def settings_problem(url: str) -> str:
    try:
        read_settings(url)
    except ValueError as exc:
        return str(exc)
    return ""


def host_allowed(host: str | None, port: int | None = None) -> bool:
    """Whether ``KB_TRACKER_HOSTS`` names ``host`` on ``port``: an entry is a host name or
    address (any port), ``host:port``, or ``*.domain`` (any host under the domain)."""
    host = (host or "").lower().rstrip(".")
    for entry in settings.TRACKER_HOSTS:
        name, wanted = _host_entry(entry)
        if wanted is not None and port != wanted:
            continue
        if host == name or (name.startswith("*.") and host.endswith(name[1:])):
            return True
    return False


def _host_entry(entry: str) -> tuple[str, int | None]:
    """An entry of ``KB_TRACKER_HOSTS`` as (host, port or None)."""
    entry = entry.strip().lower()
    if ported := _PORTED.fullmatch(entry):
        return ported["host"].strip("[]").rstrip("."), int(ported["port"])
    return entry.strip("[]").rstrip("."), None


def token_variables(source) -> list[str]:
    """Where the token of ``source`` is looked for, in order: its own variable, named by its id
    (a name can be chosen: "JIRA!" would read the token of a source named "Jira"), then the
    default."""
    return [f"KB_TRACKER_TOKEN_{source.pk}", "KB_TRACKER_TOKEN"]


def _name_variable(source) -> str:
    """The variable the source's token was read from before tokens were named by id."""
    slug = re.sub(r"[^A-Z0-9]+", "_", source.name.upper()).strip("_")
    return f"KB_TRACKER_TOKEN_{slug}" if slug else ""


class TrackerConnector:
    """Reads a tracker source's changes; one instance (one HTTP client) per sync."""

    def __init__(self, source, *, page_size: int | None = None) -> None:
        try:
            self.settings = read_settings(source.sync_url)
        except ValueError as exc:
            raise SyncError(f"{source.name}: {exc}") from None
        self.marker = self.settings.marker or settings.TRACKER_MARKER
        self.web = source.base_url.strip()
        variables = token_variables(source)
        _refuse_old_variable(source, variables)
        self.client = JsonClient(
            self.settings.base,
            self._headers(_token(variables)),
            timeout=settings.TRACKER_TIMEOUT_SECONDS,
            token_hint=f"Set {variables[0]} (or {variables[1]}) for the workers.",
        )
        self.api = _api(self.settings, self.client, page_size or settings.TRACKER_PAGE_SIZE)

    def changes(self, cursor: str) -> Changes:
        since = parse_time(cursor)
        listed = _newest_first(self.api.tickets(since - OVERLAP if since else None))
        if since is None and not listed:
            raise SyncError(
                f"The tracker at {self.client.host} lists no resolved tickets for this query; "
                "nothing was changed."
            )
        items, deleted = [], []
        for ticket in listed:
            item = self._item(ticket)
            if item is None:
                deleted.append(ticket.path)
            else:
                items.append(item)
        times = [t.updated for t in listed if t.updated] + ([since] if since else [])
        latest = max(times, default=None)
        return Changes(
            cursor=latest.isoformat() if latest else cursor,
            items=items,
            deleted=deleted,
            complete=since is None,
            where=f"{len(listed)} tickets read, {len(items)} with a resolution comment",
        )

    def close(self) -> None:
        self.client.close()

    def _item(self, ticket: Ticket) -> ChangedItem | None:
        """The ticket's document, or None when it is not one (open, or no marked comment)."""
        if ticket.resolved is None:
            return None
        marked = [
            text
            for c in self.api.comments(ticket)
            if (text := resolution_text(c.text, self.marker))
        ]
        if not marked:
            return None
        title = f"{ticket.key}: {' '.join(ticket.summary.split())}".strip()
        resolved = ticket.resolved.astimezone(ZoneInfo(settings.TIME_ZONE))
        body = "\n\n".join([f"# {title}", f"Resolved {resolved.date().isoformat()}.", *marked])
        return ChangedItem(
            path=ticket.path,
            title=title,
            url=self._link(ticket),
            filename=f"{re.sub(r'[^A-Za-z0-9._-]+', '_', ticket.key)}.md",
            versions=[
                ItemVersion(
                    data=(body + "\n").encode(),
                    label=resolved.date().isoformat(),
                    label_date=resolved.date(),
                    updated_at=ticket.updated,
                    dated_at=ticket.resolved,
                )
            ],
        )

    def _link(self, ticket: Ticket) -> str:
        """The ticket in the tracker's web pages: the source's base URL + key when it has one
        (GitLab's issues have their own link, always), else what the API says."""
        if self.web and self.settings.flavour != "gitlab":
            return self.web.rstrip("/") + "/" + ticket.key
        return ticket.url or DEFAULT_WEB + ticket.key

    def _headers(self, token: str) -> dict[str, str]:
        found = self.settings
        headers = {}
        if found.org:
            headers["X-Org-ID"] = found.org
        if found.cloud_org:
            headers["X-Cloud-Org-ID"] = found.cloud_org
        if not token:
            return headers
        if token.split(" ", 1)[0] in ("OAuth", "Bearer", "Basic"):
            headers["Authorization"] = token  # the whole header value, as given
        elif found.flavour == "gitlab":
            headers["PRIVATE-TOKEN"] = token
        elif found.flavour == "yandex":
            headers["Authorization"] = f"OAuth {token}"
        elif ":" in token:  # Jira Cloud: e-mail:API token
            headers["Authorization"] = "Basic " + base64.b64encode(token.encode()).decode()
        else:  # Jira Server / Data Center: a personal access token
            headers["Authorization"] = f"Bearer {token}"
        return headers


def resolution_text(text: str, marker: str) -> str:
    """A comment's text without the marker when the marker is in it (as a word of its own, in
    any case), else ""."""
    pattern = re.compile(rf"(?<![\w#]){re.escape(marker)}(?!\w)", re.IGNORECASE)
    if not marker or not pattern.search(text or ""):
        return ""
    return pattern.sub("", text).strip()


def _api(found: TrackerSettings, client: JsonClient, page_size: int) -> TrackerApi:
    kind = {"yandex": YandexTracker, "jira": Jira, "gitlab": GitLab}[found.flavour]
    return kind(client, found.query, page_size)


def _newest_first(tickets) -> list[Ticket]:
    """Each ticket once (a page boundary moved by an update can list one twice), as listed."""
    seen: dict[str, Ticket] = {}
    for ticket in tickets:
        seen.setdefault(ticket.path, ticket)
    return list(seen.values())


def _refuse_old_variable(source, variables: list[str]) -> None:
    """A configuration from before tokens were named by id: say which variable to set now
    rather than send the default token, or none, and fail with a 401."""
    old = _name_variable(source)
    if old and old not in variables and _raw_token(old) and not _raw_token(variables[0]):
        raise SyncError(
            f"{old} is no longer read (a source's name can be chosen to read another's token): "
            f"set {variables[0]} (the source's id) for the workers and manage.py instead."
        )


def _raw_token(name: str) -> str:
    try:
        return env_str(name).strip()
    except ImproperlyConfigured:
        return ""


def _token(variables: list[str]) -> str:
    for name in variables:
        try:
            value = env_str(name).strip()
        except ImproperlyConfigured as exc:
            raise SyncError(str(exc)) from None
        if value:
            return value
    return ""


def _escape(value: str) -> str:
    value = " ".join(value.split())  # one line
    return re.sub(r"[%&#+]", lambda m: f"%{ord(m[0]):02X}", value)
