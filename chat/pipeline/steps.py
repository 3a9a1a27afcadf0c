"""The steps of a turn, in order. Each is a generator: it yields status and token events as it
works and returns a ``Final`` when it decides how the turn ends, or None to let the next step
run. ``chat.pipeline.stream_answer`` runs them and stores the one ``Final`` (``finish``).

moderate -> switch -> rewrite -> versions -> search -> assess -> clarify -> answer
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Generator
from dataclasses import replace

from django.conf import settings

from chat.answer import wording
from chat.answer.prompting import build_sources
from chat.assess import policy
from chat.assess.answerability import Answerability
from chat.assess.evidence import assess as assess_evidence
from chat.models import Message
from chat.moderation import rules as moderation
from chat.pipeline import outcomes
from chat.pipeline.diff_answer import answer_from_diff
from chat.pipeline.events import Event
from chat.pipeline.guard import chat_enabled
from chat.pipeline.replies import generated, quoted
from chat.pipeline.rewrite import previous_query, standalone_question
from chat.pipeline.storing import store_sources
from chat.pipeline.turn import Final, Turn
from chat.pipeline.versions import detect as detect_version_question
from knowledge.embedding import get_embedder
from knowledge.question import read
from knowledge.retrieval import Filters, SearchOptions, unknown_words
from knowledge.retrieval import search as search_documents

Step = Generator[Event, None, Final | None]


def silent(step: Callable[[Turn], Final | None]) -> Callable[[Turn], Step]:
    """A step with nothing to say while it works, made the generator every step is."""

    @functools.wraps(step)
    def run(turn: Turn) -> Step:
        yield from ()
        return step(turn)

    return run


@silent
def moderate(turn: Turn) -> Final | None:
    """A prohibited request: the rule's fixed polite sentence, nothing searched, no LLM."""
    verdict = moderation.check(turn.question)
    if verdict is None:
        return None
    turn.message.moderation = verdict.as_dict()
    turn.message.topic_kind = Message.TopicKind.MODERATED
    turn.check = Answerability(decision="refusal", reason=f"moderation: {verdict.rule}")
    return Final(moderation.reply(verdict, turn.question), Message.Outcome.REFUSAL)


@silent
def switch(turn: Turn) -> Final | None:
    """The kill switch: staff (or the environment) turned the chat off."""
    if chat_enabled():
        return None
    return Final(wording.say("chat_off", turn.language), Message.Outcome.ERROR)


@silent
def rewrite(turn: Turn) -> Final | None:
    """The question to search: a tile's reformulation, or the question made standalone with
    the conversation's history (a follow-up with a pronoun)."""
    tick = time.perf_counter()
    turn.history = _history(turn.message)
    message = turn.message
    turn.query = message.search_override or standalone_question(
        turn.question, turn.history, turn.llm
    )
    turn.lap("rewrite_ms", tick)
    turn.filters = _filters(message, turn.source_ids)
    return None


def versions(turn: Turn) -> Step:
    """A version question: "no such version" (or "several versions") with the versions it could
    mean, the diff of exactly the versions named, or one older version to answer from (a filter
    for the search)."""
    message = turn.message
    if message.context or message.search_override:
        return None
    intent = detect_version_question(turn.reading, turn.user)
    if intent is None or not _in_scope(intent.document, turn.filters):
        return None
    if intent.missing or intent.several:
        reason = "the question names a version the document does not have"
        if not intent.missing:
            reason = "the question names several versions of the document equally"
        turn.check = Answerability(decision="refusal", reason=reason)
        return outcomes.no_such_version(turn.language, intent)
    if intent.comparison is not None:
        yield Event("status", wording.say("comparing", turn.language))
        return (yield from answer_from_diff(turn, intent.comparison))
    if intent.version is not None:
        turn.filters = replace(
            turn.filters, version_ids=[intent.version.pk], document_ids=[intent.document.pk]
        )
    return None


