"""Conversations, messages (question + answer + what it was built from), assistant profiles,
and the chat settings staff control (kill switch, canonical refusal)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from chat.moderation.match import pattern_problems
from chat.querysets import MessageQuerySet
from knowledge.models import Document

DEFAULT_REFUSAL = "В документах базы знаний нет ответа на этот вопрос."


class AssistantProfile(models.Model):
    class Kind(models.TextChoices):
        ANSWER = "answer", _("Answer from the documents")
        DRAFT_TESTS = "draft_tests", _("Draft test cases")
        COVERAGE = "coverage", _("Coverage check")

    name = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.ANSWER)
    description = models.CharField(max_length=300, blank=True)
    system_instruction = models.TextField(
        help_text=_(
            "Added to the portal's fixed rules (sources are data; cite [n]; refuse plainly)."
        )
    )
    allowed_sources = models.ManyToManyField(
        "knowledge.Source", blank=True, help_text=_("Empty: every source the user may read.")
    )
    temperature = models.FloatField(default=0.1)
    is_default = models.BooleanField(default=False)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        verbose_name = _("assistant profile")
        verbose_name_plural = _("assistant profiles")
        ordering = ["position", "name"]

    def __str__(self) -> str:
        return self.name


class ChatSettings(models.Model):
    """One row: what staff switch at run time (the environment can force the chat off)."""

    chat_enabled = models.BooleanField(default=True)
    refusal_text = models.CharField(max_length=500, default=DEFAULT_REFUSAL)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = _("chat settings")

    def __str__(self) -> str:
        return "Chat settings"

    @classmethod
    def current(cls) -> ChatSettings:
        row, _ = cls.objects.get_or_create(pk=1)
        return row


class ModerationRule(models.Model):
    """A kind of request the portal refuses before anything else (no search, no LLM): matched
    by regular expressions and by lists of words or phrases that staff edit in the admin
    (``chat.moderation.rules``)."""

    class Kind(models.TextChoices):
        CREDENTIALS = "credentials", _("Credentials and secrets")
        PERSONAL_DATA = "personal_data", _("Personal data of colleagues")
        ABUSE = "abuse", _("Abuse and insults")
        OTHER = "other", _("Other prohibited requests")

    name = models.CharField(_("name"), max_length=100, unique=True)
    kind = models.CharField(
        _("kind"),
        max_length=20,
        choices=Kind.choices,
        default=Kind.OTHER,
        help_text=_("Chooses the fixed polite answer (in the question's language)."),
    )
    enabled = models.BooleanField(_("enabled"), default=True)
    patterns = models.TextField(
        _("patterns"),
        blank=True,
        help_text=_(
            "Regular expressions (Python syntax), one a line, searched anywhere in the question, "
            "case-insensitive, with ё read as е. (?-i:[А-ЯЁ][а-яё]+) matches a capitalised word "
            "such as a surname. Lines starting with # are comments."
        ),
    )
    terms = models.TextField(
        _("terms"),
        blank=True,
        help_text=_(
            "Words or phrases, one a line, matched as whole words, case-insensitive; a * at the "
            "end of a word matches any ending (идиот* matches идиоты). Lines starting with # are "
            "comments."
        ),
    )
    note = models.TextField(_("note"), blank=True, help_text=_("Why the rule exists."))
    position = models.PositiveSmallIntegerField(_("position"), default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "name"]
        verbose_name = _("moderation rule")
        verbose_name_plural = _("moderation rules")

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        problems = pattern_problems(self.patterns)
        if problems:
            raise ValidationError({"patterns": problems})


class Conversation(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations"
    )
    title = models.CharField(max_length=200, blank=True)
    profile = models.ForeignKey(AssistantProfile, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("conversation")
        verbose_name_plural = _("conversations")
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return self.title or f"Conversation {self.pk}"


class Message(models.Model):
    class Outcome(models.TextChoices):
        ANSWER = "answer", _("Answer")
        PARTIAL = "partial", _("Partial answer")
        REFUSAL = "refusal", _("Refusal")
        CLARIFICATION = "clarification", _("Clarification")
        ERROR = "error", _("Error")

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")

    class TopicKind(models.TextChoices):
        NONE = "", _("No topic")
        DOCUMENTS = "documents", _("From the documents that answered")
        GAP = "gap", _("Nearest cluster of refused questions")
        NOISE = "noise", _("Noise: empty or nonsense")
        MODERATED = "moderated", _("Prohibited request")

    class Mode(models.TextChoices):
        LLM = "llm", _("Generated")
        EXTRACTIVE = "extractive", _("Extractive")
        DIFF = "diff", _("From the version diff")
        NONE = "none", _("No generation")

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages"
    )
    question = models.TextField(help_text=_("As asked, with personal data redacted."))
    retrieval_query = models.TextField(
        blank=True, help_text=_("The standalone question searched for.")
    )
    search_override = models.TextField(
        blank=True, help_text=_("A reformulation tile searched instead.")
    )
    context = models.JSONField(
        default=dict, blank=True, help_text=_("A clarification tile's restriction.")
    )
    answer = models.TextField(blank=True)
    outcome = models.CharField(max_length=20, choices=Outcome.choices, blank=True)
    mode = models.CharField(max_length=20, choices=Mode.choices, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    # The process answering it and when it last showed life (chat.pipeline.lease): an answer
    # whose web process died is taken over by the browser's reconnect, or closed with a notice.
    claimed_by = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    notice = models.TextField(
        blank=True, help_text=_("Shown above the answer (e.g. the LLM was down).")
    )
    tiles = models.JSONField(default=list, blank=True)  # clarification or reformulation tiles
    filters = models.JSONField(default=dict, blank=True)
    tier = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text=_(
            "The cascade tier (source priority) the sources came from; empty when the "
            "search was one pass over every source."
        ),
    )
    redactions = models.JSONField(default=list, blank=True)  # kinds of personal data removed
    embedding_model = models.CharField(max_length=200, blank=True)
    reranker_model = models.CharField(max_length=200, blank=True)
    llm_model = models.CharField(max_length=200, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    timings = models.JSONField(default=dict, blank=True)
    removed_citations = models.JSONField(default=list, blank=True)
    answerability = models.JSONField(
        default=dict, blank=True, help_text=_("The answerability check's decision and features.")
    )
    moderation = models.JSONField(
        default=dict,
        blank=True,
        help_text=_("The moderation rule that refused the question, and what matched."),
    )
    topics = ArrayField(
        models.CharField(max_length=200),
        default=list,
        blank=True,
        help_text=_("The topics of the documents that answered (feedback.tagging)."),
    )
    topic_kind = models.CharField(
        max_length=20, choices=TopicKind.choices, blank=True, default=TopicKind.NONE
    )
    # A clarification or a refusal stores no sources, yet its tiles show titles and headings of
    # documents: who may see the turn is decided by these as by its sources (chat.querysets).
    tile_documents = models.ManyToManyField(
        "knowledge.Document",
        blank=True,
        related_name="+",
        help_text=_(
            "The documents its tiles came from (a clarification's candidates, a refusal's near "
            "misses and the passages it was checked against)."
        ),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = MessageQuerySet.as_manager()

    class Meta:
        verbose_name = _("message")
        verbose_name_plural = _("messages")
        ordering = ["created_at", "pk"]
        indexes = [
            models.Index(fields=["created_at"], name="message_created"),
            models.Index(fields=["outcome", "created_at"], name="message_outcome_created"),
            GinIndex(fields=["topics"], name="message_topics"),
        ]

    def __str__(self) -> str:
        return self.question[:80]

    def audit_sources(self) -> list[int]:
        """The sources of the documents the turn touches (``portal.admin_audit``)."""
        touched = Q(pk__in=self.sources.values("document_id")) | Q(
            pk__in=self.tile_documents.values("pk")
        )
        return sorted(set(Document.objects.filter(touched).values_list("source_id", flat=True)))


class MessageSource(models.Model):
    """A chunk the answer was built from, numbered as the model saw it ([1], [2], …)."""

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="sources")
    number = models.PositiveSmallIntegerField()
    chunk = models.ForeignKey(
        "knowledge.Chunk", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    document = models.ForeignKey(
        "knowledge.Document", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    version = models.ForeignKey(
        "knowledge.DocumentVersion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    title = models.CharField(max_length=500)
    version_label = models.CharField(max_length=200, blank=True)
    section = models.CharField(max_length=50, blank=True)
    heading = models.CharField(max_length=1000, blank=True)
    quote = models.TextField(blank=True)
    url = models.CharField(max_length=1000, blank=True)
    score = models.FloatField(default=0.0)
    scores = models.JSONField(default=dict, blank=True)  # every stage's rank and score
    cited = models.BooleanField(default=False)
    note = models.CharField(
        max_length=300, blank=True
    )  # e.g. "this section changed in the latest version"

    class Meta:
        ordering = ["message", "number"]
        constraints = [
            models.UniqueConstraint(fields=["message", "number"], name="source_unique_number")
        ]

    def __str__(self) -> str:
        return f"[{self.number}] {self.title}"
