"""Named things in a question: the words that say *which* thing it is about.

"How has Apple's revenue changed?", "What did NVIDIA report?", "Как настроить Jenkins?": a
product, company or tool name picks the documents about that thing, while the rest of the
question ("revenue", "changed") fits every document of the kind. A named word is written
with a capital letter inside the sentence ("Apple's", "iPhone", "AWS"), or in Latin letters
inside a Russian question ("Jenkins", "flaky"). The first word of a sentence is not a name
by its capital alone. Pure text rules, no database: ``knowledge.retrieval.documents`` turns
the words into document evidence.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W\d_][\w'’-]*", re.UNICODE)
_SENTENCE_START = re.compile(r"(?:^|[.!?…:;]\s+|\n)\s*[\"«(]?$")
_CYRILLIC = re.compile(r"[А-ЯЁа-яё]")
_LATIN = re.compile(r"^[A-Za-z]")


def named_words(question: str) -> list[str]:
    """The question's named words, in order, each once (possessive "'s" dropped)."""
    cyrillic = bool(_CYRILLIC.search(question))
    found: list[str] = []
    for match in _WORD.finditer(question):
        word = re.sub(r"['’]s$", "", match.group(0)).strip("'’-")
        if len(word) < 2:
            continue
        inside = not _SENTENCE_START.search(question[: match.start()])
        capital = any(ch.isupper() for ch in word[1:]) or (inside and word[0].isupper())
        latin_in_russian = cyrillic and bool(_LATIN.match(word))
        if (capital or latin_in_russian) and word not in found:
            found.append(word)
    return found


def latin_names(question: str) -> list[str]:
    """The named words of a Russian question written in Latin letters ("поле Link класса
    Item" -> Link, Item); none for a question without Cyrillic letters."""
    if not _CYRILLIC.search(question):
        return []
    return [w for w in named_words(question) if _LATIN.match(w)]
