"""How a word of a question is matched against a text: one module, one way per purpose.

- **Lemmas, for meaning** (``lemmas``): every word's pymorphy3 normal form and the word as
  written, casefolded. What the answer check, a passage's units, the quotes and the cited row
  of a checklist compare the question's terms (``Question.terms``) with; one word's lemma alone
  (``lemma``) where a text's words are compared with another's (a named thing in the evidence,
  a title's words, a question's words grouped by topic, a change's terms).
- **Forms, for looking a lemma up in texts** (``forms``): every word form of a Russian lemma's
  lexeme, what the knowledge base's vocabulary looks a word up by (``knowledge.retrieval.
  vocabulary``: a text-search stemmer makes different stems of some forms) and what says that
  no document holds a word. A known gap: the
  question's words are lemmatised with the part of speech its parse gives them, a text's
  without one, so a form the two read differently is missed ("снимками" -> "снимка" in a
  question, "снимки" -> "снимок" in a text); matching every normal form of a text's words was
  measured (answers.py) and changed no key fact shown.
- **Normal forms, for the closed classes of the version grammar** (``normal_forms``): every
  normal form pymorphy3 gives a word, so an ordinal, a neighbour word or a version noun is
  known in any case, and a word the dictionary only guesses still is ("коммите" is guessed
  as "коммитя" first, "коммит" after it). Only for looking a word up in a listed class
  (``knowledge.question.version_words``), never for comparing a question with a text.
- **Name stems, for the names of documents** (``name_stem``, ``name_stems``): a word's first
  five letters, ё as е. A title is matched by a crude stem on purpose: titles hold inflected
  abbreviations ("ПМИ", "ТЗ-…"), transliterations and compounds a dictionary does not know,
  and the corpus's synonyms are stored by that key (``knowledge.synonyms.key``).
- **Lexemes, for PostgreSQL's full-text index** only: the Snowball stems its text-search
  configurations make live in ``knowledge.retrieval.sql`` (``query_terms``), where the index
  needs them, and nowhere else.
"""

from __future__ import annotations

import re
from functools import lru_cache

from knowledge.text import nlp

WORD = re.compile(r"[^\W\d_][\w-]*", re.UNICODE)  # a word for meaning: letters, then - or \w
NAME_WORD = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)  # a word of a name: letters, or digits

# Abbreviations of a name kept however short ("ТЗ", "ПЗ"): the GOST 19/34 document types.
ABBREVIATIONS = {
    "пми": "программа и методика испытаний",
    "тз": "техническое задание",
    "пз": "пояснительная записка",
    "рп": "руководство программиста",
    "ро": "руководство оператора",
    "рс": "руководство системного программиста",
    "тп": "текст программы",
    "лу": "лист утверждения",
    "техзадание": "техническое задание",
}
STOP_STEMS = {
    # question words and the vocabulary of asking about versions, in both languages
    "что", "как", "какие", "какой", "где", "когда", "между", "измен", "издан", "верси",
    "редак", "докум", "посл", "после", "предыд", "прошл", "последн", "текущ", "сравн",
    "разни", "отлич", "стало", "было", "появи", "удале", "добав", "what", "which", "where",
    "when", "chang", "diffe", "betwe", "versi", "docum", "compa", "previ", "lates", "curre",
    "added", "remov", "there", "about", "with", "from", "this", "that", "have", "does",
}  # fmt: skip


def lemmas(words: list[str]) -> frozenset[str]:
    """The words' lemmas and the words as written, casefolded: what a question's terms are
    looked for in (see the module docstring)."""
    return frozenset({nlp.lemma(w) for w in words} | {w.casefold() for w in words})


def lemma(word: str) -> str:
    """One word's lemma for meaning: pymorphy3's most likely normal form, lower-cased; a word
    in Latin letters as written (see the module docstring)."""
    return nlp.lemma(word)


def forms(lemma: str) -> tuple[str, ...]:
    """Every word form of a Russian lemma, lower-cased, ё as е; the word alone when it is not
    a Russian lemma (see the module docstring)."""
    return nlp.forms(lemma)


def normal_forms(word: str) -> frozenset[str]:
    """Every pymorphy3 normal form of ``word`` (see the module docstring)."""
    return nlp.normal_forms(word)


@lru_cache(maxsize=8192)
def text_lemmas(text: str) -> frozenset[str]:
    """``lemmas`` of the words of ``text`` (kept per process: the same sentences of the best
    sources are read by every answer about them)."""
    return lemmas(WORD.findall(text))


def name_stem(word: str) -> str:
    """A word of a document's name as names are compared: its first five letters, ё as е."""
    word = word.casefold().replace("ё", "е")
    return word[:5]


def name_stems(text: str, *, minimum: int = 3) -> list[str]:
    """Name stems of the text's words of ``minimum`` letters or more (an abbreviation of a
    document type however short), the vocabulary of asking dropped."""
    out = []
    for word in NAME_WORD.findall(text):
        short = len(word) < 3 and not (word.isupper() or word.casefold() in ABBREVIATIONS)
        if len(word) < minimum and word.casefold() not in ABBREVIATIONS or short:
            continue
        s = name_stem(word)
        if s not in STOP_STEMS and s[:4] not in STOP_STEMS:
            out.append(s)
    return out
