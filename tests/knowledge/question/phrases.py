"""Runs of words and figures that a module's source holds, for the test that no evaluation
question stands in the product (``test_one_reading``): in its text (code, comments, docstrings)
and in the words its regular expressions match, alternatives and optional parts written out."""

from __future__ import annotations

import ast
import calendar
import re
from collections.abc import Iterable
from pathlib import Path

from knowledge.question.refs import month_number
from knowledge.text import matching

# A word: letters; a compound joined by hyphens ("тест-кейс") is one word.
WORD = re.compile(r"[а-яёa-z]+(?:-[а-яёa-z]+)*", re.I)
# A string that may be a regular expression: an escape, a group, a class or an alternation.
REGEX_LIKE = re.compile(r"\\[wsbdWSBD]|\(\?|\[[^\]\s]+\]|\|")
_LETTER = "[а-яёa-z-]"


def normal(text: str) -> str:
    return text.casefold().replace("ё", "е")


def corpus_forms(corpus: Path) -> set[str]:
    """Every word form of a corpus's text documents (Markdown, text, CSV) and of its DOCX
    paragraphs and tables, casefolded, ё as е."""
    from docx import Document

    forms: set[str] = set()
    for path in corpus.rglob("*"):
        if path.suffix in (".md", ".txt", ".csv"):
            text = path.read_text(encoding="utf-8", errors="ignore")
        elif path.suffix == ".docx":
            document = Document(str(path))
            cells = [c.text for t in document.tables for row in t.rows for c in row.cells]
            text = "\n".join([*(p.text for p in document.paragraphs), *cells])
        else:
            continue
        forms.update(normal(w) for w in WORD.findall(text))
    return forms


def unheld(words: Iterable[str], held: set[str]) -> dict[str, frozenset[str]]:
    """The words no document holds: each word none of whose forms ``held`` (``corpus_forms``)
    has -> those forms. A word's forms are the lexeme of its lemma (``knowledge.text.matching``:
    ``forms`` of its ``lemma``) and the word as written, ё as е: a word is looked up as the
    knowledge base's vocabulary looks up a question's lemma (``knowledge.retrieval.vocabulary``)."""
    found = {}
    for word in dict.fromkeys(normal(w) for w in words):
        lexeme = frozenset(normal(f) for f in matching.forms(matching.lemma(word))) | {word}
        if not lexeme & held:
            found[word] = lexeme
    return found


def runs_of(words: list[str], size: int) -> list[str]:
    return [" ".join(words[i : i + size]) for i in range(len(words) - size + 1)]


def _string_literals(source: str) -> list[str]:
    """Every string constant of a module; an f-string with its replacement fields as spaces."""
    literals = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            literals.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            parts = [p.value if isinstance(p, ast.Constant) else " " for p in node.values]
            literals.append("".join(parts))
    return literals


def _class_end(pattern: str, i: int) -> int:
    """The index of the "]" closing the class opened at ``i``."""
    j = i + 2 if pattern[i + 1 : i + 2] == "]" else i + 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j


def _atom(pattern: str, i: int) -> tuple[str, int]:
    """One character's worth of a regular expression as a word pattern: a letter, "[..]" for a
    class of letters, "*" for any letters, " " for what is no letter."""
    char = pattern[i]
    if char == "\\":
        return ("*" if pattern[i + 1 : i + 2] == "w" else " "), i + 2
    if char == "[":
        end = _class_end(pattern, i)
        body = pattern[i + 1 : end]
        if re.fullmatch(r"[а-яёa-z-]+", body, re.I):
            return f"[{body}]", end + 1
        return ("*" if body in ("^\\W\\d_", "\\w") else " "), end + 1
    if char == ".":
        return "?", i + 1
    return (char if re.fullmatch(_LETTER, char, re.I) else " "), i + 1


def _group_start(pattern: str, i: int) -> tuple[int, str]:
    """Past a group's opening, and its kind: "group" ("(", "(?:", "(?P<name>"), "look" (a
    lookaround: it matches no text) or "flags" ("(?i)": nothing inside)."""
    found = re.compile(r"\((\?(?::|P<\w+>|[=!]|<[=!]|[aiLmsux]+\))?)?").match(pattern, i)
    opening = found[1] or ""
    kind = "flags" if opening.endswith(")") else "group"
    return found.end(), "look" if opening.startswith(("?=", "?!", "?<")) else kind


def _expand(pattern: str, i: int = 0, limit: int = 256) -> tuple[list[str], int]:
    """The texts a regular expression matches, its alternatives and optional parts written
    out (at most ``limit``), a class or a repetition of letters kept as a word pattern
    ("верси[яи]", "перв*"); and the index where the group it reads closes."""
    done: list[str] = []
    before, last = [""], [""]
    while i < len(pattern) and pattern[i] != ")":
        quantifier = re.compile(r"(?:[*+?]|\{(\d*)(?:,\d*)?\})\??").match(pattern, i)
        if quantifier:
            i = quantifier.end()
            last = [x + "*" if x.strip() and (len(x) == 1 or x[-1] == "]") else x for x in last]
            last += [""] if quantifier[0][0] in "*?" or quantifier[1] == "0" else []
            continue
        before = [b + x for b in before for x in last][:limit]
        if pattern[i] == "|":
            done += before
            before, last, i = [""], [""], i + 1
        elif pattern[i] == "(":
            i, kind = _group_start(pattern, i)
            if kind == "flags":
                last = [""]
                continue
            inner, i = _expand(pattern, i, limit)
            last, i = (inner if kind == "group" else [" "]), i + 1
        else:
            atom, i = _atom(pattern, i)
            last = [atom]
    return (done + [b + x for b in before for x in last])[:limit], i


