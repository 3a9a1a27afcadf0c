"""The interface between a connector (git, a folder, a tracker) and the sync service.

A connector says what changed since a cursor it gave before: the items new or changed (each
with its versions, oldest first), the ids deleted, and the new cursor. It never touches the
database; the sync service (``knowledge.sources.sync``) registers the items as documents and
versions through the same registration service as every other entry point.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from knowledge.models import Source


class SyncError(Exception):
    """A sync that cannot go on; the message is shown to staff as it is, in plain words."""


@dataclass(frozen=True)
class ItemVersion:
    """One version of an item: its bytes and what to call it."""

    data: bytes
    label: str = ""  # "" = derived from the file name, as for uploads
    label_date: date | None = None
    updated_at: datetime | None = None
    # The version's own date at its origin (a ticket's resolution), which then stands as its
    # creation time: the one the freshness tie-break (Source.prefer_fresh) compares. None:
    # when the sync registered it.
    dated_at: datetime | None = None


@dataclass
class ChangedItem:
    """A new or changed item: a page, a file, a ticket.

    ``path`` is its identity inside the source (a path or an external id): the document it is.
    ``versions`` are read when the service gets to the item (a connector may stream them), the
    last one being the current text. ``previous_path`` names the document it was until now
    (a renamed page keeps its document and its history).
    """

    path: str
    versions: Iterable[ItemVersion]
    title: str = ""  # "" = from the parsed text or the path
    url: str = ""  # "" = the source's base URL + path
    filename: str = ""  # tells the parser the format; "" = the path's own name
    previous_path: str = ""

    @property
    def file_name(self) -> str:
        return self.filename or PurePosixPath(self.path).name


@dataclass
class Changes:
    """What changed in the source since the cursor the service passed in."""

    cursor: str  # stored once the sync has succeeded; the next sync starts there
    items: Iterable[ChangedItem] = ()
    deleted: list[str] = field(default_factory=list)
    # True: ``items`` are every item the source holds now, and documents not among them leave
    # search (a first sync, or a cursor the connector no longer knows).
    complete: bool = False
    refused: list[tuple[str, str]] = field(default_factory=list)  # (path, why), plain words
    where: str = ""  # "commit 3fa2c1d": how the summary names the state reached


class Connector(Protocol):
    """Reads a source's changes; ``close`` ends whatever the reading started."""

    def changes(self, cursor: str) -> Changes: ...

    def close(self) -> None: ...


def sync_settings_problems(source: Source) -> dict[str, str]:
    """Field -> what is wrong, for a source that syncs itself (the admin and the command)."""
    problems: dict[str, str] = {}
    connector = source.connector
    if not connector:
        return problems
    url = source.sync_url.strip()
    if not url:
        problems["sync_url"] = "A source that syncs needs the URL or path it syncs from."
    elif url.startswith("-"):
        problems["sync_url"] = "A URL or path cannot start with '-'."
    if connector == "folder" and url and not url.startswith("/"):
        problems["sync_url"] = "A folder is given by its absolute path on the server."
    if connector == "tracker" and url:
        from knowledge.sources.tracker import settings_problem

        if problem := settings_problem(url):
            problems["sync_url"] = problem
    if source.branch.startswith("-") or ".." in source.branch or " " in source.branch:
        problems["branch"] = "Not a branch name."
    if ".." in PurePosixPath(source.subpath).parts:
        problems["subpath"] = "The folder must be inside the repository."
    return problems
