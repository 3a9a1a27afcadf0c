"""Evaluation runs (a question set answered through the chat's service, with its figures) and
the stored regression set that ratings and the journal feed.

A run keeps what it was made with (commit, models, search settings, prompt versions) so that two
runs can be compared question by question on the Evaluation page and by the CI gate.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from evaluation.querysets import EvalResultQuerySet, RegressionCaseQuerySet
from knowledge.models import Source


class RegressionCase(models.Model):
    """One question the portal must keep answering right (``manage.py eval --set regression``)."""

    class Group(models.TextChoices):
        ANSWERABLE = "answerable", _("Answer expected")
        REFUSAL = "refusal", _("Refusal expected")
        CLARIFICATION = "clarification", _("Clarification expected")

    class Origin(models.TextChoices):
        RATING = "rating", _("Not-helpful rating")
        JOURNAL = "journal", _("Journal entry")

    question = models.TextField()
    group = models.CharField(max_length=20, choices=Group.choices, default=Group.ANSWERABLE)
    expected_answer = models.TextField(blank=True)
    gold_docs = models.JSONField(
        default=list, blank=True, help_text='Documents that hold the answer ("source/path").'
    )
    origin = models.CharField(max_length=20, choices=Origin.choices)
    rating = models.OneToOneField(
        "feedback.Rating",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="regression_case",
    )
    message = models.ForeignKey(
        "chat.Message", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = RegressionCaseQuerySet.as_manager()

    class Meta:
        verbose_name = _("regression case")
        verbose_name_plural = _("regression cases")
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return self.question[:80]

    def audit_sources(self) -> list[int]:
        """The sources of its answer and of its gold documents ("source/path")."""
        named = Source.objects.filter(
            name__in=[g.split("/", 1)[0] for g in self.gold_docs or [] if isinstance(g, str)]
        )
        found = set(named.values_list("pk", flat=True))
        return sorted(found | set(self.message.audit_sources() if self.message else []))

    @property
    def case_id(self) -> str:
        return f"regression-{self.pk}"


class EvalRun(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        INTERRUPTED = "interrupted", _("Interrupted")

    label = models.CharField(max_length=200, blank=True)
    question_set = models.CharField(max_length=500, help_text=_("The files or the stored set run."))
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.RUNNING)
    git_commit = models.CharField(max_length=64, blank=True)
    config = models.JSONField(
        default=dict, blank=True, help_text=_("Models, search settings, profile, prompt versions.")
    )
    metrics = models.JSONField(default=dict, blank=True)
    judge_model = models.CharField(max_length=200, blank=True)
    judge_prompt_version = models.CharField(max_length=50, blank=True)
    question_count = models.PositiveIntegerField(default=0, help_text=_("Questions in the set."))
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("evaluation run")
        verbose_name_plural = _("evaluation runs")
        ordering = ["-started_at", "-pk"]

    def __str__(self) -> str:
        return f"Run {self.pk}" + (f" · {self.label}" if self.label else "")


class EvalResult(models.Model):
    """One question of a run: what the portal did, and how that measures against the set."""

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="results")
    position = models.PositiveIntegerField()
    case_id = models.CharField(max_length=100)
    group = models.CharField(max_length=30)
    style = models.CharField(max_length=50, blank=True)
    question = models.TextField()
    reference = models.TextField(
        blank=True, help_text=_("The reference answer, if the set has one.")
    )
    gold = models.JSONField(default=list, blank=True)
    outcome = models.CharField(max_length=20, help_text=_("answered, partial, refused, clarified"))
    mode = models.CharField(max_length=20, blank=True)
    answer = models.TextField(blank=True)
    sources = models.JSONField(default=list, blank=True)
    gold_rank = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text=_("Rank of the first source from a gold document.")
    )
    pair = models.CharField(
        max_length=20, blank=True, help_text=_("Version questions: exact/other/none/missing said")
    )
    citations_valid = models.BooleanField(default=True)
    gold_cited = models.BooleanField(
        default=False, help_text=_("A gold document is among the sources the answer cites.")
    )
    facts = models.JSONField(
        default=list, blank=True, help_text=_("Key facts: snippets verified in the gold document.")
    )
    facts_shown = models.PositiveSmallIntegerField(
        default=0, help_text=_("How many of the key facts the answer's text holds.")
    )
    fact_first = models.BooleanField(
        default=False,
        help_text=_("A key fact stands in the answer's first 400 characters, below its notice."),
    )
    ok = models.BooleanField(default=False, help_text=_("Did what the set expects of its group."))
    latency_ms = models.FloatField(default=0.0)
    timings = models.JSONField(default=dict, blank=True, help_text=_("The answer's stage timings."))
    judge = models.JSONField(default=dict, blank=True)
    message = models.ForeignKey(
        "chat.Message", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    objects = EvalResultQuerySet.as_manager()

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "case_id"], name="evalresult_unique_case")
        ]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.case_id}"
