"""A question as moderation reads it again: with the disguises of a prohibited word taken off.
No Django in here.

``readings`` undoes what a person does to slip a word past a list, and nothing else; each
reading is matched as well as the question as typed:

- what only looks different (``knowledge.confusables``, the same function that tells
  source names apart): compatibility forms (NFKC: fullwidth ``ｐａｓｓｗｏｒｄ``), invisible
  characters dropped, letters drawn blank (U+3164, U+2800) read as spaces, look-alike letters of
  another alphabet in a word (a Cyrillic ``а`` or a Greek ``ο`` in ``passwοrd``, Latin letters in
  ``tokeн`` or ``пapoлb``) read in the word's own alphabet;
- letters spelled apart, three or more in a row: ``p a s s w o r d``, ``п.а.р.о.л.ь``;
- digits and signs standing for letters inside a word of letters (``passw0rd``, ``p@ssw0rd``,
  ``пар0ль``); a number alone, or a name such as ``k8s``, is read both ways, as the text as
  typed is matched too;
- the **joined** reading: a word broken inside, by a blank-drawn letter (``пар\u3164оль``), a
  hyphen or a soft hyphen, with or without a line break (``па-роль``, ``паро-\\nль``), or a ``*``
  (``пар*оль``), made whole again (the first reading keeps hyphens: ``wi-fi``, ``тест-кейс``);
- Russian written in Latin letters (``day parol``, ``skin' token``), read back in Cyrillic, when
  the question has no English function word (``the``, ``is``, ``for``...): a word ending in a
  consonant gets the soft sign it dropped when only that spelling is a Russian word (``parol``
  is ``пароль``).
"""

from __future__ import annotations

import re

from knowledge import confusables
from knowledge.question.nlp import known_word
from knowledge.question.words import FUNCTION_WORDS_EN

# Digits and signs written for letters, by the alphabet of the word they stand in.
_LEET = {
    "latin": {
        "0": "o",
        "1": "i",
        "3": "e",
        "4": "a",
        "5": "s",
        "7": "t",
        "8": "b",
        "@": "a",
        "$": "s",
    },
    "cyrillic": {"0": "о", "3": "з", "4": "ч", "6": "б", "@": "а"},
}

_SPACED = re.compile(r"(?<![^\W_])[^\W_](?:[\s.\-_*·•]{1,2}[^\W_]){2,}(?![^\W_])")
_WORD = re.compile(r"[^\W_]+(?:[@$][^\W_]+)*[@$]?|[@$][^\W_]+")
# A word broken inside: a hyphen (or a soft hyphen) with or without the line break after it, or
# a star, between two letters.
_BREAK = re.compile(r"(?<=[^\W\d_])(?:[-\u00ad\u2010\u2011][ \t]*(?:\r?\n[ \t]*)?|\*)(?=[^\W\d_])")
_SOFT_HYPHEN_BREAK = re.compile(r"\u00ad[ \t]*(?:\r?\n[ \t]*)?")

# Russian in Latin letters: the usual spellings, longest first.
_TRANSLIT = (
    ("shch", "щ"),
    ("sch", "щ"),
    ("yo", "ё"),
    ("ye", "е"),
    ("jo", "ё"),
    ("yu", "ю"),
    ("ju", "ю"),
    ("ya", "я"),
    ("ja", "я"),
    ("zh", "ж"),
    ("kh", "х"),
    ("ts", "ц"),
    ("ch", "ч"),
    ("sh", "ш"),
    ("''", "ъ"),
    ("x", "кс"),
    *zip("abvgdezijklmnoprstufhcwq'", "абвгдезийклмнопрстуфхцвкь", strict=True),
)
_TRANSLIT_PATTERN = re.compile("|".join(re.escape(latin) for latin, _ in _TRANSLIT) + "|y")
_TRANSLIT_MAP = dict(_TRANSLIT)
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
_VOWELS = frozenset("аеёиоуыэюя")


def _join_spaced(match: re.Match[str]) -> str:
    return re.sub(r"[\s.\-_*·•]", "", match.group(0))


def _letters(text: str) -> str:
    text = _SPACED.sub(_join_spaced, text)
    return _WORD.sub(lambda found: confusables.fold_word(found.group(0), _LEET), text)


def fold(text: str) -> str:
    """``text`` with its disguises taken off, blank-drawn letters read as spaces, words broken
    by a hyphen left as they are (the first reading of ``readings``)."""
    return _letters(confusables.visible(text))


def joined(text: str) -> str:
    """``fold`` with words broken inside made whole: blank-drawn letters dropped, a hyphen,
    soft hyphen or star between two letters (a line break after it too) taken out."""
    text = confusables.visible(_SOFT_HYPHEN_BREAK.sub("", text), blanks="")
    return _letters(_BREAK.sub("", text))


def _cyrillic(word: str) -> str:
    """One Latin word read as Russian written in Latin letters."""
    low = word.lower()

    def letter(found: re.Match[str]) -> str:
        spelled = found.group(0)
        if spelled != "y":
            return _TRANSLIT_MAP[spelled]
        before = low[found.start() - 1] if found.start() else ""
        return "й" if before in "aeiouy" else "ы"  # "day", "tupoy"; "ty"

    read = _TRANSLIT_PATTERN.sub(letter, low)
    read = re.sub(r"(?<=[аеёоуыэюя])и$", "й", read)  # "dai", "tupoi"
    ends_in_consonant = read and read[-1] not in _VOWELS and read[-1] not in "йьъ"
    if ends_in_consonant and not known_word(read) and known_word(read + "ь"):
        read += "ь"  # "parol" is "пароль": the soft sign is what such spellings drop
    return read.capitalize() if word[:1].isupper() else read


def transliterated(text: str) -> str:
    """``text`` with its Latin words read as Russian in Latin letters; "" when a word of it is an
    English function word (then it is English, not Russian in disguise)."""
    words = [w.lower().strip("'") for w in _LATIN_WORD.findall(text)]
    # "a" and "i" are Russian words too ("а", "и"): they do not tell the languages apart.
    if not words or any(len(w) > 1 and w in FUNCTION_WORDS_EN for w in words):
        return ""
    return _LATIN_WORD.sub(lambda found: _cyrillic(found.group(0)), text)


def readings(text: str) -> list[str]:
    """The question read with its disguises taken off (see the module docstring), each reading
    once, without the ones equal to an earlier reading."""
    first, whole = fold(text), joined(text)
    found = [first, whole, transliterated(whole)]
    return [r for i, r in enumerate(found) if r and r not in found[:i]]
