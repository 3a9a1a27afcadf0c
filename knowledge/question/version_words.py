"""The words of the version grammar (``knowledge.question.mentions``), by lemma.

Each set is a class of the grammar people use to name a version: ordinals, the ends of a
history, the neighbours of a version, the nouns that name a version, the words that point back
at a day already named. Russian words are pymorphy3's normal forms (ё as е, what
``nlp.lemma`` gives); English has no lemmatiser in the portal, so its forms are listed.
"""

from __future__ import annotations

# The n-th version (of a day, or of the whole history); negative: counted from the end.
ORDINALS = {
    "первый": 1, "второй": 2, "третий": 3, "четвертый": 4, "пятый": 5, "шестой": 6,
    "седьмой": 7, "восьмой": 8, "девятый": 9, "десятый": 10,
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10,
    "последний": -1, "last": -1, "предпоследний": -2, "penultimate": -2,
}  # fmt: skip
# The newest and the oldest version, whatever the day (of a day when one is named).
LATEST = frozenset(
    {"текущий", "актуальный", "свежий", "действующий", "новейший", "latest", "newest", "current",
     "freshest"}
)  # fmt: skip
FIRST = frozenset(
    {"исходный", "изначальный", "первоначальный", "original", "initial", "earliest", "oldest"}
)
# The same only after a superlative word ("самая новая", "самая ранняя", "most recent").
SUPERLATIVE = frozenset({"самый", "сам", "наиболее", "most", "very"})
LATEST_AFTER_SUPERLATIVE = frozenset({"новый", "поздний", "recent"})
FIRST_AFTER_SUPERLATIVE = frozenset({"ранний", "старый"})
# A neighbour of another version: the one before it, the one after it.
PREVIOUS = frozenset(
    {"предыдущий", "прошлый", "прежний", "предшествовать", "предшествующий", "previous", "prior",
     "preceding"}
)  # fmt: skip
NEXT = frozenset({"следующий", "последующий", "next", "following", "subsequent", "succeeding"})
AFTER = frozenset({"после", "вслед", "after"})
BEFORE = frozenset({"перед", "до", "before"})  # "до" only before a version noun ("до версии …")
UNTIL = "до"
IMMEDIATELY = frozenset({"сразу", "непосредственно", "прямо", "right", "immediately", "just",
                         "directly"})  # fmt: skip
# Nouns that name a version; and nouns a version phrase may stand on ("последние изменения").
VERSION_NOUNS = frozenset(
    {"версия", "редакция", "ревизия", "коммит", "правка", "version", "versions", "revision",
     "revisions", "commit", "commits", "edit", "edits"}
)  # fmt: skip
NAMING_VERSION = VERSION_NOUNS | {"committed"}  # the question names a version or a commit
CHANGE_NOUNS = frozenset({"изменение", "обновление", "change", "changes", "update", "updates"})
ONE = frozenset({"one", "ones"})  # "the one before", "the third one"
# "того же дня", "этого дня", "the same day", "that day"; "из них", "of them".
DAY = frozenset({"день", "day"})
THIS = frozenset({"тот", "этот", "same", "that", "this"})
THEM = frozenset({"они", "them", "these", "those"})
OUT_OF = frozenset({"из", "of"})
# A pronoun standing for a version named before: "перед ней", "the one after it".
PRONOUNS = frozenset({"он", "она", "оно", "it"})
# What stands between a version phrase and its date: "от", "of", "dated", "committed on".
DATED = frozenset({"от", "of", "from", "dated", "on", "committed", "made", "за"})
COORDINATION = frozenset({"и", "или", "and", "or"})
COUNTING, BY = frozenset({"счет"}), "по"  # "вторая по счёту правка": the order it counts in
FILLERS = frozenset({"the", "a", "an", "s", "же", "год", "г", "year", "номер", "number", "no"})
# Words beside a commit id of digits only ("ревизия 1234567").
SHA_WORDS = frozenset({"sha", "hash", "хеш", "хэш", "ревизия", "коммит", "commit", "commits"})
