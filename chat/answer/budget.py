"""The context budget: what of the sources an LLM server with a given context reads.

The prompt is the system instruction, the recent history, the sources and the question; the
answer's tokens come on top. From the server's context (``portal.llm_context``) go the answer's
tokens (``KB_LLM_MAX_TOKENS``, at most a quarter of the context), the instruction, the question
and the history (the oldest turns dropped while they take more than a third of the context),
and a margin for the chat template and a tokenizer counted by estimate; the rest is the sources'.

The sources fill it in three rounds, each in the order the extractive answer ranks the passages
(the one holding the asked fact first, ``chat.answer.extractive.excerpts``): first each
passage's best units (the asked sentence, the one after it, its list: what the quotes would
show), then whole chunks instead, then the best documents' sections (``KB_EXPAND_CHARS``).
What does not fit is left out; a source left out entirely is not numbered in the prompt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from chat.answer.extractive import excerpts
from chat.answer.prompting import PromptSource, build_messages, full_texts, source_entry

EXCERPT_CHARS = 700  # of a passage's best units, the first round
ANSWER_SHARE = 4  # the answer takes at most 1 / ANSWER_SHARE of the context
HISTORY_SHARE = 3  # the history, at most 1 / HISTORY_SHARE of it
MESSAGE_TOKENS = 8  # the chat template's tokens around each message
MARGIN = 0.04  # of the context, for a tokenizer's boundaries and the template
MIN_SOURCES = 160  # tokens: with less room for sources no answer is generated

Count = Callable[[str], int]


@dataclass(frozen=True)
class Prompt:
    messages: list[dict[str, str]]
    max_tokens: int  # the answer's tokens asked of the server
    context: int  # the server's context the prompt was fitted to
    budget: int  # tokens the sources could take
    tokens: int  # the prompt's tokens as counted
    texts: dict[int, str]  # what was sent of each source, by number


def answer_tokens(context: int, max_tokens: int) -> int:
    return max(16, min(max_tokens, context // ANSWER_SHARE))


def fit(
    question: str,
    sources: list[PromptSource],
    history: list[tuple[str, str, str]],
    *,
    profile,
    refusal: str,
    context: int,
    max_tokens: int,
    count: Count,
    budget: int | None = None,
) -> Prompt | None:
    """The messages for a server of ``context`` tokens (see the module docstring); None when
    the sources would get fewer than ``MIN_SOURCES`` tokens. ``budget``: the sources' tokens
    when a server refused a first try (smaller than computed)."""
    answer = answer_tokens(context, max_tokens)
    history = list(history)
    while True:
        bare = build_messages(
            question, sources, history, profile=profile, refusal=refusal, texts={}
        )
        fixed = sum(count(m["content"]) + MESSAGE_TOKENS for m in bare)
        if not history or fixed - count(bare[0]["content"]) <= context // HISTORY_SHARE:
            break
        history = history[1:]  # the oldest turn goes first
    room = context - answer - fixed - int(context * MARGIN)
    room = min(room, budget) if budget is not None else room
    if room < MIN_SOURCES:
        return None
    texts, used = _fill(question, sources, room, count)
    messages = build_messages(
        question, sources, history, profile=profile, refusal=refusal, texts=texts
    )
    return Prompt(messages, answer, context, room, fixed + used, texts)


def _fill(
    question: str, sources: list[PromptSource], room: int, count: Count
) -> tuple[dict[int, str], int]:
    """Each source's text within ``room`` tokens, in three rounds (the module docstring)."""
    order = excerpts(question, [s.passage for s in sources], limit=EXCERPT_CHARS)
    whole = full_texts(sources)
    texts: dict[int, str] = {}
    cost: dict[int, int] = {}
    used = 0
    rounds = (
        {sources[i].number: text for i, text in order},
        {sources[i].number: sources[i].chunk_text for i, _ in order},
        {sources[i].number: whole[sources[i].number] for i, _ in order},
    )
    for offer in rounds:
        for i, _ in order:
            source = sources[i]
            text = offer[source.number]
            if not text.strip() or len(text) <= len(texts.get(source.number, "")):
                continue
            tokens = count(source_entry(source, text)) + 2  # the blank line between entries
            extra = tokens - cost.get(source.number, 0)
            if used + extra <= room:
                texts[source.number], cost[source.number] = text, tokens
                used += extra
    # The prompt numbers the sources in their order, whatever order they were chosen in.
    return {s.number: texts[s.number] for s in sources if s.number in texts}, used
