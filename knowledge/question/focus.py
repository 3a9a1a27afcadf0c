"""What a question asks for: its focus (the thing asked about) and the kind of fact asked.

Read from the dependency parse, not from phrases: the focus is the noun a "какой / который /
сколько / which / how many" attaches to, with its modifiers; for "кто / что / где / когда /
почему / как" it is the verb the question word depends on, with the verb's own object or
subject as the thing asked about. The kind of fact follows from the question word and, for
"какой X" / "сколько X", from the class of X (a measure, a date, a place: ``MEASURES``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from knowledge.text.nlp import Parsed
from knowledge.text.words import (
    DEMONSTRATIVES,
    FUNCTION_POS,
    INTERROGATIVES_EN,
    INTERROGATIVES_RU,
    is_stop,
)

# Nouns (and a few verbs) that name a measure, by the kind of value they take ("какая цена
# доставки", "за какое время", "какой ширины", "в каком году"). Each class is the name of
# a quantity, the words a dictionary defines by it and the units its values are given in, from
# the source named beside it; never words picked from questions. The amount of some other
# thing ("бюджет", "зарплата") is money but not a price: no source puts it in the class.
MEASURES = {
    # The quantity and its dictionary synonyms (Ожегов: "стоимость" is "цена, денежное
    # выражение ценности"; "стоить" is "иметь какую-нибудь цену").
    "price": {"цена", "стоимость", "стоить", "price", "cost"},
    # The unit of relative quantities in the SI Brochure (9th ed., 5.4.7) and ГОСТ 8.417-2002,
    # and the quantity it measures, a fraction ("доля").
    "percent": {"процент", "доля", "percent", "percentage"},
    # "Срок" is a span and a moment in the dictionary (Ожегов: "определённый промежуток
    # времени"; "момент, к которому должно совершиться что-нибудь"): either value answers it.
    "deadline": {"срок", "дедлайн", "deadline"},
    # ISO 80000-3's names of the quantity (time, duration, period), "длиться" (Ожегов defines
    # it by "продолжаться"), English "how long", and the units of an ISO 8601 duration up to a
    # month (a year is asked as a year: "в каком году").
    "duration": {"время", "длительность", "продолжительность", "период", "длиться",
                 "минута", "секунда", "час", "день", "неделя", "месяц", "duration", "long"},
    # ISO 80000-3 and 80000-4 quantities of space and weight, and their common name "size".
    "size": {"размер", "объем", "вес", "длина", "ширина", "высота", "size"},
    # ISO 8601's calendar date and its parts ("число" is the day of the month).
    "year": {"год", "year"},
    "date": {"дата", "число", "date", "day"},
    # The portal's own vocabulary: documents have versions.
    "version": {"версия", "version"},
    # A person is named by a surname (the dictionary's grammeme Surn, "фамилия") or asked by
    # the role Dublin Core calls the creator of a document ("автор").
    "person": {"автор", "фамилия", "author"},
    # The named-entity types whose spans answer these kinds (OntoNotes 5.0: GPE "countries,
    # cities, states", LOC "locations"; ORG "companies, agencies, institutions"), and the
    # address (vCard's ADR: street, locality, country).
    "place": {"город", "страна", "место", "адрес", "city", "country", "place"},
    "organisation": {"компания", "организация", "company", "organisation", "organization"},
}  # fmt: skip
_MEASURE_OF = {word: kind for kind, words in MEASURES.items() for word in words}
# The units a value of a kind is given in, those whose notation ``knowledge.question.values``
# reads: the units of time of ГОСТ 8.417-2002 (annex, units outside the SI allowed with it),
# its millimetre and centimetre, the inch, pixel and byte with its multiples of ОК 015-94
# (ОКЕИ), the currencies of ОК 014-2000 (ОКВ) and the percent. "В пикселях", "в евро" (the
# locative) asks for a value given in that unit; "в неделю" (the accusative) is a rate.
UNITS = {
    "price": {"рубль", "доллар", "евро"},
    "percent": {"процент"},
    "duration": {"миллисекунда", "секунда", "минута", "час", "сутки", "день", "неделя", "месяц"},
    "size": {"байт", "килобайт", "мегабайт", "гигабайт", "терабайт", "дюйм", "пиксель",
             "миллиметр", "сантиметр"},
}  # fmt: skip
_UNIT_OF = {word: kind for kind, words in UNITS.items() for word in words}


def is_measure(lemma: str) -> bool:
    """A noun (or verb) that names a measure or a kind of value, not a topic: "дата", "цена"."""
    return lemma in _MEASURE_OF


# Question words by what they ask (Russian lemmas and English words).
# "кто", "где", "когда" ask for a role, a location or a moment as often as for a person's
# name, a city or a date ("кто отвечает за релиз", "где лежит конфигурация", "когда
# запускать сборку"): the value they take is left open unless a measure noun names it, or
# "когда" asks when something happened once (``_happened``: a moment, a date or a year).
_ASKS = {
    "сколько": "number",
    "почему": "reason", "зачем": "reason", "отчего": "reason", "why": "reason",
}  # fmt: skip
_DETERMINERS = {"какой", "который", "чей", "каков", "what", "which"}
_QUESTION_WORDS = (INTERROGATIVES_RU | INTERROGATIVES_EN) - {"ли"}
_MODIFIERS = {"amod", "nmod", "compound", "appos", "flat", "flat:name", "flat:foreign", "nummod"}


@dataclass(frozen=True)
class Focus:
    """The focus of a question: the token asked about, its phrase, and what it asks."""

    head: int = -1  # token index, -1 when the question has no focus
    lemma: str = ""
    phrase: tuple[str, ...] = ()  # lemmas of the focus and its modifiers
    text: str = ""
    asks: str = ""  # the question word ("сколько", "what" ...), "" for none
    kind: str = ""  # the kind of fact asked (number, price, date, person, reason ...), ""
    # What the value is of, when the focus names a measure: "на какой день перенесли
    # релиз" -> "релиз"; "время сборки проекта" -> "сборка".
    topic: str = ""
    # A demonstrative determines it ("сколько занимает такая сборка"): it points back at what
    # the question said before, and names no topic of its own.
    anaphoric: bool = False

    def as_dict(self) -> dict:
        return {"lemma": self.lemma, "phrase": list(self.phrase), "text": self.text,
                "asks": self.asks, "kind": self.kind, "topic": self.topic,
                "anaphoric": self.anaphoric}  # fmt: skip


def find_focus(tokens: list[Parsed]) -> Focus:
    """The focus of a parsed Russian question (see the module docstring)."""
    wh = _question_word(tokens)
    if wh < 0:
        return _root_focus(tokens)
    # "Чем" asks as itself ("чем отличается"), not as the "что" it declines from.
    word = "чем" if tokens[wh].text.casefold() == "чем" else tokens[wh].lemma
    if word in _DETERMINERS or (word in ("сколько", "насколько") and tokens[wh].rel == "nummod"):
        head = tokens[wh].head
        if head >= 0 and tokens[head].pos in ("NOUN", "PROPN"):
            kind = _MEASURE_OF.get(tokens[head].lemma, "number" if word == "сколько" else "")
            return _focus(tokens, head, word, kind)
    if word in ("сколько", "насколько"):
        head = _above_documents(tokens, tokens[wh].head)
        if head >= 0:
            # The verb it counts with, or the one that verb depends on ("сколько будет стоить
            # продлить": a price), says which measure.
            above = tokens[head].head
            # "Сколько" asks a quantity, a number at least. "Насколько" asks a degree
            # ("насколько удобен", "насколько точен": a word may answer it), a number only
            # when a measure names it or a comparative asks by how much ("насколько тяжелее").
            counted = word == "сколько" or dict(tokens[head].feats).get("Degree") == "Cmp"
            kind = (
                _MEASURE_OF.get(tokens[head].lemma)
                or (_MEASURE_OF.get(tokens[above].lemma) if above >= 0 else None)
                or ("number" if counted else "")
            )
            return _focus(tokens, _topic_of(tokens, head, wh), word, kind)
    kind = _ASKS.get(word, "")
    if word == "когда" and _happened(tokens, tokens[wh].head):
        kind = "moment"
    if word == "что" and _defines(tokens, wh):
        noun = next(
            (i for i in range(wh + 2, len(tokens)) if tokens[i].pos in ("NOUN", "PROPN", "X")), -1
        )
        return _focus(tokens, noun, word, "definition")
    if word == "как":
        # "Как его зовут", "как называется X": a name is asked; else a way of doing.
        verb = tokens[tokens[wh].head].lemma if tokens[wh].head >= 0 else ""
        kind = {"звать": "person", "называться": "definition"}.get(verb, "procedure")
    head = tokens[wh].head
    if head < 0:
        return _root_focus(tokens, asks=word, kind=kind)
    return _focus(tokens, _topic_of(tokens, head, wh), word, kind)


def _happened(tokens: list[Parsed], verb: int) -> bool:
    """The verb says that something happened once: a perfective verb in the past tense
    ("когда вышла версия", "когда был утверждён"). "Когда" with it asks for a moment, a date or
    a year; with any other verb ("когда запускать", "когда проводится") for a condition."""
    if verb < 0:
        return False
    feats = dict(tokens[verb].feats)
    return (
        tokens[verb].pos in ("VERB", "AUX")
        and feats.get("Tense") == "Past"
        and feats.get("Aspect") == "Perf"
    )


def asking_sentence(tokens: Sequence[Parsed]) -> int:
    """The sentence that asks: the last one ending with "?", else the last (0 for none); the
    sentences before it set the scene."""
    ends = [t.sentence for t in tokens if t.text == "?"]
    return ends[-1] if ends else (tokens[-1].sentence if tokens else 0)


def other_kinds(tokens: list[Parsed], focus: Focus) -> list[str]:
    """The kinds of fact the other questions of the same sentence ask ("когда вышел релиз и
    сколько в нём исправлений": a number too). A second "когда" is left open: measured on
    kb_dev, reading it as a moment refused a question its documents answer in other words
    and caught no trick question that the first one missed."""
    sentence = asking_sentence(tokens)
    kinds = []
    for i, token in enumerate(tokens):
        if token.sentence != sentence or i == focus.head or token.lemma != "сколько":
            continue
        head = token.head
        noun = head if head >= 0 and tokens[head].pos in ("NOUN", "PROPN") else -1
        kinds.append(_MEASURE_OF.get(tokens[noun].lemma, "number") if noun >= 0 else "number")
    return kinds


def unit_kinds(tokens: list[Parsed]) -> list[str]:
    """The kinds of value the question asks for by the unit it wants them in: "ширина в
    пикселях" asks for a size, "штраф в евро" for a price (``UNITS``; "в" with the unit in
    the locative)."""
    return [
        _UNIT_OF[token.lemma]
        for i, token in enumerate(tokens)
        if token.lemma in _UNIT_OF
        and i > 0
        and tokens[i - 1].lemma == "в"
        and dict(token.feats).get("Case") == "Loc"
    ]


def find_focus_english(words: list[str]) -> Focus:
    """The focus of an English question, by word order (no parser): the noun after "which /
    what / how many", else the first content word after the question word."""
    low = [w.casefold() for w in words]
    for i, word in enumerate(low):
        if word in ("how",) and i + 1 < len(low) and low[i + 1] in ("many", "much", "long"):
            kind = "duration" if low[i + 1] == "long" else "number"
            noun = next((w for w in low[i + 2 :] if not is_stop(w)), "")
            return Focus(-1, noun, (noun,) if noun else (), noun, word, kind)
        if word in _ASKS or word in _DETERMINERS or word == "how":
            content = [w for w in low[i + 1 :] if not is_stop(w) and w.isalpha()]
            noun = content[0] if content else ""
            kind = _MEASURE_OF.get(noun) or _ASKS.get(word, "procedure" if word == "how" else "")
            return Focus(-1, noun, tuple(content[:2]), noun, word, kind)
    content = [w for w in low if not is_stop(w) and w.isalpha()]
    return Focus(-1, content[0], tuple(content[:2]), content[0]) if content else Focus()


