"""A question as moderation reads it a second time: with the disguises of a prohibited word
taken off. No Django in here.

``fold`` undoes what a person does to slip a word past a list, and nothing else:

- Unicode compatibility forms (NFKC): fullwidth ``ｐａｓｓｗｏｒｄ``, ligatures, styled letters;
- invisible characters (Unicode format characters: zero-width space and joiners, soft hyphen,
  word joiner, byte order mark) and stray combining marks;
- letters spelled apart, three or more in a row: ``p a s s w o r d``, ``п.а.р.о.л.ь``;
- look-alike letters of the other alphabet in a word: a Cyrillic ``а``, ``о``, ``р``, ``с`` in a
  Latin word (``раssword``), a Latin ``a``, ``o``, ``p`` in a Cyrillic one (``пaроль``): each word
  is read in the alphabet most of its letters are in;
- digits and signs standing for letters inside a word of letters (``passw0rd``, ``p@ssw0rd``,
  ``пар0ль``); a number alone, or a name such as ``k8s``, is read both ways by moderation, which
  matches its rules against the text as typed as well as folded.
"""

from __future__ import annotations

import re
import unicodedata

# Latin letter -> the Cyrillic letter drawn the same, and back (a few more Cyrillic letters of
# other languages look Latin too).
_LATIN_TO_CYRILLIC = dict(zip("aceopxyABCEHKMOPTX", "асеорхуАВСЕНКМОРТХ", strict=True))
_CYRILLIC_TO_LATIN = {
    **{c: latin for latin, c in _LATIN_TO_CYRILLIC.items()},
    **dict(zip("іІјѕк", "iIjsk", strict=True)),
}
_LEET_LATIN = {
    "0": "o",
    "1": "i",
    "3": "e",
    "4": "a",
    "5": "s",
    "7": "t",
    "8": "b",
    "@": "a",
    "$": "s",
}
_LEET_CYRILLIC = {"0": "о", "3": "з", "4": "ч", "6": "б", "@": "а"}

_SPACED = re.compile(r"(?<![^\W_])[^\W_](?:[\s.\-_*·•]{1,2}[^\W_]){2,}(?![^\W_])")
_WORD = re.compile(r"[^\W_]+(?:[@$][^\W_]+)*[@$]?|[@$][^\W_]+")


def _script(char: str) -> str:
    if "a" <= char.lower() <= "z":
        return "latin"
    if "\u0400" <= char <= "\u04ff":
        return "cyrillic"
    return ""


def _invisible(char: str) -> bool:
    return unicodedata.category(char) in ("Cf", "Mn", "Me")


def _join_spaced(match: re.Match[str]) -> str:
    return re.sub(r"[\s.\-_*·•]", "", match.group(0))


def _fold_word(match: re.Match[str]) -> str:
    word = match.group(0)
    letters = [_script(c) for c in word]
    latin, cyrillic = letters.count("latin"), letters.count("cyrillic")
    if not latin and not cyrillic:
        return word  # a number, or another alphabet: as it is
    # Letters only one alphabet has decide a tie (п, л, ь are Cyrillic; f, g, s are Latin).
    only_cyrillic = any(
        s == "cyrillic" and c not in _CYRILLIC_TO_LATIN for c, s in zip(word, letters, strict=True)
    )
    cyrillic_word = cyrillic > latin or (cyrillic == latin and only_cyrillic)
    letter_map = _LATIN_TO_CYRILLIC if cyrillic_word else _CYRILLIC_TO_LATIN
    leet = _LEET_CYRILLIC if cyrillic_word else _LEET_LATIN
    return "".join(letter_map.get(c, leet.get(c, c)) for c in word)


def fold(text: str) -> str:
    """``text`` with its disguises taken off (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if not _invisible(c))
    text = _SPACED.sub(_join_spaced, text)
    return _WORD.sub(_fold_word, text)
