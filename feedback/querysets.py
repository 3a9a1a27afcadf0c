"""Read rules for ratings; who may rate what lives here and nowhere else."""

from __future__ import annotations

from datetime import datetime

from django.db import models


def rateable_messages(user) -> models.QuerySet:
    """Finished answers ``user`` may rate: those of their own conversations, errors excluded.

    A function over ``chat.Message`` rather than a method on its manager because the chat app
    owns that model; the rule still lives in one place.
    """
    from chat.models import Message

    if user is None or not user.is_authenticated:
        return Message.objects.none()
    return Message.objects.filter(conversation__user=user, status=Message.Status.DONE).exclude(
        outcome__in=["", Message.Outcome.ERROR]
    )


class RatingQuerySet(models.QuerySet):
    def given_between(self, start: datetime | None, end: datetime | None) -> RatingQuerySet:
        """Ratings last set in [start, end)."""
        rows = self
        if start is not None:
            rows = rows.filter(updated_at__gte=start)
        if end is not None:
            rows = rows.filter(updated_at__lt=end)
        return rows

    def with_value(self, value: str) -> RatingQuerySet:
        """``up``, ``down`` or ``all``."""
        return self if value in ("", "all") else self.filter(value=value)

    def with_access(self, user) -> RatingQuerySet:
        """Annotated with ``hidden``: the rated answer is about a source ``user`` may not read
        (the rule is ``chat.querysets``')."""
        from django.db.models import Value

        from chat.querysets import sees_every_message, unreadable_sources_of

        if sees_every_message(user):
            return self.annotate(hidden=Value(False))
        return self.annotate(hidden=unreadable_sources_of(user, "message_id"))

    def readable_by(self, user) -> RatingQuerySet:
        """Ratings of answers ``user`` may read whole."""
        return self.with_access(user).filter(hidden=False)
