"""The guard before anything leaves for the LLM: personal data redaction and the kill switch.

Redaction covers e-mail addresses, phone numbers, payment card numbers (Luhn-checked) and
Russian passport numbers, plus SNILS and INN, and person names: the persons of the question's
reading (natasha's NER in Russian, a given name with a surname in English). A person the
knowledge base itself names (an author a page cites: "методика Гленфорда Майерса") is public,
not a colleague's personal data, and stays: redacting it would lose what the question is about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.conf import settings

from chat.models import ChatSettings
from knowledge.question import read
from knowledge.retrieval import chunk_frequencies

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+(?![\w-])")
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){13,19}(?!\d)")
_PHONE_CANDIDATE = re.compile(r"(?<![\w.+])\+?\(?\d[\d\s().-]{5,20}\d(?![\w]|\.\d)")
_PHONE_TAIL = re.compile(r"\d{3}[\s-]\d{2}[\s-]\d{2}$")
_DATE_LIKE = re.compile(r"^\d{4}-\d{2}-\d{2}$|^\d{1,2}[.-]\d{1,2}[.-]\d{2,4}$")
_PASSPORT = re.compile(
    r"(?i)(?:паспорт\w*|passport)(?:\s+(?:серии|серия|номер|№|no\.?|number))*[\s:№]*(\d{2}\s?\d{2}\s?\d{6}|[A-Z]{1,2}\d{6,8})"
)
_SNILS = re.compile(r"(?<!\d)\d{3}-\d{3}-\d{3}[ -]\d{2}(?!\d)")
_INN = re.compile(r"(?i)(?:инн|inn)[\s:№]*(\d{10}|\d{12})(?!\d)")


@dataclass
class Redacted:
    text: str
    kinds: list[str] = field(default_factory=list)


def _luhn(number: str) -> bool:
    digits = [int(d) for d in number if d.isdigit()]
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return len(digits) >= 13 and total % 10 == 0


def _looks_like_phone(candidate: str) -> bool:
    """Phone-shaped, not a date, a section number or an amount like "1 200 000"."""
    digits = sum(c.isdigit() for c in candidate)
    if not 7 <= digits <= 15 or _DATE_LIKE.match(candidate.strip()):
        return False
    compact = re.sub(r"\D", "", candidate)
    return (
        candidate.startswith("+")
        or "(" in candidate
        or bool(_PHONE_TAIL.search(candidate))
        or bool(
            re.fullmatch(r"[78]9\d{9}|9\d{9}", compact) and re.fullmatch(r"[\d\s-]+", candidate)
        )
        or (candidate.count("-") >= 2 and digits >= 10)
    )


def redact(text: str) -> Redacted:
    """Replace personal data with labelled placeholders; returns the kinds found."""
    if not settings.PII_REDACTION or not text:
        return Redacted(text)
    kinds: list[str] = []

    def sub(pattern: re.Pattern[str], label: str, value: str, check=None, group: int = 0) -> str:
        def replace(match: re.Match[str]) -> str:
            found = match.group(group)
            if check is not None and not check(found):
                return match.group(0)
            kinds.append(label)
            whole = match.group(0)
            return whole.replace(found, f"[{label}]") if group else f"[{label}]"

        return pattern.sub(replace, value)

    text = sub(_EMAIL, "e-mail", text)
    text = sub(_PASSPORT, "passport", text, group=1)
    text = sub(_INN, "INN", text, group=1)
    text = sub(_SNILS, "SNILS", text)
    text = sub(_CARD, "card", text, check=_luhn)
    text = sub(_PHONE_CANDIDATE, "phone", text, check=_looks_like_phone)
    text, persons = _redact_persons(text)
    kinds += ["person"] * persons
    return Redacted(text, sorted(set(kinds)))


def _redact_persons(text: str) -> tuple[str, int]:
    """Person names no document of the knowledge base names, replaced by "[person]"."""
    persons = read(text).persons()
    if not persons:
        return text, 0
    words = {e.text: re.findall(r"[^\W\d_]{2,}", e.text) for e in persons}
    known, _ = chunk_frequencies([w.casefold() for found in words.values() for w in found])
    redacted = 0
    for entity in sorted(persons, key=lambda e: -e.start):
        if any(known.get(w.casefold()) for w in words[entity.text]):
            continue  # named in the documents: public, and what the question is about
        text = text[: entity.start] + "[person]" + text[entity.stop :]
        redacted += 1
    return text, redacted


def chat_enabled() -> bool:
    """The kill switch: the environment can force the chat off; staff toggle it at run time."""
    if not settings.CHAT_ENABLED:
        return False

    return ChatSettings.current().chat_enabled
