"""Answering a question: one service, streamed as events, used by the page, the CLI and the API.

moderation (a prohibited request: a fixed sentence, nothing searched) -> guard -> standalone
question -> search -> refuse | clarify | answer (LLM streamed, or extractive) -> check
citations and classify -> store the message with its sources, timings and topics.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

from chat import moderation, outcomes, policy, wording
from chat.answerability import Answerability
from chat.citations import clean_citations
from chat.diff_answer import answer_from_diff
from chat.events import Event
from chat.evidence import assess, mark_unsupported
from chat.extractive import extractive_answer
from chat.guard import chat_enabled, redact
from chat.llm import LLM, LlmUnavailable, Usage, get_llm, temperature_for
from chat.models import Conversation, Message
from chat.prompting import build_messages, build_sources
from chat.rewrite import previous_query, standalone_question
from chat.storing import finish, mark_cited, store_sources
from chat.versions import detect as detect_version_question
from knowledge.question import read
from knowledge.retrieval.search import search
from knowledge.retrieval.sql import unknown_words
from knowledge.retrieval.types import Filters

logger = logging.getLogger(__name__)


def start_message(
    conversation: Conversation,
    question: str,
    *,
    search_override: str = "",
    context: dict | None = None,
) -> Message:
    """Store the question (redacted) as a pending message; the answer is produced by ``stream_answer``."""
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


def claim(message: Message) -> bool:
    """Pending -> running, once: a reconnecting browser must not answer the question twice."""
    return bool(
        Message.objects.filter(pk=message.pk, status=Message.Status.PENDING).update(
            status=Message.Status.RUNNING
        )
    )


def stream_answer(
    message: Message,
    *,
    user,
    llm: LLM | None | bool = True,
    source_ids: list[int] | None = None,
) -> Iterator[Event]:
    """Run the pipeline for a claimed message, yielding status and token events; stores it.

    ``source_ids`` restricts the answer to those sources (an MCP ``ask_<kind>`` tool); it
    narrows the profile's sources, never widens what ``user`` may read."""
    started = time.perf_counter()
    timings: dict[str, float] = {}
    verdict = moderation.check(message.question)
    if verdict is not None:
        # Before anything else: a prohibited request is never searched nor sent to an LLM.
        yield from _moderated(message, verdict, timings, started)
        return
    llm = get_llm() if llm is True else (llm or None)
    if not chat_enabled():
        finish(
            message,
            answer=wording.say("chat_off", wording.language_of(message.question)),
            outcome=Message.Outcome.ERROR,
            mode=Message.Mode.NONE,
            timings=timings,
            started=started,
        )
        yield Event("done")
        return
    history = _history(message)
    tick = time.perf_counter()
    query = message.search_override or standalone_question(message.question, history, llm)
    timings["rewrite_ms"] = _ms(tick)
    filters = _filters(message, source_ids)
    intent = None
    if not message.context and not message.search_override:
        intent = detect_version_question(message.question, user, read(message.question))
    if intent is not None and not _in_scope(intent.document, filters):
        intent = None
    if intent is not None and intent.missing:
        yield from outcomes.no_such_version(message, intent, timings, started)
        return
    if intent is not None and intent.comparison is not None:
        yield Event("status", wording.say("comparing", wording.language_of(message.question)))
        yield from answer_from_diff(message, intent.comparison, history, llm, timings, started)
        return
    if intent is not None and intent.version is not None:
        filters.version_ids = [intent.version.pk]
        filters.document_ids = [intent.document.pk]
    yield Event("status", wording.say("searching", wording.language_of(message.question)))
    # A question naming a document outright ("по техзаданию", "в ПЗ") is searched in it, with
    # its best passages as the evidence whatever their score (knowledge.retrieval.versions).
    reading = read(query)
    result = search(query, user=user, filters=filters, reading=reading)
    if not result.hits and history and query != message.question:
        # A follow-up about the same thing ("в каком разделе это описано?") can dilute the
        # conversation's topic below the minimum score: search the topic alone before refusing,
        # unless the follow-up asks about something the documents never mention.
        topic = previous_query(history)
        if (
            topic
            and topic != query
            and not unknown_words(message.question, result.visible_source_ids)
        ):
            retry = search(topic, user=user, filters=filters)
            if retry.hits:
                query, result = topic, retry
    timings["search_ms"] = _ms(tick) - timings["rewrite_ms"]
    timings["search"] = result.timings
    if result.notice:  # the search went without vectors: said above the answer (storing.finish)
        timings["search_notice"] = wording.say("words_only", wording.language_of(message.question))
    message.retrieval_query = query
    message.filters = result.filters.as_dict()
    message.tier = result.tier if result.hits else None  # which cascade tier answered
    from knowledge.embedding import get_embedder

    message.embedding_model = get_embedder().model_id
    message.reranker_model = result.rerank_note if result.reranked else ""
    if not result.hits:
        message.answerability = outcomes.refusal_check(result, read(message.question))
        yield from _refuse(message, result, llm, timings, started)
        return
    sources = build_sources(result, question=message.question)
    reading = read(message.question)  # the same reading when the question was searched as asked
    check = assess(reading, sources, result)
    message.answerability = check.as_dict()
    if check.decision == "refusal":
        # The documents do not speak of what is asked (its focus, most of its words): the
        # canonical sentence, as for a search that found nothing.
        yield from _refuse(message, result, llm, timings, started)
        return
    # A follow-up has its topic from the conversation: it is not asked back; nor is a question
    # whose evidence lacks what it asks (that is a partial answer, not an ambiguity).
    if (
        check.decision == "answer"
        and not message.context
        and not message.search_override
        and query == message.question
    ):
        tiles = policy.clarification_tiles(result, reading)
        if tiles:
            text = wording.say("clarify", wording.language_of(message.question))
            finish(
                message,
                answer=text,
                outcome=Message.Outcome.CLARIFICATION,
                mode=Message.Mode.NONE,
                tiles=[t.as_dict() for t in tiles],
                timings=timings,
                started=started,
            )
            yield Event("done")
            return
    store_sources(message, sources)
    if llm is None:
        _finish_extractive(message, sources, timings, started, check=check)
        yield Event("done")
        return
    yield from _generate(message, sources, history, llm, timings, started, check=check)


