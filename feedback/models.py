"""Ratings of answers (thumbs up / down, reasons, comment, what staff expect instead) and the
stored vectors of refused questions the content-gap clustering reuses.

Nothing in retrieval or answering reads these tables: a rating changes no ranking.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils.translation import gettext_lazy as _

from feedback.querysets import RatingQuerySet


class Rating(models.Model):
    """One user's verdict on one answer; changeable, never duplicated."""

    class Value(models.TextChoices):
        UP = "up", _("Helpful")
        DOWN = "down", _("Not helpful")

    class Reason(models.TextChoices):
        WRONG = "wrong", _("Wrong")
        INCOMPLETE = "incomplete", _("Incomplete")
        WRONG_SOURCE = "wrong_source", _("Wrong source")
        OUTDATED = "outdated", _("Outdated")
        OTHER = "other", _("Other")

    class Behaviour(models.TextChoices):
        ANSWER = "answer", _("Answer")
        REFUSAL = "refusal", _("Refusal")
        CLARIFICATION = "clarification", _("Clarification")

    message = models.ForeignKey("chat.Message", on_delete=models.CASCADE, related_name="ratings")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ratings"
    )
    value = models.CharField(max_length=10, choices=Value.choices)
    reasons = ArrayField(
        models.CharField(max_length=20, choices=Reason.choices), default=list, blank=True
    )
    comment = models.TextField(blank=True)
    expected_behaviour = models.CharField(
        max_length=20,
        choices=Behaviour.choices,
        blank=True,
        help_text=_(
            "Staff: what the assistant should do for this question. Empty: derived from "
            "the outcome and the rating (see feedback.export.expected_behaviour)."
        ),
    )
    expected_answer = models.TextField(
        blank=True,
        help_text=_("Staff: the answer the assistant should give; exported to the regression set."),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = RatingQuerySet.as_manager()

    class Meta:
        verbose_name = _("rating")
        verbose_name_plural = _("ratings")
        ordering = ["-updated_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["message", "user"], name="rating_unique_per_user")
        ]
        indexes = [models.Index(fields=["updated_at"], name="rating_updated")]

    def __str__(self) -> str:
        return f"{self.get_value_display()}: {self.message}"

    def audit_sources(self) -> list[int]:
        return self.message.audit_sources()

    def reason_labels(self) -> list[str]:
        labels = dict(self.Reason.choices)
        return [labels.get(r, r) for r in self.reasons]


class QuestionVector(models.Model):
    """The embedding of a refused question's text, kept so the content-gap clustering embeds
    each distinct question once per embedding model instead of on every page view.

    Raw float32 bytes rather than a pgvector column: nothing searches these in SQL, and
    numpy reads bytes in microseconds where parsing pgvector's text form took most of the
    page's Python time.
    """

    model_id = models.CharField(max_length=200)
    text_hash = models.CharField(max_length=64)  # sha256 of the normalised question
    dense = models.BinaryField()  # float32, L2-normalised
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["model_id", "text_hash"], name="question_vector_unique_text"
            )
        ]

    def __str__(self) -> str:
        return f"{self.model_id}:{self.text_hash[:12]}"
