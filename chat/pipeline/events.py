"""What the answer service yields while it works (the page turns these into server-sent events)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Event:
    kind: str  # "status" | "token" | "done"
    text: str = ""
