"""Follow-up questions rewritten into a standalone question for retrieval.

"а в каком разделе это описано?" after "Как проводится тестирование функции X?" must search for
X. With an LLM, it rewrites; without one (or when its rewrite is unusable), a follow-up — a
short question with a pronoun or a leading "а/и/and" — is searched together with the previous
standalone question.
"""

from __future__ import annotations

import re

from chat.answer.prompts import REWRITE_SYSTEM
from chat.assess.policy import looks_like_refusal
from portal.llm import LLM, LlmUnavailable

_FOLLOW_UP = re.compile(
    r"^\s*(?:а|и|но|тогда|а\s+если|and|but|also|what about|how about)\b"
    r"|\b(?:это|этом|этого|этой|эту|этот|эти|этих|там|тут|туда|он|она|оно|они|его|её|ее|их|ним|ней|нему|"
    r"такой|такое|it|this|that|these|those|there|they|them|its|their)\b",
    re.IGNORECASE,
)


def is_follow_up(question: str) -> bool:
    return len(question.split()) <= 14 and bool(_FOLLOW_UP.search(question))


def previous_query(history: list[tuple[str, str, str]]) -> str:
    """What the previous turn searched for (its retrieval query, else its question)."""
    return (history[-1][2] or history[-1][0]) if history else ""


def standalone_question(question: str, history: list[tuple[str, str, str]], llm: LLM | None) -> str:
    """The question to search for; ``history`` is [(question, answer, retrieval query)], oldest first."""
    if not history or not is_follow_up(question):
        return question
    previous = previous_query(history)
    fallback = f"{previous} {question}"
    if llm is None:
        return fallback
    transcript = "\n".join(f"User: {q}\nAssistant: {a[:500]}" for q, a, _ in history[-2:])
    try:
        rewritten = llm.complete(
            [
                {"role": "system", "content": REWRITE_SYSTEM},
                {"role": "user", "content": f"{transcript}\nUser: {question}"},
            ],
            max_tokens=120,
        )
    except LlmUnavailable:
        return fallback
    rewritten = rewritten.strip().strip('"«»')
    # An unusable rewrite (empty, rambling, a refusal or an answer instead of a question, or one
    # sharing no word with the conversation) is not searched.
    words = set(re.findall(r"\w{4,}", (fallback).lower()))
    if (
        not rewritten
        or len(rewritten) > 3 * len(fallback) + 50
        or "\n" in rewritten
        or looks_like_refusal(rewritten)
        or not words & set(re.findall(r"\w{4,}", rewritten.lower()))
    ):
        return fallback
    return rewritten
