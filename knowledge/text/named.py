"""Named things in a question: the words that say *which* thing it is about.

- identifiers (``OnResume``, ``System.IO``, ``hse_api``, ``OAuth2``): CamelCase, dotted or
  snake_case words, letters mixed with digits;
- words in Latin letters inside a Russian question (``Docker``, ``Jenkins``, ``timeout``), and
  capitalised words inside an English sentence (``Oracle's`` -> ``Oracle``);
- abbreviations in capitals (``ЛВС``), names in quotes («Заметки»), figures (``16:9``);
- placeholders the guard put in place of personal data (``[phone]``).

Pure text rules; the named entities (persons, organisations, places) come from the NER model
(``knowledge.text.nlp``).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W\d_][\w'’-]*", re.UNICODE)
_SENTENCE_START = re.compile(r"(?:^|[.!?…:;]\s+|\n)\s*[\"«(]?$")
_CYRILLIC = re.compile(r"[А-ЯЁа-яё]")
_LATIN = re.compile(r"^[A-Za-z]")
_IDENTIFIER = re.compile(
    r"\b(?:[A-Za-z]+[a-z][A-Z]\w*|\w*[A-Za-z]\w*\.\w*[A-Za-z]\w*|[A-Za-z]+_\w+|[A-Za-z][A-Za-z0-9+#-]*)\b"
)
_ABBREVIATION = re.compile(r"\b[А-ЯЁ]{2,6}\b")
_QUOTED = re.compile(r"«([^»]{2,40})»|\"([^\"]{2,40})\"")
PLACEHOLDER = re.compile(r"\[(?:card|e-mail|phone|passport|INN|SNILS|person)\]")
_FIGURE = re.compile(r"\b\d+(?:[.,:]\d+)+\b|\b\d{4}(?:\s\d{4}){1,3}\b")
# Two or more capitalised Latin words in a row: one name in a Russian text ("Azure DevOps",
# "Apache Kafka Streams"), which its words apart do not make.
_LATIN_RUN = re.compile(r"\b[A-Z][\w+#.-]*(?: [A-Z][\w+#.-]*)+\b")


def is_identifier(word: str) -> bool:
    """CamelCase, dotted or snake_case words, and words mixing letters and digits: names
    that mean one thing (``OnResume``, ``System.IO``, ``hse_api``, ``OAuth2``)."""
    return bool(re.search(r"[a-z][A-Z]|\w[._]\w|[A-Za-z]\d|\d[A-Za-z]", word))


def named_words(text: str) -> list[str]:
    """Capitalised words inside a sentence and Latin words in a Russian text, in order, each
    once (possessive "'s" dropped): the first word of a sentence is not a name by its
    capital alone."""
    cyrillic = bool(_CYRILLIC.search(text))
    found: list[str] = []
    for match in _WORD.finditer(text):
        word = re.sub(r"['’]s$", "", match.group(0)).strip("'’-")
        if len(word) < 2:
            continue
        inside = not _SENTENCE_START.search(text[: match.start()])
        capital = any(ch.isupper() for ch in word[1:]) or (inside and word[0].isupper())
        latin_in_russian = cyrillic and bool(_LATIN.match(word))
        if (capital or latin_in_russian) and word not in found:
            found.append(word)
    return found


def latin_names(text: str) -> list[str]:
    """The named words of a Russian text written in Latin letters ("метод Save класса Order" ->
    Save, Order); none for a text without Cyrillic letters."""
    if not _CYRILLIC.search(text):
        return []
    return [w for w in named_words(text) if _LATIN.match(w)]


def named_things(text: str, *, document_words: frozenset[str] = frozenset()) -> list[str]:
    """Placeholders, quoted names, figures, identifiers (every Latin word of a Russian
    question), abbreviations and, in a Russian text, runs of capitalised Latin words (the
    name they make together: "Azure DevOps" besides "Azure" and "DevOps"), each once;
    ``document_words`` (abbreviations that name the documents themselves) left out."""
    russian = bool(_CYRILLIC.search(text))
    found: list[str] = [m[0] for m in PLACEHOLDER.finditer(text)]
    text = PLACEHOLDER.sub(" ", text)
    for match in _QUOTED.finditer(text):
        name = (match[1] or match[2]).strip()
        if name[:1].isupper() and len(name.split()) <= 3:  # a name, not a quoted phrase
            found.append(name)
    found += [m[0] for m in _FIGURE.finditer(text)]
    for match in _IDENTIFIER.finditer(text):
        word = match[0].strip("-+#")
        if (russian and len(word) >= 2) or is_identifier(word):
            found.append(word)
    found += [m[0] for m in _ABBREVIATION.finditer(text)]
    if russian:
        found += [m[0] for m in _LATIN_RUN.finditer(text)]
    unique: list[str] = []
    seen: set[str] = set(document_words)
    for thing in found:
        if thing.casefold() not in seen:
            seen.add(thing.casefold())
            unique.append(thing)
    return unique
