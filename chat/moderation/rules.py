"""Moderation before anything else: prohibited requests are refused before any search or LLM.

Staff keep the rules in the admin (``chat.models.ModerationRule``): each rule is a kind
(credentials and secrets, personal data of colleagues, abuse, other), regular expressions and
a list of words or phrases. A question matching an enabled rule is answered with the kind's
fixed polite sentence in the question's language (``chat.answer.wording``), never searched, never sent
to an LLM, and journaled with the rule and the words that matched (``Message.moderation``).

Matching reads the question as stored (personal data already redacted), with runs of blanks
made one space and ё read as е; then again with its disguises taken off (``chat.moderation.folding``:
zero-width and blank-drawn characters, look-alike letters of other alphabets, fullwidth forms,
digits for letters, letters spelled apart, words broken by hyphens or stars, Russian in Latin
letters), so ``pаsswоrd`` with Cyrillic letters is read as ``password``. Patterns are searched case-insensitively; ``(?-i:...)`` turns
case back on for a part, so ``(?-i:[А-ЯЁ][а-яё]+)`` matches a capitalised word such as a
surname. Terms match whole words only: "пароль" in a term list would not match "парольная",
and a ``*`` at the end of a word matches any ending. A pattern that does not compile is skipped
with a warning (the admin refuses to save one).
"""

from __future__ import annotations

from chat.answer import wording
from chat.models import ModerationRule
from chat.moderation.folding import readings as disguises_off
from chat.moderation.match import Verdict, match_rule, normalise


def check(question: str) -> Verdict | None:
    """The first enabled rule (in the admin's order) that refuses ``question``; None when the
    question may be answered."""
    text = normalise(question)
    if not text:
        return None
    # The question as typed, then with its disguises taken off (chat.moderation.folding):
    # zero-width and blank characters, look-alike letters, fullwidth forms, leetspeak, letters
    # spelled apart, words broken inside, Russian in Latin letters.
    readings = [text]
    for reading in map(normalise, disguises_off(question)):
        if reading and reading not in readings:
            readings.append(reading)
    for rule in ModerationRule.objects.filter(enabled=True):
        for reading in readings:
            verdict = match_rule(rule, reading)
            if verdict is not None:
                return verdict
    return None


def reply(verdict: Verdict, question: str) -> str:
    """The fixed polite sentence of the rule's kind, in the question's language."""
    kind = verdict.kind if verdict.kind in ("credentials", "personal_data", "abuse") else "other"
    return wording.say(f"moderation_{kind}", wording.language_of(question))
