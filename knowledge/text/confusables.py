"""Characters that look like others: what a person uses to pass one word or name off as another.
No Django in here.

The look-alikes are Unicode's own (UTS #39, "Unicode Security Mechanisms": its confusables.txt,
shipped as data by the ``confusable-homoglyphs`` package, with its script of every character),
not a hand list. One module for the three places that must see the same look-alikes:

- **source names** (``Source.objects.named_like``, ``look_alike``): the UTS #39 skeleton of the
  name, case folded, its words only: "Secret\u00a0A", "Secret A\u200b", "Ѕecret A" with a
  Cyrillic Ѕ, "Secret Α" with a Greek alpha, "Secret Ꭺ" (Cherokee), "Secret A." and
  "Secret-A" are all the name "Secret A";
- **moderation** (``chat.moderation.folding``, ``fold_word``): each word read in one alphabet,
  Latin or Cyrillic, its letters of the other (and Greek, Armenian, Cherokee ones) read as their
  look-alike in it; the letters only one alphabet has decide (``tokeн`` is Cyrillic), else the
  most letters; moderation adds the letters people write for others (``passw0rd``, an italic
  ``m`` for ``т``) through ``extra``;
- **the prompt fence** (``chat.answer.prompts.fence``, ``letter_view``): a ``</sourcеs>`` with
  a Cyrillic ``е`` is a closing tag.

Before any of them: Unicode compatibility forms (NFKC: fullwidth letters, a no-break space),
invisible characters (format characters: zero-width space and joiners, soft hyphen, word joiner,
byte order mark; stray combining marks) dropped, and letters drawn blank (HANGUL FILLER U+3164,
BRAILLE PATTERN BLANK U+2800 and their kin) read as a space or nothing (``visible``).
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from functools import cache

from confusable_homoglyphs import categories, confusables

# Letters drawn blank: a person puts one for a space, or inside a word.
BLANKS = frozenset("\u3164\u2800\u115f\u1160\uffa0\u2028\u2029")
_WORD = re.compile(r"[^\W_]+")


def _script(char: str) -> str:
    """ "latin" for a basic Latin letter, "cyrillic" for a Cyrillic one, "" otherwise."""
    if char.isascii() and char.isalpha():
        return "latin"
    if "\u0400" <= char <= "\u052f":
        return "cyrillic"
    return ""


@cache
def _prototypes() -> dict[str, str]:
    """Every character UTS #39 lists as confusable -> the prototype of its class. The data is
    the list's pairs (each character with its prototype), so a class is a connected group and
    its prototype the member the others point at (the most linked one)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for char, others in confusables.confusables_data.items():
        for other in others:
            graph[char].add(other["c"])
            graph[other["c"]].add(char)
    prototype: dict[str, str] = {}
    for start in graph:
        if start in prototype:
            continue
        group, todo = {start}, [start]
        while todo:
            for other in graph[todo.pop()]:
                if other not in group:
                    group.add(other)
                    todo.append(other)
        hub = min(group, key=lambda member: (-len(graph[member]), len(member), member))
        prototype.update((member, hub) for member in group if len(member) == 1)
    return prototype


def _tr39(text: str) -> str:
    table = _prototypes()
    return "".join(table.get(char, char) for char in unicodedata.normalize("NFD", text))


@cache
def _twins() -> dict[str, dict[str, str]]:
    """By alphabet, the characters of other scripts read as a letter of it: a class of UTS #39
    with letters of both alphabets gives each its twin of the same case; Greek, Armenian,
    Cherokee... letters are read as Latin ones."""
    classes: dict[str, list[str]] = defaultdict(list)
    for char, hub in _prototypes().items():
        classes[hub].append(char)
    twins: dict[str, dict[str, str]] = {"latin": {}, "cyrillic": {}}
    for members in classes.values():
        letters = [c for c in members if unicodedata.category(c) in ("Lu", "Ll")]
        for char in letters:
            script = _script(char)
            for alphabet in ("latin", "cyrillic"):
                if script == alphabet or (script == "" and alphabet == "cyrillic"):
                    continue
                if script == "" and categories.alias(char) in ("COMMON", "INHERITED"):
                    continue
                same = [
                    c for c in letters if _script(c) == alphabet and c.isupper() == char.isupper()
                ]
                # Of several, the letter of the alphabet proper (Russian's а, not Abkhaz ҽ).
                basic = [c for c in same if c.isascii() or "\u0401" <= c <= "\u0451"]
                if len(same) == 1 or len(basic) == 1:
                    twins[alphabet][char] = (basic or same)[0]
    return twins