def _question_word(tokens: list[Parsed]) -> int:
    """The question word that asks: in the (last) sentence ending with "?", the first one
    of the main clause (its head is the root, or the noun it determines), else its first;
    "который" only as a determiner ("который час"): elsewhere it opens a relative clause."""
    sentence = asking_sentence(tokens)
    found = [
        i
        for i, t in enumerate(tokens)
        if t.sentence == sentence
        and (t.lemma in _QUESTION_WORDS or t.text.casefold() in _QUESTION_WORDS)
        and not (t.lemma == "который" and t.rel != "det")
    ]
    if not found:
        return -1
    for i in found:
        head = tokens[i].head
        if head < 0 or tokens[head].head < 0 or tokens[i].rel == "det":
            return i
    return found[0]


def _defines(tokens: list[Parsed], wh: int) -> bool:
    """ "Что такое X", "что значит X", "что означает X": a definition is asked."""
    after = [t.lemma for t in tokens[wh + 1 : wh + 3]]
    return bool(after) and after[0] in ("такой", "значить", "означать", "называться")


def _above_documents(tokens: list[Parsed], head: int) -> int:
    """``head``, or the word above it while it names the documents ("сколько в документации
    занимает":
    the parser may hang "сколько" on "документации"; the question counts with the verb)."""
    while head >= 0 and _names_documents(tokens[head]):
        head = tokens[head].head
    return head


