"""Citations in generated answers: [1], [2][3], [1, 2]. Numbers that point at no source are
removed (and logged), so every citation a user can click leads to a chunk the model was given."""

from __future__ import annotations

import logging
import re
from collections.abc import Collection

logger = logging.getLogger(__name__)

_CITATION = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")


def cited_numbers(text: str) -> set[int]:
    numbers: set[int] = set()
    for match in _CITATION.finditer(text):
        numbers.update(int(n) for n in re.split(r"[,;]\s*", match.group(1)))
    return numbers


def clean_citations(text: str, available: int | Collection[int]) -> tuple[str, list[int]]:
    """Drop citations outside 1..available (or outside the numbers given: the sources the
    prompt held); returns the text and the numbers removed."""
    removed: list[int] = []
    given = set(range(1, available + 1)) if isinstance(available, int) else set(available)

    def keep(match: re.Match[str]) -> str:
        numbers = [int(n) for n in re.split(r"[,;]\s*", match.group(1))]
        valid = [n for n in numbers if n in given]
        removed.extend(n for n in numbers if n not in valid)
        return "".join(f"[{n}]" for n in valid)

    cleaned = _CITATION.sub(keep, text)
    if removed:
        logger.warning("removed citations to missing sources: %s", sorted(set(removed)))
    return re.sub(r"[ \t]+([.,;:])", r"\1", cleaned), sorted(set(removed))
