"""Storing what an answer was built from: its sources, outcome, models, timings and topics."""

from __future__ import annotations

import time

from django.db import transaction
from django.utils import timezone

from chat import topics
from chat.citations import cited_numbers
from chat.models import Message, MessageSource


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


def finish(
    message: Message,
    *,
    answer: str,
    outcome: str,
    mode: str,
    timings: dict,
    started: float,
    tiles: list | None = None,
    notice: str = "",
    llm_model: str = "",
    removed_citations=None,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
) -> None:
    timings["total_ms"] = round((time.perf_counter() - started) * 1000, 1)
    message.answer = answer
    message.outcome = outcome
    message.mode = mode
    message.tiles = tiles or []
    # A degraded search (the embeddings server down) is said above whatever the answer is.
    message.notice = "\n".join(x for x in (timings.get("search_notice", ""), notice) if x)
    message.llm_model = llm_model
    message.removed_citations = removed_citations or []
    message.prompt_tokens = prompt_tokens
    message.completion_tokens = completion_tokens
    message.timings = timings
    message.status = Message.Status.DONE
    message.finished_at = timezone.now()
    topics.assign(message)  # after the sources are stored and cited: they name the topics
    message.save()


def mark_cited(message: Message, answer: str) -> None:
    numbers = cited_numbers(answer)
    with transaction.atomic():
        message.sources.filter(number__in=numbers).update(cited=True)
        message.sources.exclude(number__in=numbers).update(cited=False)
