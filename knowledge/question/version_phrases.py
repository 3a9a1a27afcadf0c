"""The words of a question as the version grammar reads them (``knowledge.question.mentions``):
each word's class, by its pymorphy3 normal forms (``version_words``), and the phrase an ordinal
or a neighbour word stands in.

A phrase is read forward from the ordinal: coordinated ordinals ("третья и пятая"), a version
noun ("редакция", "commit", "the one"), the words of a document's name after it ("редакция Wiki
Guide"), then its date ("от 9 ноября", "of 2021-11-09"), or words pointing back at a day ("того
же дня", "of that day", "из них"). Another noun first means the ordinal counts something
else ("первый раздел", "the last step"); nothing at all, that the noun is left out ("…хуже
пятой?").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from knowledge.question import version_words as vw
from knowledge.text.matching import normal_forms
from knowledge.text.words import FUNCTION_WORDS_EN, INTERROGATIVES_EN

ORDINAL_KINDS = frozenset({"ord", "latest", "first", "prev", "next"})
_NUMERIC_ORDINAL = re.compile(r"(\d{1,2})-?(?:[а-яё]{1,3}|st|nd|rd|th)")
_ASKING_CHANGES = re.compile(r"chang|differ|compar|added|removed", re.I)
_AFTER_NOUN = 4  # words of a document's name a version phrase may hold ("редакция Wiki Guide от")
_POS_KINDS = {"NOUN": "word", "PROPN": "word", "X": "word", "NUM": "word", "ADJ": "adj"}


@dataclass(frozen=True)
class Word:
    """A word of the question as the grammar reads it."""

    start: int
    stop: int
    text: str
    lemma: str
    pos: str = ""  # the tagger's part of speech (Russian); "" for a word read without one


@dataclass
class Item:
    """A word of the grammar, or a date, a commit id or a label (an atom)."""

    kind: str
    start: int
    stop: int
    value: object = None  # an ordinal, or the VersionRef of a date, commit id or label
    sentence: int = 0


@dataclass
class Phrase:
    """What an ordinal word stands in: a version phrase, a phrase about something else, or
    nothing (the noun left out: "…хуже пятой?"); its date or its "same day" words."""

    about: str  # version | other | elided
    end: int  # the index of its last item
    date: int | None = None
    same_day: int | None = None


def forms(word: Word) -> frozenset[str]:
    """The word's normal forms (``matching.normal_forms``) and the lemma its parse gave."""
    return normal_forms(word.text) | {word.lemma}


def merged(words: list[Word]) -> list[Word]:
    """ "2nd", which the tokenizer cuts in two, as one word."""
    out: list[Word] = []
    for word in words:
        previous = out[-1] if out else None
        suffix = word.text.casefold() in ("st", "nd", "rd", "th")
        if previous and suffix and previous.text.isdigit() and previous.stop == word.start:
            text = previous.text + word.text
            out[-1] = Word(previous.start, word.stop, text, text.casefold(), previous.pos)
        else:
            out.append(word)
    return out


def items_of(words: list[Word], atoms: list[Item]) -> list[Item]:
    """The atoms and the words outside them, each of a kind of the grammar, with the index of
    the sentence it stands in."""
    items = list(atoms)
    previous = ""
    for word in words:
        if any(a.start <= word.start < a.stop or word.start <= a.start < word.stop for a in atoms):
            continue
        kind, value = _kind(word, previous)
        items.append(Item(kind, word.start, word.stop, value))
        if kind != "skip":
            previous = kind
    items.sort(key=lambda item: item.start)
    sentence = 0
    for item in items:
        item.sentence = sentence
        sentence += item.kind == "end"
    return _joined(items)


def _kind(word: Word, previous: str) -> tuple[str, object]:
    """The word's class in the grammar (``version_words``), or its part in a phrase."""
    text = word.text
    if not any(ch.isalnum() for ch in text):
        if text in ("«", "»", '"', "“", "”", "'"):
            return "skip", None
        return ("end" if text in (".", "?", "!", "…") else "comma"), None
    low = text.casefold()
    numeric = _NUMERIC_ORDINAL.fullmatch(low)
    if numeric:
        return "ord", int(numeric[1])
    lemmas = forms(word)
    for lemma in sorted(lemmas):
        if lemma in vw.ORDINALS:
            return "ord", vw.ORDINALS[lemma]
    for kind, words in _CLASSES:
        if lemmas & words:
            return kind, (vw.UNTIL if vw.UNTIL in lemmas else None)
    if vw.BY in lemmas:
        return "stop", vw.BY
    if previous == "most" and lemmas & vw.LATEST_AFTER_SUPERLATIVE:
        return "latest", None
    if previous == "most" and lemmas & vw.FIRST_AFTER_SUPERLATIVE:
        return "first", None
    if word.pos:
        return _POS_KINDS.get(word.pos, "stop"), None
    if low in FUNCTION_WORDS_EN or low in INTERROGATIVES_EN or _ASKING_CHANGES.match(low):
        return "stop", None
    return "word", None


_CLASSES = [
    ("latest", vw.LATEST),
    ("first", vw.FIRST),
    ("most", vw.SUPERLATIVE),
    ("prev", vw.PREVIOUS),
    ("next", vw.NEXT),
    ("after", vw.AFTER),
    ("before", vw.BEFORE),
    ("skip", vw.IMMEDIATELY | vw.FILLERS),
    ("noun", vw.VERSION_NOUNS | vw.CHANGE_NOUNS),
    ("one", vw.ONE),
    ("day", vw.DAY),
    ("this", vw.THIS),
    ("them", vw.THEM),
    ("pron", vw.PRONOUNS),
    ("of", frozenset({"of"})),
    ("outof", vw.OUT_OF),
    ("dated", vw.DATED),
    ("and", vw.COORDINATION),
    ("counting", vw.COUNTING),
]