def search(turn: Turn) -> Step:
    """Search the documents the user may read; nothing over the minimum score is a refusal."""
    yield Event("status", wording.say("searching", turn.language))
    tick = time.perf_counter()
    message = turn.message
    # A question naming a document outright ("по техзаданию", "в ПЗ") is searched in it, with
    # its best passages as the evidence whatever their score (knowledge.retrieval.versions).
    # The answer's check and quotes read the second vectors: the question goes into e5's
    # space whether or not the ranking reads them.
    answering = SearchOptions(answer=True)
    # A question made standalone or a tile's reformulation is another question: read here, once.
    reading = turn.reading if turn.query == turn.question else read(turn.query)
    result = search_documents(
        turn.query, user=turn.user, filters=turn.filters, reading=reading, options=answering
    )
    if not result.hits and turn.history and turn.query != turn.question:
        # A follow-up about the same thing ("в каком разделе это описано?") can dilute the
        # conversation's topic below the minimum score: search the topic alone before refusing,
        # unless the follow-up asks about something the documents never mention.
        topic = previous_query(turn.history)
        if (
            topic
            and topic != turn.query
            and not unknown_words(turn.question, result.visible_source_ids)
        ):
            retry = search_documents(topic, user=turn.user, filters=turn.filters, options=answering)
            if retry.hits:
                turn.query, result = topic, retry
    turn.lap("search_ms", tick)
    turn.timings["search"] = result.timings
    if result.notice:  # the search went without vectors: said above the answer (finish)
        turn.timings["search_notice"] = wording.say("words_only", turn.language)
    turn.result = result
    message.retrieval_query = turn.query
    message.filters = result.filters.as_dict()
    message.tier = result.tier if result.hits else None  # which cascade tier answered
    message.embedding_model = get_embedder().model_id
    message.reranker_model = result.rerank_note if result.reranked else ""
    if not result.hits:
        turn.check = outcomes.refusal_check(result, turn.reading)
        return _refusal(turn)
    return None


@silent
def assess(turn: Turn) -> Final | None:
    """The answerability check of the reading on the best sources (chat.assess.answerability)."""
    turn.sources = build_sources(turn.result, reading=turn.reading)
    turn.check = assess_evidence(turn.reading, turn.sources, turn.result)
    if turn.check.decision == "refusal":
        # The documents do not speak of what is asked (its focus, most of its words): the
        # canonical sentence, as for a search that found nothing.
        return _refusal(turn)
    return None


@silent
def clarify(turn: Turn) -> Final | None:
    """Documents about different things score alike: ask back with tiles. A follow-up has its
    topic from the conversation, and a question whose evidence lacks what it asks is a partial
    answer, not an ambiguity: neither is asked back."""
    message = turn.message
    if (
        turn.check.decision != "answer"
        or message.context
        or message.search_override
        or turn.query != turn.question
    ):
        return None
    tiles = policy.clarification_tiles(turn.result, turn.reading)
    if not tiles:
        return None
    return Final(
        wording.say("clarify", turn.language),
        Message.Outcome.CLARIFICATION,
        tiles=tuple(t.as_dict() for t in tiles),
        tile_documents=tuple(t.document_id for t in tiles if t.document_id),
    )


def reply(turn: Turn) -> Step:
    """The reply: generated by the LLM from the sources, streamed; or, without one, the best
    passages quoted."""
    store_sources(turn.message, turn.sources)
    if turn.llm is None:
        return quoted(turn)
    return (yield from generated(turn))


STEPS = (moderate, switch, rewrite, versions, search, assess, clarify, reply)


def _refusal(turn: Turn) -> Final:
    # Decided without the LLM, and it stays that way: the tiles come from the near misses'
    # headings, and the check from the passages read (recorded: who may see the turn).
    tiles = policy.reformulation_tiles(turn.question, turn.result, None)
    near = [c.document_id for c in turn.result.near_misses[:8]] if tiles else []
    return Final(
        wording.refusal(turn.language),
        Message.Outcome.REFUSAL,
        tiles=tuple(t.as_dict() for t in tiles),
        tile_documents=(*near, *(s.document_id for s in turn.sources)),
    )


def _history(message: Message) -> list[tuple[str, str, str]]:
    turns = settings.CHAT_HISTORY_TURNS
    if not turns:
        return []
    previous = (
        Message.objects.filter(
            conversation=message.conversation, pk__lt=message.pk, status=Message.Status.DONE
        )
        .exclude(outcome=Message.Outcome.ERROR)
        .filter(moderation={})  # a refused prohibited request gives a follow-up no context
        .order_by("-pk")[:turns]
    )
    return [(m.question, m.answer, m.retrieval_query) for m in reversed(list(previous))]


def _filters(message: Message, source_ids: list[int] | None = None) -> Filters:
    profile = message.conversation.profile
    allowed: list[int] = []
    if profile is not None:
        allowed = list(profile.allowed_sources.values_list("pk", flat=True))
    scope = allowed
    if source_ids is not None:
        # An empty list means "every source" to the search: a scope that keeps nothing must
        # find nothing (no source has the primary key 0), not everything.
        scope = [pk for pk in source_ids if not allowed or pk in set(allowed)] or [0]
    document_id = (message.context or {}).get("document_id")
    return Filters(source_ids=scope, document_ids=[int(document_id)] if document_id else [])


def _in_scope(document, filters: Filters) -> bool:
    """A document the question names is answered from only inside the sources searched."""
    return not filters.source_ids or document.source_id in filters.source_ids