def _names_documents(token: Parsed) -> bool:
    """A word that names the documents or a function word, by its lemma or as written (the
    lemma may hide it: "вики" -> "вика")."""
    return token.pos in ("NOUN", "PROPN") and (is_stop(token.lemma) or is_stop(token.text))


def _topic_of(tokens: list[Parsed], verb: int, wh: int) -> int:
    """The thing a question verb is about: its object or subject other than the question
    word (a noun, not one naming the documents), else the verb itself."""
    order = ("nsubj", "obj", "nsubj:pass", "appos", "iobj", "obl", "nmod")
    found = [
        (order.index(t.rel), i)
        for i, t in enumerate(tokens)
        if t.head == verb
        and i != wh
        and t.pos in ("NOUN", "PROPN")
        and t.rel in order
        and not _names_documents(t)
    ]
    return min(found)[1] if found else verb


def _root_focus(tokens: list[Parsed], *, asks: str = "", kind: str = "") -> Focus:
    """No question word: the sentence's root if it is a content word, else its first noun."""
    root = next((i for i, t in enumerate(tokens) if t.head < 0 and t.pos not in FUNCTION_POS), -1)
    if root >= 0 and tokens[root].pos in ("NOUN", "PROPN", "ADJ"):
        return _focus(tokens, root, asks, kind)
    noun = next((i for i, t in enumerate(tokens) if t.pos in ("NOUN", "PROPN")), root)
    return _focus(tokens, noun, asks, kind) if noun >= 0 else Focus(asks=asks, kind=kind)


