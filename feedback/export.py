"""Rated answers -> a JSON Lines regression set (the analytics page and ``manage.py export_eval``).

One line per rating::

    {"id": "rating-12", "question": "...", "expected_behaviour": "answer",
     "expected_answer": "..." | null, "gold_sources": [{"source", "document", "title",
     "version", "section", "heading"}], "rating": "down", "reasons": ["outdated"],
     "comment": "...", "observed": {"outcome", "mode", "answer", "sources": [...]},
     "profile": "..." | null, "asked_at": "...", "rated_at": "..."}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import date, datetime, time

from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from feedback.models import Rating

ANSWERED = {"answer", "partial"}
# Reasons that say the documents hold the answer and this one fell short of it.
FELL_SHORT = {Rating.Reason.INCOMPLETE, Rating.Reason.WRONG_SOURCE, Rating.Reason.OUTDATED}


def expected_behaviour(rating: Rating) -> str:
    """What the assistant should have done, for the regression set.

    1. A staff member's choice on the rating (``expected_behaviour``) wins.
    2. Thumbs up: what it did was right (an answer or a partial answer -> "answer"; a refusal
       -> "refusal"; a clarification -> "clarification").
    3. Thumbs down on a refusal or a clarification: the user expected an answer -> "answer".
    4. Thumbs down on an answer: "answer" when staff wrote the expected answer, or when a reason
       says the documents hold it and the answer fell short (incomplete, wrong source,
       outdated); "refusal" when the only complaint is that it is wrong (with or without
       "other"): nobody told us what is right, and an invented answer should have been the
       canonical refusal. A thumbs down with no reason at all keeps "answer".
    """
    if rating.expected_behaviour:
        return rating.expected_behaviour
    outcome = rating.message.outcome
    observed = "answer" if outcome in ANSWERED else outcome
    if rating.value == Rating.Value.UP:
        return observed
    if observed != "answer":
        return "answer"
    reasons = set(rating.reasons)
    if rating.expected_answer.strip() or reasons & FELL_SHORT:
        return "answer"
    return "refusal" if Rating.Reason.WRONG in reasons else "answer"


def _source_row(source, *, newest: bool = False) -> dict:
    document = source.document
    version = source.version_label
    if newest and document is not None and document.current_version is not None:
        version = document.current_version.label or version
    return {
        "source": document.source.name if document is not None else "",
        "document": document.path if document is not None else "",
        "title": document.title if document is not None else source.title,
        "version": version,
        "section": source.section,
        "heading": source.heading,
    }


def gold_sources(rating: Rating, behaviour: str) -> list[dict]:
    """The sources a right answer should cite: the ones this answer cited (all it used when none
    is marked cited), unless the rating disowns them.

    None for a refusal or clarification, or when the answer was a refusal/clarification
    (nobody has said where the answer is), or marked "wrong" or "wrong source". "Outdated"
    keeps the documents and points at their newest version.
    """
    if behaviour != "answer" or rating.message.outcome not in ANSWERED:
        return []
    reasons = set(rating.reasons) if rating.value == Rating.Value.DOWN else set()
    if reasons & {Rating.Reason.WRONG, Rating.Reason.WRONG_SOURCE}:
        return []
    sources = list(rating.message.sources.all())
    chosen = [s for s in sources if s.cited] or sources
    newest = Rating.Reason.OUTDATED in reasons
    return [_source_row(s, newest=newest) for s in chosen]


def regression_case(rating: Rating) -> dict:
    """One line of the regression set (see the module docstring)."""
    message = rating.message
    behaviour = expected_behaviour(rating)
    profile = message.conversation.profile
    return {
        "id": f"rating-{rating.pk}",
        "question": message.question,
        "expected_behaviour": behaviour,
        "expected_answer": rating.expected_answer.strip() or None,
        "gold_sources": gold_sources(rating, behaviour),
        "rating": rating.value,
        "reasons": list(rating.reasons),
        "comment": rating.comment,
        "observed": {
            "outcome": message.outcome,
            "mode": message.mode,
            "answer": message.answer,
            "sources": [_source_row(s) for s in message.sources.all()],
        },
        "profile": profile.name if profile is not None else None,
        "asked_at": message.created_at.isoformat(),
        "rated_at": rating.updated_at.isoformat(),
    }


def ratings_for_export(
    *,
    since: date | None = None,
    value: str = "all",
    ids: Iterable[int] | None = None,
    viewer=None,
) -> QuerySet[Rating]:
    """Ratings to export, oldest first, with everything a line needs in a fixed few queries;
    with ``viewer``, only the answers they may read whole (the command line exports all)."""
    from chat.models import MessageSource

    rows = Rating.objects.with_value(value)
    if viewer is not None:
        rows = rows.readable_by(viewer)
    if since is not None:
        start = timezone.make_aware(datetime.combine(since, time.min))
        rows = rows.filter(updated_at__gte=start)
    if ids is not None:
        rows = rows.filter(pk__in=list(ids))
    sources = MessageSource.objects.select_related(
        "document__source", "document__current_version"
    ).order_by("number")
    return (
        rows.select_related("message__conversation__profile")
        .prefetch_related(Prefetch("message__sources", queryset=sources))
        .order_by("updated_at", "pk")
    )


def export_lines(ratings: Iterable[Rating]) -> Iterator[str]:
    """JSON Lines: one regression case per rating, each line ending in a newline."""
    for rating in ratings:
        yield json.dumps(regression_case(rating), ensure_ascii=False) + "\n"


def export_filename(now: datetime | None = None) -> str:
    stamp = timezone.localtime(now or timezone.now()).strftime("%Y%m%d-%H%M")
    return f"regression-set-{stamp}.jsonl"
