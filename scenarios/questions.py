"""The guided analysis's questions: at most three, one at a time, each answered with a tile.

Asked only what the description leaves open: the platform (unless it names one), the component
(tiles are the section titles the search finds for the description, when it finds two or more
distinct ones), and the kind of change (unless the description says it is a fix).
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


def plan(description: str, components: Sequence[str]) -> tuple[list[dict], dict[str, str]]:
    """The questions to ask, and the answers the description already gives."""
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
    distinct = list(dict.fromkeys(c for c in components if c))[:MAX_COMPONENT_TILES]
    if len(distinct) >= 2:
        questions.append(
            {
                "key": "component",
                "text": _("Which part of the product does it change?"),
                "tiles": [{"value": c, "label": c} for c in distinct],
            }
        )
    if _FIX.search(description):
        known["change"] = "fix"
    else:
        questions.append(
            {"key": "change", "text": _("What kind of change is it?"), "tiles": change_tiles()}
        )
    return questions[:MAX_QUESTIONS], known
