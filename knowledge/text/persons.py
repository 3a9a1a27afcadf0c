"""Persons named in an English text: a first name the gender-guesser dictionary knows (about
40,000 given names of many countries, shipped in the package) followed by a capitalised
surname: "John Smith", "Maria Garcia". A first name alone is left alone ("Max", "Grace" may
be the names of tools). Russian texts have natasha's NER (``knowledge.text.nlp``)."""

from __future__ import annotations

import re
from functools import cache

import gender_guesser.detector as gender

_PAIR = re.compile(r"\b([A-Z][a-z]+)\s+((?:[A-Z]\.\s*)?[A-Z][a-z]+(?:-[A-Z][a-z]+)?)\b")
_NAMES = ("male", "female", "mostly_male", "mostly_female", "andy")


@cache
def _detector():
    return gender.Detector(case_sensitive=True)


def english_persons(text: str) -> list[tuple[int, int, str]]:
    """(start, stop, text) of each "First Surname" whose first word is a known given name."""
    found = []
    for match in _PAIR.finditer(text):
        if _detector().get_gender(match[1]) in _NAMES:
            found.append((match.start(), match.end(), match[0]))
    return found