def _focus(tokens: list[Parsed], head: int, asks: str, kind: str) -> Focus:
    if head < 0:
        return Focus(asks=asks, kind=kind)
    members = [head] + [
        i
        for i, t in enumerate(tokens)
        if t.head == head and t.rel in _MODIFIERS and not is_stop(t.lemma, t.pos)
    ]
    members.sort()
    token = tokens[head]
    if not kind:
        kind = _MEASURE_OF.get(token.lemma, "")
    return Focus(
        head=head,
        lemma=token.lemma,
        phrase=tuple(tokens[i].lemma for i in members),
        text=" ".join(tokens[i].text for i in members),
        asks=asks,
        kind=kind,
        topic=_measured(tokens, head) if token.lemma in _MEASURE_OF else "",
        anaphoric=any(t.head == head and t.lemma in DEMONSTRATIVES for t in tokens),
    )


def _measured(tokens: list[Parsed], head: int) -> str:
    """The thing a measure noun measures: its own noun dependent ("время сборки"), else the
    subject or object of the verb it depends on ("на какой день перенесли релиз")."""
    own = [t for t in tokens if t.head == head and t.pos in ("NOUN", "PROPN") and t.rel == "nmod"]
    if own:
        return own[0].lemma
    verb = tokens[head].head
    if verb < 0:
        return ""
    order = ("nsubj", "nsubj:pass", "obj", "csubj")
    found = [
        (order.index(t.rel), t.lemma)
        for i, t in enumerate(tokens)
        if t.head == verb and i != head and t.pos in ("NOUN", "PROPN") and t.rel in order
    ]
    return min(found)[1] if found else ""