def _joined(items: list[Item]) -> list[Item]:
    """Words read together: "того же дня", "the same day", "that day" -> one "same day";
    "до" is "before" only before a version noun ("до редакции от 9 ноября", not "с 3 до 9 ноября")."""
    out: list[Item] = []
    for index, item in enumerate(items):
        said = [k for k, o in enumerate(out) if o.kind != "skip"]
        if item.kind == "day" and said and out[said[-1]].kind == "this":
            first = out[said[-1]]
            del out[said[-1] :]
            while out and out[-1].kind in ("this", "skip"):
                first = out.pop()
            out.append(Item("sameday", first.start, item.stop, sentence=item.sentence))
            continue
        if item.kind == "before" and item.value == vw.UNTIL and _until(items, index):
            item = replace(item, kind="stop")
        if item.kind == "counting":  # "третья по счёту правка"
            item = replace(item, kind="skip")
            if out and out[-1].value == vw.BY:
                out[-1] = replace(out[-1], kind="skip")
        out.append(item)
    return [replace(i, kind="word") if i.kind in ("this", "day") else i for i in out]


def _until(items: list[Item], index: int) -> bool:
    """ "до" not followed by a version noun."""
    following = next_index(items, index)
    return following is None or items[following].kind != "noun"


def next_index(items: list[Item], index: int) -> int | None:
    for j in range(index + 1, len(items)):
        if items[j].kind != "skip":
            return j
    return None


def phrase_at(items: list[Item], i: int) -> Phrase:
    """The phrase an ordinal word at ``i`` stands in (see ``Phrase``); a date right before it
    is its date when it has none after it ("2021-11-09's fourth and sixth versions")."""
    phrase = _phrase_after(items, i)
    if phrase.about != "other" and phrase.date is None and phrase.same_day is None:
        phrase.date = _date_before(items, i)
    return phrase


def _date_before(items: list[Item], i: int) -> int | None:
    j = i - 1
    while j >= 0 and (
        items[j].kind in ("skip", "most", "adj", *ORDINAL_KINDS)
        or (items[j].kind == "and" and j > 0 and items[j - 1].kind in ORDINAL_KINDS)
    ):
        j -= 1
    return j if j >= 0 and items[j].kind == "date" else None


def _phrase_after(items: list[Item], i: int) -> Phrase:
    noun, after_noun, j = False, 0, i + 1
    while j < len(items):
        kind = items[j].kind
        following = next_index(items, j)
        then = items[following].kind if following is not None else ""
        if kind in ("skip", "most") or (kind == "adj" and not noun):
            j += 1
        elif kind == "and" and not noun and then in ORDINAL_KINDS:
            j = following + 1  # "третья и пятая редакции": coordinated, one noun and one date
        elif kind == "and" and not noun and then in ("word", "adj"):
            return Phrase("other", j)  # "the original and the alternative version"
        elif kind == "noun":
            noun, j = True, j + 1
        elif kind == "one" and not noun:
            j += 1  # "the third one": the noun left out all the same
        elif kind == "date":
            return Phrase("version", j, date=j)
        elif kind == "sameday":
            return Phrase("version", j, same_day=j)
        elif kind in ("dated", "of", "outof") and then == "date":
            return Phrase("version", following, date=following)
        elif kind in ("dated", "of", "outof") and then in ("sameday", "them"):
            return Phrase("version", following, same_day=following)
        elif kind in ("word", "adj", "of") and noun and after_noun < _AFTER_NOUN:
            after_noun, j = after_noun + 1, j + 1  # the document's name: "версия ТЗ от …"
        elif kind in ("word", "adj") and not noun and _noun_after_name(items, j):
            j += 1  # the document's name before the noun: "the last Wiki Guide version"
        elif kind in ("word", "adj") and not noun:
            return Phrase("other", j)  # it counts something else: "первый раздел"
        else:
            break
    return Phrase("version" if noun else "elided", j - 1)


def _noun_after_name(items: list[Item], j: int) -> bool:
    """A version noun right after a few words of a name: "the last Wiki Guide version"."""
    for item in items[j : j + _AFTER_NOUN]:
        if item.kind == "noun":
            return True
        if item.kind not in ("word", "adj"):
            return False
    return False


def pointing(items: list[Item], phrase: Phrase) -> bool:
    """The phrase points back at a group ("из них", "of them")."""
    return phrase.same_day is not None and items[phrase.same_day].kind == "them"


def antecedent(items: list[Item], i: int) -> bool:
    """The last thing named before the word at ``i`` is a version, a date or a day: what an
    ordinal standing alone, or "из них", counts among ("было пять правок … сравни четвёртую с
    пятой"; not "четыре части … вторую из них")."""
    for item in reversed(items[:i]):
        if item.kind in ("noun", "date", "sha", "label", "sameday"):
            return True
        if item.kind == "word":
            return False
    return False


def governed(items: list[Item], i: int) -> int | None:
    """The reference a neighbour word at ``i`` is a neighbour of: "после редакции от 9 ноября",
    "the one right after 5e1f0a9", "следующая за третьей редакцией от 9 ноября"; None for none."""
    noun, after_noun = False, 0
    for j in range(i + 1, len(items)):
        kind = items[j].kind
        if kind in ("date", "sha", "label", "ord"):
            return j
        if kind in ("noun", "one"):
            noun = True
        elif kind in ("word", "adj") and noun and after_noun < _AFTER_NOUN:
            after_noun += 1
        elif kind not in ("skip", "most", "dated", "of", "after", "before"):
            return None
    return None
