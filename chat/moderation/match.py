"""How a moderation rule's text matches a question: plain text in, matchers out.

A rule's patterns compiled, its terms one whole-word alternation, and the question normalised the
way they are matched (``chat.moderation.rules`` explains the rules). The model checks a rule's patterns
with it when staff save one; the moderation step matches questions with it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache

from knowledge.text.language import has_cyrillic

logger = logging.getLogger(__name__)
_BLANKS = re.compile(r"\s+")


@dataclass(frozen=True)
class Verdict:
    """Why a question was refused: the rule, its kind, the words that matched and how."""

    rule_id: int | None
    rule: str
    kind: str
    matched: str
    by: str  # "pattern" or "term"

    def as_dict(self) -> dict:
        return {
            "rule_id": self.rule_id,
            "rule": self.rule,
            "kind": self.kind,
            "matched": self.matched,
            "by": self.by,
        }


_PERSON = re.compile(r"\[person\]")
_STAND_IN_RU, _STAND_IN_EN = "Иванова", "John Smith"


def normalise(text: str) -> str:
    """The text rules are matched against: ё as е, blanks collapsed; a person's name the guard
    redacted ("[person]") read as a name again, so that "домашний адрес [person]" still is the
    personal data of a colleague (the rules name persons by a capitalised word)."""
    text = _PERSON.sub(lambda m: _STAND_IN_RU if has_cyrillic(text) else _STAND_IN_EN, text)
    return _BLANKS.sub(" ", text.replace("ё", "е").replace("Ё", "Е")).strip()


def _lines(text: str) -> list[str]:
    return [
        line.strip()
        for line in (text or "").splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]


def pattern_problems(text: str) -> list[str]:
    """The lines of ``text`` that are not valid regular expressions, with the error."""
    problems = []
    for line in _lines(text):
        try:
            re.compile(normalise(line), re.IGNORECASE)
        except re.error as exc:
            problems.append(f"{line}: {exc}")
    return problems


@lru_cache(maxsize=256)
def compiled_patterns(text: str) -> tuple[re.Pattern[str], ...]:
    """A rule's patterns compiled (cached by their text: an edit in the admin is a new text)."""
    compiled = []
    for line in _lines(text):
        try:
            compiled.append(re.compile(normalise(line), re.IGNORECASE))
        except re.error as exc:
            logger.warning("moderation pattern %r skipped: %s", line, exc)
    return tuple(compiled)


@lru_cache(maxsize=256)
def compiled_terms(text: str) -> re.Pattern[str] | None:
    """A rule's terms as one whole-word alternation; None when it has none."""
    alternatives = []
    for line in _lines(text):
        words = [w for w in normalise(line).split() if w.rstrip("*")]
        if words:
            alternatives.append(r"\s+".join(_term_word(word) for word in words))
    if not alternatives:
        return None
    # Not after a hyphen either: "тестировщик-идиот" quoted in a question is one word.
    return re.compile(r"(?<![\w-])(?:" + "|".join(alternatives) + r")(?!\w)", re.IGNORECASE)


def _term_word(word: str) -> str:
    """One word of a term: a trailing * matches any ending."""
    if word.endswith("*"):
        return re.escape(word.rstrip("*")) + r"\w*"
    return re.escape(word)


def match_rule(rule, text: str) -> Verdict | None:
    """Whether ``rule`` (a ``ModerationRule`` or any object with its fields) refuses ``text``
    (already normalised)."""
    for pattern in compiled_patterns(rule.patterns):
        found = pattern.search(text)
        if found:
            return Verdict(rule.pk, rule.name, rule.kind, found.group(0), "pattern")
    terms = compiled_terms(rule.terms)
    found = terms.search(text) if terms is not None else None
    if found:
        return Verdict(rule.pk, rule.name, rule.kind, found.group(0), "term")
    return None
