"""The guided analysis's questions: at most three, one at a time, each answered with a tile.

Asked only what the description leaves open: the platform (unless it names one), the component
(tiles are the product's functional areas: the sections of its requirements documents, those the
change touches first, when there are two or more), and the kind of change (unless the
description says it is a fix).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from django.utils.translation import gettext as _

MAX_QUESTIONS = 3
MAX_COMPONENT_TILES = 5

_PLATFORMS = [
    ("android", r"android|андроид"),
    ("ios", r"\bios\b|iphone|ipad|айфон"),
    ("web", r"\bweb\b|веб|браузер|browser|сайт"),
    ("server", r"сервер|server|\bapi\b|backend|бэкенд"),
]
_FIX = re.compile(r"\bbug|исправ|ошибк|дефект|\bfix", re.IGNORECASE)


def platform_tiles() -> list[dict[str, str]]:
    return [
        {"value": "android", "label": "Android"},
        {"value": "ios", "label": "iOS"},
        {"value": "web", "label": _("Web")},
        {"value": "server", "label": _("Server and API")},
        {"value": "all", "label": _("Every platform")},
    ]


def change_tiles() -> list[dict[str, str]]:
    return [
        {"value": "new", "label": _("New feature")},
        {"value": "change", "label": _("Change to existing behaviour")},
        {"value": "fix", "label": _("Bug fix")},
        {"value": "ui", "label": _("Interface only (layout, texts)")},
    ]


def named_platform(description: str) -> str:
    """The platform the description names ("" when none or several)."""
    found = [key for key, pattern in _PLATFORMS if re.search(pattern, description, re.IGNORECASE)]
    return found[0] if len(found) == 1 else ""


def plan(
    description: str, components: Sequence[dict[str, str]]
) -> tuple[list[dict], dict[str, str]]:
    """The questions to ask, and the answers the description already gives; ``components``
    are the product's functional areas as tiles (the requirement sections, the ones the
    change touches first)."""
    questions: list[dict] = []
    known: dict[str, str] = {}
    platform = named_platform(description)
    if platform:
        known["platform"] = platform
    else:
        questions.append(
            {
                "key": "platform",
                "text": _("Which platform does the change concern?"),
                "tiles": platform_tiles(),
            }
        )
    tiles = list({t["value"]: t for t in components if t.get("value")}.values())
    if len(tiles) >= 2:
        questions.append(
            {
                "key": "component",
                "text": _("Which part of the product does it change?"),
                "tiles": tiles[:MAX_COMPONENT_TILES],
            }
        )
    if _FIX.search(description):
        known["change"] = "fix"
    else:
        questions.append(
            {"key": "change", "text": _("What kind of change is it?"), "tiles": change_tiles()}
        )
    return questions[:MAX_QUESTIONS], known
