"""A guided test analysis: the task described, the questions asked and answered, the mind map."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class AnalysisQuerySet(models.QuerySet):
    def owned_by(self, user) -> AnalysisQuerySet:
        """An analysis is its author's: built from what they may read, shown to them only."""
        return self.filter(user=user) if user.is_authenticated else self.none()


class Analysis(models.Model):
    class Status(models.TextChoices):
        ASKING = "asking", _("Asking")
        READY = "ready", _("Ready")

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="test_analyses"
    )
    title = models.CharField(max_length=200)
    task_key = models.CharField(max_length=100, blank=True, help_text=_("Tracker task key."))
    task_url = models.CharField(
        max_length=1000, blank=True, help_text=_("The task in the tracker.")
    )
    description = models.TextField()
    # [{"key": "platform", "text": "...", "tiles": [{"value": "...", "label": "..."}]}]
    questions = models.JSONField(default=list, blank=True)
    answers = models.JSONField(
        default=dict, blank=True
    )  # question key -> chosen value ("" skipped)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ASKING)
    tree = models.JSONField(null=True, blank=True)  # the mind map (scenarios.nodes.Node dicts)
    llm_model = models.CharField(max_length=200, blank=True)  # the model that suggested checks
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = AnalysisQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("test analysis")
        verbose_name_plural = _("test analyses")

    def __str__(self) -> str:
        return self.title

    @property
    def current_question(self) -> dict | None:
        """The first question not answered yet (None: all answered)."""
        return next((q for q in self.questions if q["key"] not in self.answers), None)

    @property
    def answered(self) -> list[tuple[dict, str]]:
        """The questions answered so far with the answer's label ("" when skipped)."""
        found = []
        for question in self.questions:
            if question["key"] in self.answers:
                value = self.answers[question["key"]]
                labels = {t["value"]: t["label"] for t in question["tiles"]}
                found.append((question, labels.get(value, value)))
        return found
