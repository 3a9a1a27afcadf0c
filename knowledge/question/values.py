"""What a value of each kind of fact looks like in a text: a number, a price, a percent, a
duration, a size, a date, a year, a version, a person, an organisation, a place, a name.

Classes of the notation (units, currencies, month names, initials), not of any question. The
answerability check asks whether a passage about the question's focus holds a value of the kind
asked (``knowledge.question.Question.kinds``); the extractive answer puts the sentence that does
first.
"""

from __future__ import annotations

import re

from knowledge.text import nlp

_NUMBER = r"\d+(?:[.,:]\d+)*"
# Russian cardinal and collective numerals in their cases (the declension tables of the
# Russian grammar, Русская грамматика, АН СССР 1980, the numeral): "трёх", "пятью",
# "двадцати", "сотни", "пятерых"; and no other word that begins like one ("триггер",
# "стоимость", "однако", "семья").
_NUMERALS = (
    r"\b(?:(?:один|одн(?:а|о|ого|ой|ому|им|ом|ою))|дв(?:а|е|ух|ум|умя)|тр(?:и|[её]х|[её]м|емя)|"
    r"четыр(?:е|[её]х|[её]м|ьмя)|(?:пят|шест|сем|девят|десят)(?:ь|и|ью)|восем(?:ь|ью)|восьм(?:и|ью)|"
    r"(?:одиннадцат|двенадцат|тринадцат|четырнадцат|пятнадцат|шестнадцат|семнадцат|"
    r"восемнадцат|девятнадцат|двадцат|тридцат)(?:ь|и|ью)|сорок(?:а)?|"
    r"(?:пят|шест|сем|восем)ь?десят|(?:пяти|шести|семи|восьми)десяти|девяност[оа]|сто|ста|"
    r"двести|триста|четыреста|(?:пять|шесть|семь|восемь|девять)сот|"
    r"(?:двух|тр[её]х|четыр[её]х|пяти|шести|семи|восьми|девяти)сот(?:ам|ами|ах)?|"
    r"сот(?:ня|ни|ню|ней|ен|ням|нями|нях)|"
    r"тысяч(?:а|и|у|ей|ью|ами|ах|ам)?|миллион(?:а|ов|ы|ам|ами|ах)?|"
    # the collective numerals ("двое", "пятерых") and the tens and dozens counted as nouns
    r"(?:дво|тро)(?:е|их|им|ими)|(?:четвер|пятер|шестер|семер)(?:о|ых|ым|ыми)|"
    r"десят(?:ок|ка|ки|ков|кам|ками|ках)|дюжин(?:а|ы|у|ой))\b"
)
# What a value of each kind looks like in a text: units, currencies, dates (classes of the
# notation, not of any question).
_VALUES = {
    "price": rf"{_NUMBER}\s*(?:₽|руб|р\.|\$|€|usd|eur|долл|евро|тыс|млн)|[$€]\s*{_NUMBER}|бесплатн|free",
    "percent": rf"{_NUMBER}\s*(?:%|процент|percent)",
    "duration": r"\b\d{1,3}(?:[.,]\d+)?\s*(?:-|–|до)?\s*(?:\d{1,3}\s*)?(?:мс|сек|мин|час|дн|день|"
    r"сут|недел|месяц|лет|год|ms|sec|second|min|hour|day|week|month|year)|"
    r"(?:несколько|пару|нескольк\w*)\s+(?:минут|часов|дней|недель|месяцев)",
    "size": rf"{_NUMBER}\s*(?:кб|мб|гб|тб|(?:кило|мега|гига|тера)?байт|kb|mb|gb|tb|bytes?|дюйм|"
    r"px|пикс|inch|см|мм|cm|mm)",
    "date": r"\b\d{1,2}[./]\d{1,2}[./](?:19|20)\d{2}\b|\b\d{4}-\d{2}-\d{2}\b|"
    r"\b\d{1,2}\s+(?:январ|феврал|март|апрел|ма[яй]|июн|июл|август|сентябр|октябр|ноябр|декабр|"
    r"jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)|(?:january|february|march|april|may|june|"
    r"july|august|september|october|november|december)\s+\d{1,2}\b",
    "year": r"\b(?:19|20)\d{2}\b",
    "version": r"\b\d+(?:\.\d+)+\b|\bv\d+|верси\w*\s+\d+|version\s+\d+|\bapi\s*\d+",
    "number": rf"\b{_NUMBER}\b|{_NUMERALS}|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|"
    r"hundred)\b",
    "person": r"\b[А-ЯЁA-Z]\.\s*(?:[А-ЯЁA-Z]\.\s*)?[А-ЯЁA-Z][а-яёa-z]+|"
    r"\b[А-ЯЁ][а-яё]+\s+[А-ЯЁ]\.\s*(?:[А-ЯЁ]\.)?",
    "name": r"«[^»]{2,60}»|\"[^\"]{2,60}\"|\b[A-Z][\w.+#-]*[A-Za-z0-9]\b",
}
VALUE_RE = {kind: re.compile(pattern, re.IGNORECASE) for kind, pattern in _VALUES.items()}
# The kinds a value of which may stand for another: a duration or a price is a number too,
# a date holds its year; an organisation or a person is written as a name.
ALSO = {
    "number": ("price", "percent", "duration", "size"),
    "year": ("date",),
    "deadline": ("duration", "date"),
    "moment": ("date", "year"),  # when something happened: a date, or the year
    "organisation": ("name",),
    "person": (),
    "place": (),
}
NER_KINDS = {"person": "PER", "organisation": "ORG", "place": "LOC"}


def checkable(kind: str) -> bool:
    """A kind of fact whose values a pattern (or the NER model) can find in a text."""
    return kind in VALUE_RE or kind in NER_KINDS or kind in ALSO


def holds_value(text: str, kind: str, *, asked: str = "") -> bool:
    """``text`` states a value of ``kind`` (or of a kind standing for it) that the question
    ``asked`` does not already give."""
    asked = asked.casefold()
    for each in (kind, *ALSO.get(kind, ())):
        pattern = VALUE_RE.get(each)
        if pattern is None:
            continue
        for match in pattern.finditer(text):
            if match[0].strip().casefold() not in asked:
                return True
    wanted = NER_KINDS.get(kind)
    if wanted:
        _, spans = nlp.parse(text[:600])
        return any(s.kind == wanted and s.text.casefold() not in asked for s in spans)
    return False
