"""The stored regression set: "Not helpful" ratings with a staff-written expected answer, and
journal entries staff add by hand, become cases that ``manage.py eval --set regression`` runs."""

from __future__ import annotations

from evaluation.models import RegressionCase
from feedback.export import expected_behaviour, gold_sources
from feedback.models import Rating

GROUP_OF_BEHAVIOUR = {
    "answer": RegressionCase.Group.ANSWERABLE,
    "refusal": RegressionCase.Group.REFUSAL,
    "clarification": RegressionCase.Group.CLARIFICATION,
}


def _gold_docs(sources: list[dict]) -> list[str]:
    return list(
        dict.fromkeys(f"{s['source']}/{s['document']}" for s in sources if s.get("document"))
    )


def case_from_rating(rating) -> RegressionCase | None:
    """Keep the rating's case in step with it: a thumbs down with an expected answer is an
    active case (created or updated); any other rating deactivates the case it had. Returns
    the case, or None when the rating never made one."""
    wanted = rating.value == Rating.Value.DOWN and bool(rating.expected_answer.strip())
    case = RegressionCase.objects.filter(rating=rating).first()
    if not wanted:
        if case is not None and case.active:
            case.active = False
            case.save(update_fields=["active", "updated_at"])
        return case
    behaviour = expected_behaviour(rating)
    fields = {
        "question": rating.message.question,
        "group": GROUP_OF_BEHAVIOUR[behaviour],
        "expected_answer": rating.expected_answer.strip(),
        "gold_docs": _gold_docs(gold_sources(rating, behaviour)),
        "message": rating.message,
        "active": True,
    }
    if case is None:
        return RegressionCase.objects.create(
            rating=rating, origin=RegressionCase.Origin.RATING, created_by=rating.user, **fields
        )
    for name, value in fields.items():
        setattr(case, name, value)
    case.save()
    return case


def case_from_message(
    message, *, user, behaviour: str, expected_answer: str = ""
) -> RegressionCase:
    """A journal entry added to the regression set by a staff member.

    ``behaviour`` is what the portal should do (answer / refusal / clarification). An expected
    answer keeps the documents this answer cited (or used) as the gold ones; the same question
    added twice updates its case instead of duplicating it.
    """
    if behaviour not in GROUP_OF_BEHAVIOUR:
        raise ValueError(f"unknown behaviour {behaviour!r}")
    gold: list[str] = []
    if behaviour == "answer" and message.outcome in ("answer", "partial"):
        sources = list(message.sources.select_related("document__source"))
        chosen = [s for s in sources if s.cited] or sources
        gold = _gold_docs(
            [
                {"source": s.document.source.name, "document": s.document.path}
                for s in chosen
                if s.document is not None
            ]
        )
    case, _ = RegressionCase.objects.update_or_create(
        question=message.question,
        origin=RegressionCase.Origin.JOURNAL,
        defaults={
            "group": GROUP_OF_BEHAVIOUR[behaviour],
            "expected_answer": expected_answer.strip(),
            "gold_docs": gold,
            "message": message,
            "created_by": user,
            "active": True,
        },
    )
    return case
