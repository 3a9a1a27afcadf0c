"""The one language detector of the code base: questions, answers' wording and documents.

The portal reads Russian and English, two languages written in different scripts, so the share
of Cyrillic letters among the letters decides, and a text with no letter at all says nothing.
A statistical identifier (py3langid, restricted to ru/en) agreed on every question tried and cost
94 MB per process; it would only matter for languages the portal does not serve.
"""

from __future__ import annotations

import re

_LETTER = re.compile(r"[^\W\d_]")
_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
_LATIN = re.compile(r"[A-Za-z]")
# A Russian question often names things in Latin letters ("Какие методы у класса Order?"):
# Cyrillic letters make it Russian well before they are half of the letters.
RUSSIAN_SHARE = 0.3
SAMPLE = 200_000  # characters of a document looked at


def detect(text: str) -> str:
    """ "ru" when a good share of the letters are Cyrillic, else "en" (the default too)."""
    sample = text[:SAMPLE]
    letters = len(_LETTER.findall(sample))
    cyrillic = len(_CYRILLIC.findall(sample))
    return "ru" if letters and cyrillic >= letters * RUSSIAN_SHARE else "en"


def search_config(text: str) -> str:
    """PostgreSQL's text-search configuration for a document: russian, english, or simple for a
    text with neither alphabet (a table of figures, another script)."""
    sample = text[:SAMPLE]
    cyrillic = len(_CYRILLIC.findall(sample))
    latin = len(_LATIN.findall(sample))
    if cyrillic == 0 and latin == 0:
        return "simple"
    return "russian" if cyrillic >= latin * RUSSIAN_SHARE else "english"


def has_cyrillic(text: str) -> bool:
    return bool(_CYRILLIC.search(text))
