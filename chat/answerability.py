"""The answerability check: does the best evidence cover what the question asks for?

Run before any answer, extractive or generated. Search already refused when no chunk passed
the minimum score; this looks at what did pass. Simple enough to explain, its features go
into ``ask --json`` (``answerability``) and the journal:

- **named things** of the question: identifiers (``OnResume``, ``MockDataStore``), Latin words
  in a Russian question (``iOS``, ``PostgreSQL``), abbreviations (``СУБД``), names in quotes
  («События»), figures (``4.5:1``). Each must appear in the evidence, or the answer is partial.
- **the kind of fact asked**: a number, a price, a duration, a percentage, a date, a version,
  a size, a person ("сколько", "сколько стоит", "за сколько минут", "какой процент", "на какую
  дату", "какая версия", "как зовут", "how many", "how much"). The evidence must hold a fact of
  that kind near the question's own words (its rarest words, or a named thing); else partial.

Outcomes: ``answer``; ``partial`` (the documents describe the topic but not the fact asked:
"В документах описано X, но не указано Y", with the nearest passages); ``refusal`` (nothing
passed the minimum score; decided by search, the canonical sentence, no LLM call).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from knowledge.versions.naming import stem

# What a question asks for, read from its wording (first match wins: the specific before the
# general). Each kind names the patterns that find such a fact in a text.
_ASKED = [
    (
        "price",
        r"сколько\s+(?:\w+\s+){0,2}сто(?:ит|ят|ило)|стоимост|цен[аыуе]\b|почём|"
        r"в какую сумму|какой бюджет|во сколько обош|зарплат|оклад|how much does|how much is|"
        r"\bcost|\bprice",
    ),
    ("percent", r"процент|\bдол[яюи]\b|percent|percentage"),
    (
        "duration",
        r"за сколько (?:минут|секунд|часов|дней|недель)|сколько (?:минут|секунд|часов|"
        r"дней|недель|месяцев|времени)|сколько по времени|как долго|как быстро|"
        r"длительност|время (?:ответа|простоя|отклика)|how long",
    ),
    (
        "size",
        r"размер\w* (?:в|письма|файла)|в (?:байтах|килобайтах|мегабайтах|дюймах|пикселях)|"
        r"при каком размере|диагонал|how big|how large",
    ),
    (
        "date",
        r"на какое число|на какую дату|какого числа|\bи когда\b|"
        r"до какой даты|какая дата|what date",
    ),
    ("year", r"в каком году|какого года|which year|what year"),
    ("version", r"как(?:ая|ой|ую) верси|минимальн\w* верси|which version|what version"),
    ("person", r"как зовут|\bкто (?:такой|автор|руковод)|фамили|\bwho\b"),
    (
        "number",
        r"сколько|какое количество|какого количества|какое число|какое максимальн|"
        r"какое минимальн|какая максимальн|какая минимальн|какой максимальн|"
        r"какой минимальн|минимальн\w* и максимальн|насколько|how many|how much|"
        r"maximum|minimum",
    ),
]
_ASKED_RE = [(kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in _ASKED]
# "Когда" asks for a date only when nothing else is asked ("Когда покупатель платит картой,
# как называются ..." asks for names).
_WHEN = re.compile(r"^\W*(?:когда|when)\b", re.IGNORECASE)
_OTHER_QUESTION = re.compile(
    r"\b(?:как|что|чем|какой|какая|какое|какие|кто|где|почему|зачем|сколько|how|what|which|who|why)\b",
    re.IGNORECASE,
)
_NUMBER = r"\d+(?:[.,:]\d+)*"
_FACTS = {
    "price": rf"{_NUMBER}\s*(?:₽|руб|р\.|\$|€|usd|eur|долл|евро|тыс|млн)|[$€]\s*{_NUMBER}|бесплатн|free",
    "percent": rf"{_NUMBER}\s*(?:%|процент)",
    "duration": r"\b\d{1,3}(?:[.,]\d+)?\s*(?:-|–|до)?\s*(?:\d{1,3}\s*)?(?:мс|сек|мин|час|дн|день|"
    r"сут|недел|месяц|лет|год|ms|sec|second|min|hour|day|week|month|year)|"
    r"(?:несколько|пару|нескольк\w*)\s+(?:минут|часов|дней|недель|месяцев)",
    "size": rf"{_NUMBER}\s*(?:кб|мб|гб|байт|kb|mb|gb|bytes?|дюйм|px|пикс|inch)",
    "date": r"\b\d{1,2}[./]\d{1,2}[./]\d{2,4}\b|\b\d{4}-\d{2}-\d{2}\b|"
    r"\b\d{1,2}\s+(?:январ|феврал|март|апрел|ма[яй]|июн|июл|август|сентябр|октябр|ноябр|декабр|"
    r"jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)|(?:january|february|march|april|may|june|"
    r"july|august|september|october|november|december)\s+\d{1,2}\b",
    "year": r"\b(?:19|20)\d{2}\b",
    "version": r"\b\d+(?:\.\d+)+\b|\bv\d+|верси\w*\s+\d+|version\s+\d+",
    "person": r"\b[А-ЯЁA-Z]\.\s*(?:[А-ЯЁA-Z]\.\s*)?[А-ЯЁA-Z][а-яёa-z]+|"
    r"\b[А-ЯЁ][а-яё]+\s+[А-ЯЁ][а-яё]+(?:ович|евич|овна|евна)\b",
    "number": rf"\b{_NUMBER}\b|\b(?:один|одн|два|две|три|четыр|пят|шест|сем|восем|девят|десят)\w*\b",
}
_FACT_RE = {kind: re.compile(pattern, re.IGNORECASE) for kind, pattern in _FACTS.items()}
WINDOW = 160  # characters around a question word in which the fact must stand

_IDENTIFIER = re.compile(
    r"\b(?:[A-Za-z]+[a-z][A-Z]\w*|\w*[A-Za-z]\w*\.\w*[A-Za-z]\w*|[A-Za-z]+_\w+|[A-Za-z][A-Za-z0-9+#-]*)\b"
)
_ABBREVIATION = re.compile(r"\b[А-ЯЁ]{2,6}\b")
_QUOTED = re.compile(r"«([^»]{2,40})»|\"([^\"]{2,40})\"")
_PLACEHOLDER = re.compile(r"\[(?:card|e-mail|phone|passport|INN|SNILS)\]")
_FIGURE = re.compile(r"\b\d+(?:[.,:]\d+)+\b|\b\d{4}(?:\s\d{4}){1,3}\b")
# Abbreviations that name the documents themselves, not a fact inside them.
_DOCUMENT_WORDS = {"тз", "пз", "пми", "тп", "гост", "вшэ"}
_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)


@dataclass
class Answerability:
    decision: str  # "answer" | "partial" | "refusal"
    reason: str
    asked: str = ""  # the kind of fact asked, "" when none
    fact_found: bool | None = None
    named: list[str] = field(default_factory=list)
    named_missing: list[str] = field(default_factory=list)
    focus: list[str] = field(default_factory=list)
    focus_found: list[str] = field(default_factory=list)
    best_score: float | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def asked_kind(question: str) -> str:
    """The kind of fact the question asks for, or "" (a definition, a how, a why ...)."""
    for kind, pattern in _ASKED_RE:
        if pattern.search(question):
            return kind
    if _WHEN.search(question) and not _OTHER_QUESTION.search(question):
        return "date"
    return ""


def named_things(question: str) -> list[str]:
    """Identifiers, Latin words in a Russian question, abbreviations, quoted names, figures."""
    russian = bool(_CYRILLIC.search(question))
    found: list[str] = [m[0] for m in _PLACEHOLDER.finditer(question)]
    question = _PLACEHOLDER.sub(" ", question)
    for match in _QUOTED.finditer(question):
        name = (match[1] or match[2]).strip()
        if name[:1].isupper() and len(name.split()) <= 3:  # a name, not a quoted phrase
            found.append(name)
    for match in _FIGURE.finditer(question):
        found.append(match[0])
    for match in _IDENTIFIER.finditer(question):
        word = match[0].strip("-+#")
        if (russian and len(word) >= 2) or is_identifier(word):
            found.append(word)
    for match in _ABBREVIATION.finditer(question):
        if match[0].casefold() not in _DOCUMENT_WORDS:
            found.append(match[0])
    unique: list[str] = []
    for thing in found:
        if thing.casefold() not in {u.casefold() for u in unique}:
            unique.append(thing)
    return unique


def is_identifier(word: str) -> bool:
    """CamelCase, dotted or snake_case words, and words mixing letters and digits: names
    that mean one thing (``OnResume``, ``Xamarin.Forms``, ``hse_api``, ``OAuth2``)."""
    return bool(re.search(r"[a-z][A-Z]|\w[._]\w|[A-Za-z]\d|\d[A-Za-z]", word))


def _present(thing: str, text: str) -> bool:
    """A named thing is in the text: as written (any case), or, for a word of several
    letters, by its stem (Russian endings: «События» - «событий»)."""
    low = text.casefold()
    if thing.casefold() in low:
        return True
    words = re.findall(r"\w+", thing)
    return bool(words) and all(
        len(w) >= 4 and re.search(r"\b" + re.escape(stem(w)), low) for w in words
    )


def _positions(term: str, text: str) -> list[int]:
    return [m.start() for m in re.finditer(re.escape(term.casefold()), text.casefold())]


def fact_near(kind: str, anchors: list[str], text: str, *, also: list[str] = ()) -> bool:
    """A fact of ``kind`` within ``WINDOW`` characters of one of the anchors in ``text``
    (with the words of ``also`` in that window too)."""
    pattern = _FACT_RE[kind]
    for anchor in anchors:
        for position in _positions(anchor, text):
            window = text[max(0, position - WINDOW) : position + len(anchor) + WINDOW]
            if all(w in window.casefold() for w in also) and pattern.search(window):
                return True
    return False


def check(
    question: str,
    evidence: list[str],
    *,
    focus: list[str],
    best_score: float | None = None,
    common: set[str] | frozenset[str] = frozenset(),
) -> Answerability:
    """Decide answer / partial from the evidence texts (the best sources, best first).

    ``focus`` are the question's content words as stems, rarest first (see ``focus_stems``);
    ``common`` the named things many chunks of the knowledge base hold ("Google", "Android"):
    a paraphrase may use them for what the page calls otherwise, so they need not be there.
    """
    text = "\n".join(evidence)
    named = [n for n in named_things(question) if n.casefold() not in _DOCUMENT_WORDS]
    missing = [
        n
        for n in named
        if _PLACEHOLDER.fullmatch(n) or (n.casefold() not in common and not _present(n, text))
    ]
    found_focus = [f for f in focus if re.search(r"\b" + re.escape(f), text.casefold())]
    kind = asked_kind(question)
    fact = None
    if kind:
        fact = _fact_stated(kind, named, missing, focus, found_focus, text)
    result = Answerability(
        decision="answer",
        reason="the evidence names what the question names",
        asked=kind,
        fact_found=fact,
        named=named,
        named_missing=missing,
        focus=focus,
        focus_found=found_focus,
        best_score=best_score,
    )
    if missing:
        result.decision = "partial"
        result.reason = "the documents found do not mention " + ", ".join(missing)
    elif kind and not fact:
        result.decision = "partial"
        result.reason = f"no {kind} stated near the question's words in the documents found"
    return result


def _fact_stated(
    kind: str, named: list[str], missing: list[str], focus: list[str], found: list[str], text: str
) -> bool:
    """A fact of the kind asked stands beside what the question is about: near every named
    thing, else where the question's two rarest words meet; the rarest word must be there."""
    if focus and focus[0] not in found:
        return False
    present = [n for n in named if n not in missing and not _PLACEHOLDER.fullmatch(n)]
    if present:
        return all(fact_near(kind, [n], text) for n in present)
    if not found:
        return False
    return fact_near(kind, found[:1], text, also=found[1:2])


def focus_stems(words: list[tuple[str, float]]) -> list[str]:
    """The question's content words as stems, rarest (highest idf) first."""
    ordered = sorted(words, key=lambda item: -item[1])
    stems: list[str] = []
    for word, _ in ordered:
        short = stem(word)
        if len(short) >= 3 and short not in stems:
            stems.append(short)
    return stems