def _variants(pattern: str) -> list[str]:
    """The texts of ``_expand``, lower-cased; a ")" that closes no group separates two parts
    (a piece of an f-string)."""
    texts, i = [], 0
    while i < len(pattern):
        found, i = _expand(pattern, i)
        texts += found
        i += 1
    return [normal(text) for text in texts]


def _word_pattern(word: str) -> str | None:
    """A regular expression for one word of an expanded pattern; None for one that says too
    little (a wildcard with fewer than three letters before it)."""
    letters = len(re.match(r"[а-яёa-z-]*", word)[0])
    if not letters or (any(c in word for c in "*?[") and letters < 3):
        return None
    text = re.escape(word).replace(r"\*", f"{_LETTER}*").replace(r"\?", _LETTER)
    return text.replace(r"\[", "[").replace(r"\]", "]").replace(r"\-", "-")


def _windows(literal: str, sizes: Iterable[int]) -> set[tuple[str, ...]]:
    """The runs of words of a regular expression's texts, each word as it is written."""
    windows = set()
    for text in _variants(literal):
        words = text.split()
        for size in sizes:
            windows.update(tuple(words[i : i + size]) for i in range(len(words) - size + 1))
    return windows


class Runs:
    """Runs of words to look for, by their length and by the first two letters of their first
    word (a pattern's first word spells them out)."""

    def __init__(self, runs: Iterable[str]) -> None:
        self.runs = set(runs)
        self.sizes = {len(run.split()) for run in self.runs}
        self.by_start: dict[str, list[str]] = {}
        for run in self.runs:
            self.by_start.setdefault(run[:2], []).append(run)

    def matching(self, window: tuple[str, ...]) -> list[str]:
        """The runs the words of a regular expression match, each word a pattern."""
        patterns = [_word_pattern(w) for w in window]
        if None in patterns:
            return []
        if not any(c in word for word in window for c in "*?["):
            return [" ".join(window)] if " ".join(window) in self.runs else []
        whole = re.compile(" ".join(patterns))
        return [run for run in self.by_start.get(window[0][:2], []) if whole.fullmatch(run)]


def fitted_runs(source: str, runs: Runs) -> list[str]:
    """The runs of evaluation questions a module's source holds: in its text (code, comments,
    docstrings), and in the words its regular expressions match."""
    words = [normal(w) for w in WORD.findall(source)]
    found = {run for size in runs.sizes for run in runs_of(words, size) if run in runs.runs}
    for literal in _string_literals(source):
        if REGEX_LIKE.search(literal):
            for window in _windows(literal, runs.sizes):
                found.update(runs.matching(window))
    return sorted(found)


ENGLISH_MONTHS = {m.casefold() for m in (*calendar.month_name[1:], *calendar.month_abbr[1:])}
_SHA = re.compile(r"\b[0-9a-f]{7,40}\b", re.I)
_DATES = [  # (pattern, group of the year, of the month, of the day)
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), 1, 2, 3),
    (re.compile(r"\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b"), 3, 2, 1),
    (re.compile(r"\b(\d{1,2})\s+([^\W\d_]+)(?:\s+(\d{4}))?", re.I), 3, 2, 1),
    (re.compile(r"\b([^\W\d_]+)\s+(\d{1,2})\b(?:,?\s+(\d{4}))?", re.I), 3, 1, 2),
]


def _month(word: str) -> int | None:
    """The month a word names: a Russian month in any case, an English name or abbreviation
    ("May", "Sep"; not "separates")."""
    if re.search(r"[a-z]", word, re.I) and word.casefold() not in ENGLISH_MONTHS:
        return None
    return month_number(word)


def figures(text: str) -> tuple[set[str], set[tuple[int | None, int, int]]]:
    """The commit ids (seven hex digits or more, a digit among them) and the dates (year, month,
    day; the year None when not written) of a text."""
    shas = {m.casefold() for m in _SHA.findall(text) if re.search(r"\d", m)}
    dates = set()
    for pattern, year, month, day in _DATES:
        for found in pattern.finditer(text):
            number = int(found[month]) if found[month].isdigit() else _month(found[month])
            if number and 1 <= number <= 12 and 1 <= int(found[day]) <= 31:
                dates.add((int(found[year]) if found[year] else None, number, int(found[day])))
    return shas, dates


def same_day(a: tuple[int | None, int, int], b: tuple[int | None, int, int]) -> bool:
    return a[1:] == b[1:] and (a[0] == b[0] or None in (a[0], b[0]))
