"""What every tracker API gives the tracker connector: tickets and their comments."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol


@dataclass(frozen=True)
class Comment:
    id: str
    text: str
    created: datetime | None = None


@dataclass
class Ticket:
    """One ticket as a search lists it. ``comments`` None: not listed with it (read on demand)."""

    key: str  # what people call it: "SUP-12", "team/support#12"
    path: str  # its document inside the source: "SUP-12", "issues/12"
    summary: str
    url: str  # the ticket in the tracker's web pages ("" = base URL + key)
    updated: datetime
    resolved: datetime | None  # None: open (or reopened)
    comments: list[Comment] | None = None
    ref: dict = field(default_factory=dict)  # what the API needs to read its comments


class TrackerApi(Protocol):
    def tickets(self, since: datetime | None) -> Iterator[Ticket]:
        """Tickets updated at ``since`` or later (every closed ticket when None), the most
        recently updated first, page after page."""
        ...

    def comments(self, ticket: Ticket) -> list[Comment]:
        """Every comment of ``ticket``, oldest first."""
        ...


def parse_time(value: object) -> datetime | None:
    """A tracker's timestamp ("2024-03-05T10:15:30.000+0000", "...Z") as an aware datetime."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