def invisible(char: str) -> bool:
    """A format character or a combining mark: nothing a reader sees as a letter."""
    return unicodedata.category(char) in ("Cf", "Mn", "Me")


def visible(text: str, *, blanks: str = " ") -> str:
    """``text`` in NFKC without invisible characters, each blank-drawn letter as ``blanks``."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(blanks if c in BLANKS else c for c in text if not invisible(c))


def twin(char: str, alphabet: str, extra: dict[str, dict[str, str]] | None = None) -> str:
    """``char`` read as a letter of ``alphabet`` ("latin" or "cyrillic"), or ``char`` itself."""
    found = _twins()[alphabet].get(char)
    if found is None and extra:
        found = extra.get(alphabet, {}).get(char)
    return found or char


def mixed(word: str) -> bool:
    """A word of Latin and Cyrillic letters both (``cyкa``, ``parоль``)."""
    scripts = {_script(c) for c in word}
    return "latin" in scripts and "cyrillic" in scripts


def word_alphabet(word: str, extra: dict[str, dict[str, str]] | None = None) -> str:
    """ "latin", "cyrillic" or "" (another alphabet, or no letter): the alphabet ``word`` is
    read in (see the module docstring)."""
    letters = [_script(c) for c in word]
    latin, cyrillic = letters.count("latin"), letters.count("cyrillic")
    if not latin and not cyrillic:
        return ""

    def alone(script: str, other: str) -> bool:  # a letter of ``script`` without a twin
        return any(
            s == script and twin(c, other, extra) == c for c, s in zip(word, letters, strict=True)
        )

    only_latin, only_cyrillic = alone("latin", "cyrillic"), alone("cyrillic", "latin")
    if only_cyrillic != only_latin:
        return "cyrillic" if only_cyrillic else "latin"
    if cyrillic != latin:
        return "cyrillic" if cyrillic > latin else "latin"
    return "cyrillic" if only_cyrillic else "latin"


def fold_word(
    word: str, extra: dict[str, dict[str, str]] | None = None, *, alphabet: str = ""
) -> str:
    """``word`` in the one alphabet it is read in (or ``alphabet``, when given); ``extra`` maps
    more characters by that alphabet (moderation's digits for letters: ``passw0rd``)."""
    if any(_script(c) for c in word):
        word = "".join(c if _script(c) else twin(c, "latin") for c in word)
    alphabet = alphabet or word_alphabet(word, extra)
    if not alphabet:
        return word  # a number, or another alphabet: as it is
    return "".join(twin(c, alphabet, extra) for c in word)


def letter_view(text: str) -> str:
    """``text`` with each letter replaced by its Latin look-alike, one character for one (the
    positions stay those of ``text``): where a pattern finds a Latin word written with letters
    of other scripts."""
    latin = _twins()["latin"]
    return "".join(latin.get(c, c) for c in text)


def skeletons(text: str) -> frozenset[str]:
    """What ``text`` looks like, for telling names apart: UTS #39's skeleton of its visible
    characters with case folded before and after it, its words joined by one space (punctuation
    and blanks between or around them do not count). Twice: case folded first (UTS #39 draws a
    capital ``I`` as an ``l``, a small ``i`` as itself) and last (a Greek ``Β`` is a ``B``, its
    small ``β`` a ``ß``); two names look the same when one of their skeletons is the same."""
    seen = visible(text)
    first = _tr39(_tr39(seen.casefold()).casefold())
    last = _tr39(_tr39(seen).casefold())
    return frozenset(
        " ".join(_WORD.findall(unicodedata.normalize("NFC", x))) for x in (first, last)
    )


def look_alike(name: str, other: str) -> bool:
    """Whether two names look the same (``skeletons``)."""
    return bool(skeletons(name) & skeletons(other))