def _moderated(message: Message, verdict, timings, started) -> Iterator[Event]:
    """A prohibited request: the rule's fixed polite sentence, journaled with the reason."""
    message.moderation = verdict.as_dict()
    message.answerability = Answerability(
        decision="refusal", reason=f"moderation: {verdict.rule}"
    ).as_dict()
    finish(
        message,
        answer=moderation.reply(verdict, message.question),
        outcome=Message.Outcome.REFUSAL,
        mode=Message.Mode.NONE,
        timings=timings,
        started=started,
    )
    yield Event("done")


def _finish_extractive(
    message: Message,
    sources,
    timings,
    started,
    *,
    notice: str = "",
    llm_model: str = "",
    check: Answerability | None = None,
) -> None:
    """The best passages quoted with their citations: no LLM configured, or the LLM is down.
    A partial check puts "described X, but not Y" above the nearest passages."""
    partial = check is not None and check.decision == "partial"
    lead = outcomes.partial_notice(message.question, sources, check) if partial else ""
    answer = extractive_answer(
        message.question,
        [s.passage for s in sources],
        language=wording.language_of(message.question),
        notice=lead,
    )
    mark_cited(message, answer)
    finish(
        message,
        answer=answer,
        outcome=Message.Outcome.PARTIAL if partial else Message.Outcome.ANSWER,
        mode=Message.Mode.EXTRACTIVE,
        notice=notice,
        timings=timings,
        started=started,
        llm_model=llm_model,
    )


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


def _ms(tick: float) -> float:
    return round((time.perf_counter() - tick) * 1000, 1)


def _history(message: Message) -> list[tuple[str, str, str]]:
    from django.conf import settings

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
    filters = Filters()
    profile = message.conversation.profile
    if profile is not None:
        filters.source_ids = list(profile.allowed_sources.values_list("pk", flat=True))
    if source_ids is not None:
        allowed = set(filters.source_ids)
        # An empty list means "every source" to the search: a scope that keeps nothing must
        # find nothing (no source has the primary key 0), not everything.
        filters.source_ids = [pk for pk in source_ids if not allowed or pk in allowed] or [0]
    document_id = (message.context or {}).get("document_id")
    if document_id:
        filters.document_ids = [int(document_id)]
    return filters


def _in_scope(document, filters: Filters) -> bool:
    """A document the question names is answered from only inside the sources searched."""
    return not filters.source_ids or document.source_id in filters.source_ids


def _refuse(message: Message, result, llm: LLM | None, timings, started) -> Iterator[Event]:
    # Decided without the LLM, and it stays that way: the tiles come from the near misses.
    tiles = policy.reformulation_tiles(message.question, result, None)
    finish(
        message,
        answer=outcomes.refusal(message.question),
        outcome=Message.Outcome.REFUSAL,
        mode=Message.Mode.NONE,
        tiles=[t.as_dict() for t in tiles],
        timings=timings,
        started=started,
    )
    yield Event("done")


def _generate(
    message: Message, sources, history, llm: LLM, timings, started, *, check: Answerability
) -> Iterator[Event]:
    profile = message.conversation.profile
    refusal = outcomes.refusal(message.question)
    messages = build_messages(message.question, sources, history, profile=profile, refusal=refusal)
    usage = Usage()
    parts: list[str] = []
    tick = time.perf_counter()
    try:
        for token in llm.stream(messages, temperature=temperature_for(profile), usage=usage):
            if not parts:
                timings["llm_first_token_ms"] = _ms(tick)
            parts.append(token)
            yield Event("token", token)
    except LlmUnavailable as exc:
        notice = wording.say("llm_down", wording.language_of(message.question), error=exc)
        _finish_extractive(
            message, sources, timings, started, notice=notice, llm_model=llm.model_id, check=check
        )
        yield Event("done")
        return
    timings["llm_ms"] = _ms(tick)
    answer, removed = clean_citations("".join(parts).strip(), len(sources))
    outcome = policy.classify(answer, refusal=refusal, llm=llm)
    if policy.leaks_instruction(answer, messages[0]["content"]):
        logger.warning("answer to message %s repeated the system instruction; replaced", message.pk)
        outcome = "refusal"
    notice = ""
    if outcome != "refusal":
        answer, unsupported = mark_unsupported(
            answer, sources, wording.language_of(message.question)
        )
        if unsupported or check.decision == "partial":
            outcome = "partial"
        if check.decision == "partial":
            notice = outcomes.partial_notice(message.question, sources, check)
        message.answerability = {**check.as_dict(), "unsupported_sentences": unsupported}
    tiles: list[dict] = []
    if outcome == "refusal":
        answer = refusal  # one canonical sentence, so refusals can be counted
        tiles = [
            t.as_dict() for t in policy.reformulation_tiles(message.question, _NoResult(), llm)
        ]
    mark_cited(message, answer)
    finish(
        message,
        answer=answer,
        outcome=outcome,
        mode=Message.Mode.LLM,
        tiles=tiles,
        notice=notice,
        timings=timings,
        started=started,
        llm_model=llm.model_id,
        removed_citations=removed,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
    )
    yield Event("done")


class _NoResult:
    """Reformulation after an LLM refusal: the near misses are not known, the LLM suggests."""

    near_misses: list = []
