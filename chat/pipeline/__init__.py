"""Answering a question: one pipeline, streamed as events, used by the page, the CLI, the JSON
API and MCP.

A ``Turn`` goes through small named steps (``chat.pipeline.steps``: moderate, switch, rewrite,
versions, search, assess, clarify, answer); each yields status and token events and returns
either nothing (the next step runs) or the ``Final`` that ends the turn, which ``finish`` stores:
one place decides the outcome, one place stores it.
"""

from __future__ import annotations

from collections.abc import Iterator

from chat.models import Conversation, Message
from chat.pipeline.events import Event
from chat.pipeline.guard import redact
from chat.pipeline.lease import Heartbeat, claim, take_over
from chat.pipeline.steps import STEPS
from chat.pipeline.storing import finish
from chat.pipeline.turn import Final, Turn
from knowledge.question import read
from portal.llm import LLM, get_llm

__all__ = [
    "Final",
    "Turn",
    "answer_now",
    "claim",
    "start_message",
    "stream_answer",
    "take_over",
]


def start_message(
    conversation: Conversation,
    question: str,
    *,
    search_override: str = "",
    context: dict | None = None,
) -> Message:
    """Store the question (redacted) as a pending message; ``stream_answer`` answers it."""
    redacted = redact(question.strip())
    message = Message.objects.create(
        conversation=conversation,
        question=redacted.text,
        redactions=redacted.kinds,
        search_override=redact(search_override).text if search_override else "",
        context=context or {},
    )
    if not conversation.title:
        conversation.title = redacted.text[:120]
    conversation.save(update_fields=["title", "updated_at"])
    return message


def stream_answer(
    message: Message,
    *,
    user,
    llm: LLM | None | bool = True,
    source_ids: list[int] | None = None,
) -> Iterator[Event]:
    """Run the steps for a claimed message, yielding status and token events; stores it.

    ``source_ids`` restricts the answer to those sources (an MCP ``ask_<kind>`` tool); it
    narrows the profile's sources, never widens what ``user`` may read."""
    reading = read(message.question)
    turn = Turn(
        message,
        user,
        get_llm() if llm is True else (llm or None),
        source_ids,
        language=reading.language,
        reading=reading,
    )
    alive = Heartbeat(message.pk)  # a reconnect takes over only an answer that stopped
    for step in STEPS:
        final = yield from alive.relay(step(turn))
        if final is not None:
            break
    assert final is not None, "the last step, the answer, always ends the turn"
    finish(turn, final)
    yield Event("done")


def answer_now(
    conversation: Conversation,
    question: str,
    *,
    user,
    llm: LLM | None | bool = True,
    search_override: str = "",
    context: dict | None = None,
    source_ids: list[int] | None = None,
) -> Message:
    """The whole pipeline without streaming (CLI, JSON API, MCP)."""
    message = start_message(
        conversation, question, search_override=search_override, context=context
    )
    claim(message)
    for _ in stream_answer(message, user=user, llm=llm, source_ids=source_ids):
        pass
    message.refresh_from_db()
    return message
