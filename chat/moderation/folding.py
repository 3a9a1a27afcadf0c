"""A question as moderation reads it again: with the disguises of a prohibited word taken off.
No Django in here.

``readings`` undoes what a person does to slip a word past a list, and nothing else; each
reading is matched as well as the question as typed:

- what only looks different (``knowledge.text.confusables``: Unicode's look-alikes, UTS #39, as the
  source names and the prompt fence see them): compatibility forms (NFKC: fullwidth
  ``ｐａｓｓｗｏｒｄ``), invisible characters dropped, letters drawn blank (U+3164, U+2800) read
  as spaces, look-alike letters of another alphabet in a word (a Cyrillic ``а`` or a Greek ``ο``
  in ``passwοrd``, Latin letters in ``tokeн`` or ``пapoлb``, italic forms such as ``m`` for
  ``т`` and ``u`` for ``и`` too) read in the word's own alphabet;
- a word of Latin and Cyrillic letters both read in Cyrillic, twice: its Latin letters as
  their look-alikes (``cyкa``), and as Russian spelled in Latin letters (``parоль``,
  ``паr0ль``);
- a letter repeated in a row read once (``тууупой``), and a ``*`` standing for a vowel
  (``т*пой``, ``f*ck``) read as each vowel that makes a Russian word of it (any vowel in a Latin
  word: no English dictionary here);
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

from knowledge.text import confusables
from knowledge.text.nlp import known_word
from knowledge.text.words import FUNCTION_WORDS_EN

# Digits, signs and italic forms written for letters, by the alphabet of the word they stand in
# (what Unicode's look-alikes do not hold: ``к`` is drawn like ``ĸ``, not ``k``).
_LEET = {
    "latin": {
        "к": "k",
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
    "cyrillic": {
        **dict(zip("kmtnub", "кмтпиь", strict=True)),
        **{"0": "о", "3": "з", "4": "ч", "6": "б", "@": "а"},
    },
}
_VOWELS_OF = {"cyrillic": "аеёиоуыэюя", "latin": "aeiouy"}
_REPEATED = re.compile(r"([^\W\d_])\1+")
# A word with one or two stars standing for letters inside it or at an end (``т*пой``, ``*уй``).
_MASKED = re.compile(r"(?<![^\W_])(?=[^\W\d_]*\*)[^\W\d_]*\*{1,2}[^\W\d_]*(?![^\W_*])")
_MASK_READINGS = 12  # at most so many readings of the masked words of one question

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
    return _letters(_whole_words(text))


def _whole_words(text: str) -> str:
    """``text`` visible, its words broken inside made whole, each letter as typed."""
    text = confusables.visible(_SOFT_HYPHEN_BREAK.sub("", text), blanks="")
    return _BREAK.sub("", text)


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


def _mixed_words(text: str, read) -> str:
    """``text`` with each word of Latin and Cyrillic letters both read by ``read``."""
    return _WORD.sub(
        lambda found: read(found.group(0)) if confusables.mixed(found.group(0)) else found.group(0),
        text,
    )


def _in_cyrillic(word: str) -> str:
    return confusables.fold_word(word, _LEET, alphabet="cyrillic")


def _spelled_in_latin(word: str) -> str:
    """A mixed word's runs of Latin letters read as Russian spelled in Latin letters."""
    word = _LATIN_WORD.sub(lambda run: _TRANSLIT_PATTERN.sub(_letter, run.group(0).lower()), word)
    return "".join(_LEET["cyrillic"].get(c, c) if c.isdigit() else c for c in word)


def _letter(found: re.Match[str]) -> str:
    return _TRANSLIT_MAP.get(found.group(0), "ы")


def unrepeated(text: str) -> str:
    """``text`` with each letter repeated in a row read once (``тууупой``)."""
    return _REPEATED.sub(r"\1", text)


def unmasked(text: str) -> list[str]:
    """Readings of ``text`` with a masked word's stars read as vowels that make it a word."""
    out: list[str] = []
    for found in _MASKED.finditer(text):
        word = found.group(0)
        alphabet = confusables.word_alphabet(word.replace("*", ""))
        if not alphabet:
            continue
        vowels = _VOWELS_OF[alphabet]
        guesses = [word]
        for _ in range(word.count("*")):
            guesses = [g.replace("*", v, 1) for g in guesses for v in vowels]
        if alphabet == "cyrillic":
            guesses = [g for g in guesses if known_word(g.lower())]
        for guess in guesses:
            out.append(text[: found.start()] + guess + text[found.end() :])
            if len(out) >= _MASK_READINGS:
                return out
    return out


def readings(text: str) -> list[str]:
    """The question read with its disguises taken off (see the module docstring), each reading
    once, without the ones equal to an earlier reading."""
    first, whole = fold(text), joined(text)
    found = [first, whole, transliterated(whole)]
    typed = _SPACED.sub(_join_spaced, _whole_words(text))
    found += [_letters(_mixed_words(typed, read)) for read in (_in_cyrillic, _spelled_in_latin)]
    found += [unrepeated(reading) for reading in found]
    found += unmasked(first)
    return [r for i, r in enumerate(found) if r and r not in found[:i]]
