"""The rules that say a test section checks a requirement (no Django here).

Three kinds of evidence, each kept with the match so the table can say why:

- **reference**: the test section names the requirement's section ("п. 4.2.1", "пункта 4.2",
  "section 4.2"). A number the test document uses for a section of its own counts only when the
  sentence also names the requirements document ("ТЗ", "технического задания", "requirements"),
  since "см. п. 5.1" in a test programme usually means its own 5.1;
- **terms**: the lexemes (Postgres full-text stems) the two share, weighted by how rare each is
  among the sections of the two documents compared (local IDF): "квитанц", "сумм", "зон" say
  much, "программ", "парковк" (in every section) say little;
- **heading**: the test section's own title names the requirement's section or one of the parts
  holding it, as GOST test programmes title their checks ("Испытание выполнения требований к
  интерфейсу" checks "Требования к интерфейсу"): every lexeme of that title but the word
  "requirements" itself is in the test section's title;
- **retrieval**: the hybrid search, asked the requirement's text over the test document, puts
  the section first.

A requirement is covered by a section when it is referenced or named by the heading, or when the shared rare terms carry
at least ``TERMS_ALONE`` of the requirement's weight (two terms at least; ``TERMS_MANY`` when
four are shared), or when the search ranks the section first and the terms carry at least
``TERMS_WITH_RETRIEVAL`` (two terms at least) or three rare terms are shared.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

TERMS_ALONE = 0.5
MANY_TERMS, TERMS_MANY = 4, 0.35  # four rare terms shared need a smaller share
TERMS_WITH_RETRIEVAL = 0.25
MIN_SHARED = 2
SHARED_WITH_RETRIEVAL = 3  # ... or three rare terms, whatever their share (a long statement)
RARE_SHARE = 0.25  # a lexeme in more than this share of the sections is not rare

_REFERENCE = re.compile(
    r"(?:\bп\.|\bпп\.|\bпункт\w*|\bраздел\w*|\bподраздел\w*|\bsection|\bclause|\bтребовани\w+|"
    r"\brequirement)\s*(?:№\s*)?(\d+(?:\.\d+)+|\d+)(?!\.\d)",
    re.IGNORECASE,
)
_NAMES_REQUIREMENTS = re.compile(
    r"\bТЗ\b|техническ\w+ задани\w+|\brequirements?\b|\bspecification\b", re.IGNORECASE
)
# A sentence ends before a capital letter: "п. 4.2.1" and "см. п. 5.1" stay in one sentence.
_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=[A-ZА-ЯЁ«\"])|\n")


@dataclass
class Evidence:
    """Why a test section covers a requirement (or not)."""

    reference: bool = False
    heading: bool = False
    terms: list[str] = field(default_factory=list)  # the shared rare lexemes, rarest first
    term_score: float = 0.0  # their weight / the requirement's whole weight
    retrieval_rank: int | None = None  # 1-based rank among the test sections the search found
    retrieval_score: float | None = None

    @property
    def covers(self) -> bool:
        if self.reference or self.heading:
            return True
        shared = len(self.terms)
        if shared >= MIN_SHARED and self.term_score >= TERMS_ALONE:
            return True
        if shared >= MANY_TERMS and self.term_score >= TERMS_MANY:
            return True
        if self.retrieval_rank != 1:
            return False
        return shared >= SHARED_WITH_RETRIEVAL or (
            shared >= MIN_SHARED and self.term_score >= TERMS_WITH_RETRIEVAL
        )

    @property
    def strength(self) -> float:
        """For ordering the covering sections: a reference first, then terms and retrieval."""
        bonus = 0.3 if self.retrieval_rank == 1 else 0.1 if self.retrieval_rank else 0.0
        named = (1.0 if self.reference else 0.0) + (0.8 if self.heading else 0.0)
        return named + self.term_score + bonus

    def reasons(self) -> list[str]:
        """Plain words for the table (untranslated keys: the caller labels them)."""
        found = []
        if self.reference:
            found.append("reference")
        if self.heading:
            found.append("heading")
        if self.terms:
            found.append("terms")
        if self.retrieval_rank is not None:
            found.append("retrieval")
        return found


def referenced_numbers(text: str, own_numbers: Iterable[str] = ()) -> set[str]:
    """Section numbers ``text`` refers to ("п. 4.2.1" -> "4.2.1"). A number the document uses
    itself (``own_numbers``) is kept only in a sentence that names the requirements document."""
    own = set(own_numbers)
    found: set[str] = set()
    for sentence in _SENTENCE.split(text):
        qualified = bool(_NAMES_REQUIREMENTS.search(sentence))
        for match in _REFERENCE.finditer(sentence):
            number = match[1].rstrip(".")
            if number not in own or qualified:
                found.add(number)
    return found


def refers_to(references: set[str], requirement_number: str) -> bool:
    """A reference to the requirement's section or to a section containing it ("4.1" holds
    "4.1.2"); a bare top-level number ("4") is too vague to count."""
    if not requirement_number:
        return False
    return any(
        "." in ref and (requirement_number == ref or requirement_number.startswith(ref + "."))
        for ref in references
    )


def names_heading(
    requirement_titles: Sequence[set[str]], unit_title: set[str], generic: set[str]
) -> bool:
    """The unit's title holds every lexeme of one of the requirement's titles (its section's
    and its parts', as lexemes), the ``generic`` ones ("требован", "requir") left out; a title of
    generic words only names nothing."""
    for title in requirement_titles:
        specific = title - generic
        if specific and specific <= unit_title:
            return True
    return False


def local_idf(units: Sequence[set[str]]) -> dict[str, float]:
    """IDF of every lexeme over ``units`` (the sections of the documents compared)."""
    df: dict[str, int] = {}
    for lexemes in units:
        for lexeme in lexemes:
            df[lexeme] = df.get(lexeme, 0) + 1
    n = max(len(units), 1)
    return {lexeme: math.log(1 + (n - d + 0.5) / (d + 0.5)) for lexeme, d in df.items()}


def rare(idf: dict[str, float], n_units: int) -> set[str]:
    """The lexemes in at most ``RARE_SHARE`` of the units (and never a one-letter stem)."""
    if n_units <= 0:
        return set()
    threshold = math.log(1 + (n_units - RARE_SHARE * n_units + 0.5) / (RARE_SHARE * n_units + 0.5))
    return {lexeme for lexeme, value in idf.items() if value >= threshold and len(lexeme) > 1}


def shared_terms(
    requirement: set[str], section: set[str], idf: dict[str, float], rare_lexemes: set[str]
) -> tuple[list[str], float]:
    """The rare lexemes both have, rarest first, and their share of the requirement's weight
    (every lexeme of the requirement counts in the denominator, rare or not)."""
    total = sum(idf.get(x, 0.0) for x in requirement)
    shared = sorted(requirement & section & rare_lexemes, key=lambda x: (-idf.get(x, 0.0), x))
    if not total:
        return shared, 0.0
    return shared, sum(idf.get(x, 0.0) for x in shared) / total
