"""Storing what an answer was built from: its sources, outcome, models, checks and timings."""

from __future__ import annotations

import time

from django.db import transaction
from django.utils import timezone

from chat.answer.citations import cited_numbers
from chat.models import Message, MessageSource
from chat.pipeline.turn import Final, Turn
from knowledge.queue import enqueue_on_commit

# Named, not imported: the feedback app (a layer above chat) owns the topics of a turn.
TOPICS_TASK = "feedback.assign_topics"


def store_sources(message: Message, sources) -> None:
    MessageSource.objects.filter(message=message).delete()
    MessageSource.objects.bulk_create(
        [
            MessageSource(
                message=message,
                number=s.number,
                chunk_id=s.chunk_id,
                document_id=s.document_id,
                version_id=s.version_id,
                title=s.title[:500],
                version_label=s.version_label[:200],
                section=s.section[:50],
                heading=s.heading[:1000],
                quote=s.quote,
                url=s.url[:1000],
                score=s.score,
                scores=s.scores,
                note=s.note[:300],
            )
            for s in sources
        ]
    )


def finish(turn: Turn, final: Final) -> None:
    """Store how the turn ended: the answer, its outcome and mode, the tiles, the check, the
    models and timings. The one place a turn is stored; the topics are named after the commit
    by the feedback app's task (``feedback.assign_topics``), outside the answer's time."""
    message = turn.message
    turn.timings["total_ms"] = round((time.perf_counter() - turn.started) * 1000, 1)
    message.answer = final.answer
    message.outcome = final.outcome
    message.mode = final.mode
    message.tiles = list(final.tiles)
    # A degraded search (the embeddings server down) is said above whatever the answer is.
    message.notice = "\n".join(
        x for x in (turn.timings.get("search_notice", ""), final.notice) if x
    )
    message.llm_model = final.llm_model
    message.removed_citations = list(final.removed_citations)
    message.prompt_tokens = final.prompt_tokens
    message.completion_tokens = final.completion_tokens
    if turn.check is not None:
        message.answerability = turn.check.as_dict()
        if turn.unsupported is not None:
            message.answerability["unsupported_sentences"] = turn.unsupported
        if turn.grounding is not None:
            message.answerability["grounding"] = turn.grounding
    message.timings = turn.timings
    message.status = Message.Status.DONE
    message.finished_at = timezone.now()
    message.save()
    # A turn without sources still shows its tiles' titles and headings: staff who may not read
    # those documents must not see it (chat.querysets).
    message.tile_documents.set([pk for pk in dict.fromkeys(final.tile_documents) if pk])
    if not message.moderation:
        enqueue_on_commit(TOPICS_TASK, message.pk)


def mark_cited(message: Message, answer: str) -> None:
    numbers = cited_numbers(answer)
    with transaction.atomic():
        message.sources.filter(number__in=numbers).update(cited=True)
        message.sources.exclude(number__in=numbers).update(cited=False)
