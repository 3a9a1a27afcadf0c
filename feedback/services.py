"""Rating an answer: the one mutation behind the thumbs and the reason form."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import IntegrityError, transaction

from feedback.models import Rating

MAX_COMMENT_CHARS = 2000


def clean_reasons(reasons: Iterable[str]) -> list[str]:
    """Known reason chips only, each once, in the order of the choices."""
    given = set(reasons)
    return [value for value in Rating.Reason.values if value in given]


def rate_answer(
    message,
    user,
    value: str,
    *,
    reasons: Iterable[str] | None = None,
    comment: str | None = None,
) -> Rating:
    """Record ``user``'s rating of ``message`` (one row per user and answer, changed in place).

    Thumbs up clears the reasons and comment, which describe what was wrong. Thumbs down with
    ``reasons``/``comment`` left as None keeps those already given (the first click on the
    thumb, before the form is filled in). The caller checks that ``user`` may rate ``message``
    (``feedback.querysets.rateable_messages``). Raises ValueError for an unknown value.
    """
    if value not in Rating.Value.values:
        raise ValueError(f"unknown rating value {value!r}")
    try:
        return _save(message, user, value, reasons, comment)
    except IntegrityError:
        # Two first clicks raced to insert the row; the loser updates the winner's row.
        return _save(message, user, value, reasons, comment)


def _save(message, user, value: str, reasons, comment) -> Rating:
    with transaction.atomic():
        # Lock the row (if any) so two quick clicks cannot interleave their read and write.
        rating = Rating.objects.select_for_update().filter(message=message, user=user).first()
        if rating is None:
            rating = Rating(message=message, user=user)
        was_down = rating.value == Rating.Value.DOWN
        rating.value = value
        if value == Rating.Value.UP:
            rating.reasons, rating.comment = [], ""
        else:
            if reasons is not None:
                rating.reasons = clean_reasons(reasons)
            elif not was_down:
                rating.reasons = []
            if comment is not None:
                rating.comment = comment.strip()[:MAX_COMMENT_CHARS]
            elif not was_down:
                rating.comment = ""
        rating.save()
    return rating
