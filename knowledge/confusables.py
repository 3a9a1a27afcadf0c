"""Characters that look like others: what a person uses to pass one word or name off as another.
No Django in here.

One function for moderation (``chat.moderation.folding`` reads a question with its disguises
taken off) and for source names (``Source.objects.named_like``: "Secret\u00a0A", "Secret A\u200b"
or "Ѕecret A" with a Cyrillic Ѕ is the name "Secret A"), so that both see the same look-alikes:

- Unicode compatibility forms (NFKC): fullwidth ``ｐａｓｓｗｏｒｄ``, a no-break space, ligatures;
- invisible characters (Unicode format characters: zero-width space and joiners, soft hyphen,
  word joiner, byte order mark) and stray combining marks, dropped;
- letters that are drawn blank (HANGUL FILLER U+3164, BRAILLE PATTERN BLANK U+2800 and their
  kin): a space, or nothing (``blanks``);
- look-alike letters of another alphabet in a word: each word is read in one alphabet, Latin or
  Cyrillic (``alphabets``): a Cyrillic ``а``, ``о``, ``р``, ``ѕ`` in a Latin word, a Greek ``ο``
  in either, a Latin ``a``, ``o``, ``p``, ``k``, ``t`` in a Cyrillic one. The letters only one
  alphabet has decide (``tokeн`` is Cyrillic: ``н`` has no Latin twin, and every Latin letter of it
  a Cyrillic one), else the most letters.
"""

from __future__ import annotations

import re
import unicodedata

# Latin letter -> the Cyrillic letter drawn the same, and back.
_TWINS = dict(zip("aceopxyABCEHKMOPTXY", "асеорхуАВСЕНКМОРТХУ", strict=True))
# Latin letters a Cyrillic word may be written with, drawn like (or, in italics, as) its
# Cyrillic letter; a Latin word keeps them.
LATIN_TO_CYRILLIC = {**_TWINS, **dict(zip("kmtnurb", "кмтпигь", strict=True))}
CYRILLIC_TO_LATIN = {
    **{cyrillic: latin for latin, cyrillic in _TWINS.items()},
    **dict(zip("іІјЈѕЅкһԁԛԝӏ", "iIjJsSkhdqwl", strict=True)),
}
# Greek (and a few Armenian) letters drawn like Latin ones; read as those in a word of Latin or
# Cyrillic letters, where a Greek word stays Greek.
_FOREIGN_TO_LATIN = dict(
    zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαοριυκντχγϲօսհ", "ABEZHIKMNOPTYXaopiukvtxycouh", strict=True)
)
# Letters drawn blank: a person puts one for a space, or inside a word.
BLANKS = frozenset("\u3164\u2800\u115f\u1160\uffa0\u2028\u2029")
_WORD = re.compile(r"[^\W_]+")
_SPACES = re.compile(r"\s+")


def _script(char: str) -> str:
    if "a" <= char.lower() <= "z":
        return "latin"
    if "\u0400" <= char <= "\u052f":
        return "cyrillic"
    return ""


def invisible(char: str) -> bool:
    """A format character or a combining mark: nothing a reader sees as a letter."""
    return unicodedata.category(char) in ("Cf", "Mn", "Me")


def visible(text: str, *, blanks: str = " ") -> str:
    """``text`` in NFKC without invisible characters, each blank-drawn letter as ``blanks``."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(blanks if c in BLANKS else c for c in text if not invisible(c))


def word_alphabet(word: str) -> str:
    """ "latin", "cyrillic" or "" (another alphabet, or no letter): the alphabet ``word`` is
    read in (see the module docstring)."""
    letters = [_script(c) for c in word]
    latin, cyrillic = letters.count("latin"), letters.count("cyrillic")
    if not latin and not cyrillic:
        return ""
    only_latin = any(
        s == "latin" and c not in LATIN_TO_CYRILLIC for c, s in zip(word, letters, strict=True)
    )
    only_cyrillic = any(
        s == "cyrillic" and c not in CYRILLIC_TO_LATIN for c, s in zip(word, letters, strict=True)
    )
    if only_cyrillic != only_latin:
        return "cyrillic" if only_cyrillic else "latin"
    if cyrillic != latin:
        return "cyrillic" if cyrillic > latin else "latin"
    return "cyrillic" if only_cyrillic else "latin"


def fold_word(word: str, extra: dict[str, dict[str, str]] | None = None) -> str:
    """``word`` in the one alphabet it is read in; ``extra`` maps more characters by that
    alphabet (moderation's digits for letters: ``passw0rd``)."""
    if any(_script(c) for c in word):
        word = "".join(_FOREIGN_TO_LATIN.get(c, c) for c in word)
    alphabet = word_alphabet(word)
    if not alphabet:
        return word  # a number, or another alphabet: as it is
    letters = LATIN_TO_CYRILLIC if alphabet == "cyrillic" else CYRILLIC_TO_LATIN
    more = (extra or {}).get(alphabet, {})
    return "".join(letters.get(c, more.get(c, c)) for c in word)


def alphabets(text: str) -> str:
    """Each word of ``text`` in one alphabet (``fold_word``)."""
    return _WORD.sub(lambda found: fold_word(found.group(0)), text)


def skeleton(text: str) -> str:
    """What ``text`` looks like, for telling names apart: visible characters, blanks and runs of
    spaces one space, each word in one alphabet, case folded."""
    return _SPACES.sub(" ", alphabets(visible(text))).strip().casefold()
