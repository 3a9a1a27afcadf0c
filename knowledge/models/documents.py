"""Documents and their versions: a document's stable identity inside its source (a path or an
external id), the versions of it (the bytes of one upload, deduplicated by sha256, with status
and progress), the change summaries between two of them and the log of staff actions on them,
and the synonyms read from documents."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.utils.translation import gettext_lazy as _

from knowledge.models.sources import Source
from knowledge.querysets import DocumentQuerySet, VersionQuerySet
from knowledge.roles import Role
from knowledge.synonyms import key, normalise


class Document(models.Model):
    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="documents")
    path = models.CharField(max_length=1000, help_text=_("Path or external id inside the source."))
    title = models.CharField(max_length=500)
    aliases = models.CharField(
        max_length=500,
        blank=True,
        help_text=_(
            "Other names people use for it, comma-separated (e.g. 'ПМИ, программа испытаний')."
        ),
    )
    url = models.CharField(
        max_length=1000,
        blank=True,
        help_text=_("The original's address when its source gives one; else base URL + path."),
    )
    language = models.CharField(max_length=20, default="simple")
    role = models.CharField(
        max_length=20,
        choices=Role.choices,
        blank=True,
        help_text=_(
            "Set by staff; empty: the source's role, else the role read from the document."
        ),
    )
    # Read from the document when its newest version is stored (knowledge.roles.read_role).
    detected_role = models.CharField(
        max_length=20, choices=Role.choices, blank=True, editable=False
    )
    current_version = models.ForeignKey(
        "DocumentVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    removed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The whole searchable text (title weight A) of the current version, for document-level
    # BM25: a document whose text as a whole holds the question's words is better evidence.
    search_vector = SearchVectorField(null=True, editable=False)
    lexeme_count = models.PositiveIntegerField(default=0)

    objects = DocumentQuerySet.as_manager()

    class Meta:
        verbose_name = _("document")
        verbose_name_plural = _("documents")
        ordering = ["source__priority", "title"]
        constraints = [
            models.UniqueConstraint(fields=["source", "path"], name="document_unique_path")
        ]
        indexes = [GinIndex(fields=["search_vector"], name="document_search_vector")]

    def __str__(self) -> str:
        return self.title

    def audit_sources(self) -> list[int]:
        return [self.source_id]

    @property
    def effective_role(self) -> str:
        """What staff set on the document, else on its source, else what was read from it."""
        return self.role or self.source.role or self.detected_role or Role.OTHER

    @property
    def effective_role_label(self) -> str:
        return str(Role(self.effective_role).label)

    @property
    def role_origin(self) -> str:
        """Where ``effective_role`` comes from: "document", "source" or "detected"."""
        return "document" if self.role else "source" if self.source.role else "detected"

    @property
    def alias_list(self) -> list[str]:
        return [a.strip() for a in self.aliases.split(",") if a.strip()]


class DocumentVersion(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        PARSING = "parsing", _("Parsing")
        EMBEDDING = "embedding", _("Embedding")
        READY = "ready", _("Ready")
        FAILED = "failed", _("Failed")

    ACTIVE = (Status.PARSING, Status.EMBEDDING)

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField(help_text=_("Order inside the document: 1 is the oldest."))
    label = models.CharField(max_length=200, blank=True)
    label_date = models.DateField(null=True, blank=True)
    sha256 = models.CharField(max_length=64)
    file = models.FileField(upload_to="", max_length=500)
    filename = models.CharField(max_length=500)
    size = models.BigIntegerField(default=0)
    format = models.CharField(max_length=20, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    progress = models.PositiveSmallIntegerField(default=0)
    stage = models.CharField(max_length=100, blank=True)
    error = models.TextField(blank=True)
    parsed = models.JSONField(null=True, blank=True, editable=False)
    block_count = models.PositiveIntegerField(default=0)
    chunk_count = models.PositiveIntegerField(default=0)
    table_count = models.PositiveIntegerField(default=0)
    page_count = models.PositiveIntegerField(default=0)
    timings = models.JSONField(default=dict, blank=True)
    # Scanned pages recognised with OCR: engine, languages and per page its confidence
    # (knowledge.parsing.scan.Recognised.record); empty when no page was recognised.
    ocr = models.JSONField(default=dict, blank=True, editable=False)
    embedding_model = models.CharField(max_length=200, blank=True)
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    added_via = models.CharField(max_length=20, default="upload")
    claim_token = models.CharField(max_length=32, blank=True)
    # The process of the run holding the claim (portal.processes): a run killed on this machine
    # is seen gone at once, instead of once its heartbeat is stale.
    claimed_by = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    ready_at = models.DateTimeField(null=True, blank=True)

    objects = VersionQuerySet.as_manager()

    class Meta:
        verbose_name = _("document version")
        verbose_name_plural = _("document versions")
        ordering = ["document", "number"]
        get_latest_by = "number"
        constraints = [
            # Same bytes twice never make a second version of one document.
            models.UniqueConstraint(fields=["document", "sha256"], name="version_unique_bytes"),
            models.UniqueConstraint(fields=["document", "number"], name="version_unique_number"),
        ]
        indexes = [models.Index(fields=["status", "heartbeat_at"], name="version_status_beat")]

    def __str__(self) -> str:
        return f"{self.document} · {self.display_label}"

    def audit_sources(self) -> list[int]:
        return [self.document.source_id]

    @property
    def display_label(self) -> str:
        return self.label or f"v{self.number}"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE

    @property
    def recognised_pages(self) -> dict[int, dict]:
        """Page number -> what OCR recorded for it (confidence, why it was recognised)."""
        return {entry["page"]: entry for entry in (self.ocr or {}).get("pages", [])}

    @property
    def poorly_recognised_pages(self) -> list[int]:
        """Recognised pages whose confidence is under the threshold they were read with."""
        threshold = (self.ocr or {}).get("min_confidence", 0)
        return [
            number
            for number, entry in self.recognised_pages.items()
            if entry.get("confidence") is not None and entry["confidence"] < threshold
        ]


# --- versions: cached change summaries and the log of staff actions (knowledge.versions) ---


class VersionChange(models.Model):
    """The change summary between two versions of a document, computed once per pair.

    The history page asks for each version against its predecessor; any other pair compared is
    cached the same way. A row is stale when either version was re-ingested after it was
    computed, or when the diff engine's number (``knowledge.versions.services.ENGINE``) moved on.
    """

    old = models.ForeignKey(DocumentVersion, on_delete=models.CASCADE, related_name="+")
    new = models.ForeignKey(DocumentVersion, on_delete=models.CASCADE, related_name="+")
    engine = models.PositiveSmallIntegerField(default=0)
    summary = models.JSONField(default=dict)
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["old", "new"], name="version_change_unique_pair")
        ]

    def __str__(self) -> str:
        return f"{self.old_id} -> {self.new_id}"


class VersionEvent(models.Model):
    """A staff action on a version (label or date changed, moved, removed), kept after the
    version itself is gone."""

    class Action(models.TextChoices):
        RELABEL = "relabel", _("Label or date changed")
        MOVE = "move", _("Moved in the order")
        REMOVE = "remove", _("Removed")

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="version_events")
    version = models.ForeignKey(
        DocumentVersion, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    action = models.CharField(max_length=20, choices=Action.choices)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    detail = models.JSONField(default=dict, blank=True)  # label, number, sha256, before/after
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.get_action_display()}: {self.detail.get('label', self.version_id)}"


# --- synonyms read from the documents or added by staff (knowledge.synonyms) ---


class Synonym(models.Model):
    """Two names of one thing, for query expansion: collected from the documents where they
    write "Русский термин (English term, ABBR)", or added by staff. Stored lower-cased, both
    ways round (a question naming either finds text using the other)."""

    term = models.CharField(
        max_length=200, help_text=_("Matched by its words' first five letters (stored so).")
    )
    equivalent = models.CharField(max_length=200)
    document = models.ForeignKey(
        Document,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text=_("The document it was read from; empty when staff added it."),
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("synonym")
        verbose_name_plural = _("synonyms")
        constraints = [
            models.UniqueConstraint(
                fields=["term", "equivalent", "document"], name="synonym_unique_pair"
            )
        ]
        indexes = [
            models.Index(fields=["term"], name="synonym_term"),
            # A search reads the synonyms whose first word the question has (synonyms.expansions).
            models.Index(
                models.Func(
                    models.F("term"), models.Value(" "), models.Value(1), function="split_part"
                ),
                name="synonym_first_word",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.term} = {self.equivalent}"

    def save(self, *args, **kwargs) -> None:
        self.term, self.equivalent = key(self.term), normalise(self.equivalent)
        super().save(*args, **kwargs)

    def audit_sources(self) -> list[int]:
        return [self.document.source_id] if self.document_id else []
