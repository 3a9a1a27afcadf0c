"""The corpus's own synonyms: "Матрица трассируемости (RTM - Requirement Traceability Matrix)",
"нестабильные тесты (flaky tests)". Read from a document's text when it becomes searchable,
kept per document (``Synonym``, written by ``knowledge.ingest.synonyms``), and used to expand
the lexical side of a search: a question naming one of the names also looks for the others."""

from __future__ import annotations

import re

from django.db import connection

from knowledge.text.matching import name_stem

# Read from every chunk at every ingest, so written to fail fast, with the same matches: a
# match never starts right after a Cyrillic letter (one starting a letter earlier would be the
# leftmost), and a word never gives letters back (nothing after it can match a letter); without
# these the engine tried every letter of every word (the corpus's Markdown: 1.3 s, now 0.2 s).
_PAIR = re.compile(
    r"(?<![А-ЯЁа-яё])"
    r"(?P<ru>[А-ЯЁа-яё][А-ЯЁа-яё-]*+(?:[ ]+[А-ЯЁа-яё-]++){0,3})\s*\((?P<en>[A-Za-z][^()\n]{1,80})\)"
)
_PARTS = re.compile(r"\s+[-–—]\s+|,\s*|;\s*")
_CYRILLIC = re.compile(r"[А-ЯЁа-яё]")


def normalise(name: str) -> str:
    """Lower-cased words separated by single spaces ("A/B Testing" -> "a b testing")."""
    return " ".join(re.findall(r"\w+", name.lower().replace("ё", "е")))


def key(name: str) -> str:
    """What a name is matched by: its words cut to five letters, so that Russian case endings
    do not matter ("разработке через тестирование" = "разработка через тестирование")."""
    return " ".join(name_stem(word) for word in normalise(name).split())


def _russian_names(phrase: str) -> list[str]:
    """The phrase before the brackets and its shorter endings: the term may start anywhere
    ("перешли на разработку через тестирование (Test-Driven Development)"); one word alone only when it is
    the whole phrase."""
    words = normalise(phrase).split()
    if len(words) == 1:
        return words if len(words[0]) >= 4 else []
    return [" ".join(words[i:]) for i in range(len(words) - 1)]


def read_pairs(text: str) -> set[tuple[str, str]]:
    """(Russian name, other name) pairs written as "name (other, ABBR)" in the text."""
    pairs: set[tuple[str, str]] = set()
    for match in _PAIR.finditer(text):
        names = _russian_names(match["ru"])
        for part in _PARTS.split(match["en"]):
            other = normalise(part)
            if len(other) >= 2 and not _CYRILLIC.search(other) and len(other.split()) <= 6:
                # One Russian word stands for one word or abbreviation, never for a phrase:
                # "тестирование (A/B testing)" names the kind of testing, not testing itself.
                pairs.update(
                    (russian, other) for russian in names if " " in russian or " " not in other
                )
    return pairs


def expansions(
    text: str, visible_source_ids: list[int] | None = None, *, limit: int = 8
) -> list[str]:
    """The other names of the terms the text uses (whole words, any case), longest first;
    only synonyms staff added or read from documents the user may read."""
    words = key(text)
    low = f" {words} "
    if len(low) < 4:
        return []
    params: list = [sorted(set(words.split())), low]
    visible = ""
    if visible_source_ids is not None:
        visible = "AND (s.document_id IS NULL OR d.source_id = ANY(%s))"
        params.append(list(visible_source_ids))
    with connection.cursor() as cursor:
        # Terms are stored normalised: a whole-word match is a position in the padded text.
        # Only the terms starting with one of the question's words are tested (an index on the
        # first word): testing every term was a scan of the whole table for each search.
        cursor.execute(
            "SELECT DISTINCT s.term, s.equivalent FROM knowledge_synonym s "
            "LEFT JOIN knowledge_document d ON d.id = s.document_id "
            "WHERE split_part(s.term, ' ', 1) = ANY(%s) "
            "AND position(' ' || s.term || ' ' IN %s) > 0 "
            f"AND (s.document_id IS NULL OR d.removed_at IS NULL) {visible} "
            "ORDER BY s.term, s.equivalent",  # ties in length kept in one order, not the plan's
            params,
        )
        rows = cursor.fetchall()
    rows.sort(key=lambda row: -len(row[0]))
    return list(dict.fromkeys(equivalent for _, equivalent in rows))[:limit]
