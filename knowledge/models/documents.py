"""Sources, documents, versions and chunks: the knowledge base.

Source -> Document (stable identity: a path or external id inside the source) -> DocumentVersion
(the bytes of one upload, deduplicated by sha256, with status and progress) -> Chunk (a piece
of the parsed text with its heading path, section number, block type and vectors). Only the
newest ready version of each document is searched (``Chunk.searchable``) unless a question or
filter names another version.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from pgvector.django import SparseVectorField, VectorField

from knowledge.querysets import ChunkQuerySet, DocumentQuerySet, SourceQuerySet, VersionQuerySet
from knowledge.roles import Role
from knowledge.synonyms import key, normalise


def redact_url(url: str) -> str:
    """The URL without a password or token in it: safe to show, log and store in errors."""
    parts = urlsplit(url)
    if not parts.netloc or "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"***@{host}"))


class Source(models.Model):
    class Kind(models.TextChoices):
        WIKI = "wiki", _("Wiki")
        SPECS = "specs", _("Specifications")
        CHECKLISTS = "checklists", _("Checklists")
        TRACKER = "tracker", _("Tracker")
        UPLOADS = "uploads", _("Uploads")
        FOLDER = "folder", _("Drop folder")

    class Connector(models.TextChoices):
        NONE = "", _("None (uploads, the command line)")
        GIT = "git", _("Git repository")
        FOLDER = "folder", _("Folder on the server")
        TRACKER = "tracker", _("Issue tracker")

    class SyncStatus(models.TextChoices):
        NEVER = "", _("Never synced")
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Syncing")
        OK = "ok", _("Synced")
        FAILED = "failed", _("Failed")

    SYNC_ACTIVE = (SyncStatus.QUEUED, SyncStatus.RUNNING)

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.UPLOADS)
    description = models.TextField(blank=True)
    base_url = models.CharField(
        max_length=500, blank=True, help_text=_("A page's link is this URL joined with its path.")
    )
    root_path = models.CharField(
        max_length=1000, blank=True, help_text=_("Folder this source was loaded or synced from.")
    )
    priority = models.PositiveSmallIntegerField(
        default=1,
        help_text=_("Cascade tier: tier 1 is searched first, the next only if it finds nothing."),
    )
    prefer_fresh = models.BooleanField(
        default=False, help_text=_("Break score ties in favour of the newer document.")
    )
    mcp_listed = models.BooleanField(
        default=True,
        help_text=_("Coding agents (MCP) get an ask_<tool> tool that answers from this source."),
    )
    mcp_tool = models.CharField(
        max_length=40,
        blank=True,
        help_text=_(
            "The tool's name after ask_ (e.g. wiki, checklists, tracker); sources with the "
            "same name share one tool. Empty: the source's kind."
        ),
    )
    role = models.CharField(
        max_length=20,
        choices=Role.choices,
        blank=True,
        help_text=_(
            "What its documents are for testing (requirements, tests, wiki...); empty: read "
            "from each document."
        ),
    )
    is_public = models.BooleanField(default=True, help_text=_("Every signed-in user may read it."))
    restricted = models.BooleanField(
        default=False,
        help_text=_(
            "Only its named readers and groups may read it: staff included, superusers not."
        ),
    )
    readers = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")
    reader_groups = models.ManyToManyField("auth.Group", blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    # --- sync (knowledge.sources): where the documents come from, how the last sync went ---
    # The connector is how documents arrive; ``kind`` stays what they are (a wiki kept in git
    # is still a wiki, and the cascade and the MCP tools speak of wikis, not of git).
    connector = models.CharField(
        max_length=20,
        choices=Connector.choices,
        blank=True,
        help_text=_("How documents arrive; empty: uploads and the command line only."),
    )
    sync_url = models.CharField(
        max_length=1000,
        blank=True,
        help_text=_("Git: any URL git can fetch, or a local path. Folder: the folder's path."),
    )
    branch = models.CharField(
        max_length=200, blank=True, help_text=_("Empty: the repository's default branch.")
    )
    subpath = models.CharField(
        max_length=500,
        blank=True,
        help_text=_("Only files under this folder; document paths are relative to it."),
    )
    history_depth = models.PositiveSmallIntegerField(
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text=_("The last N commits of each page become its versions (1: its current text)."),
    )
    sync_interval_minutes = models.PositiveIntegerField(
        default=15, help_text=_("The scheduler syncs it this often; 0: only on demand.")
    )
    sync_requested_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_synced_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_sync_status = models.CharField(
        max_length=20, choices=SyncStatus.choices, blank=True, editable=False
    )
    last_sync_result = models.CharField(max_length=500, blank=True, editable=False)
    last_sync_error = models.TextField(blank=True, editable=False)
    sync_cursor = models.CharField(
        max_length=200,
        blank=True,
        editable=False,
        help_text=_("Where the next sync starts: the last commit synced (git)."),
    )

    objects = SourceQuerySet.as_manager()

    class Meta:
        verbose_name = _("source")
        verbose_name_plural = _("sources")
        ordering = ["priority", "name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        # A name that reads like another source's ("Secret\u00a0A", "Ѕecret A" beside
        # "Secret A") would pass its documents off as that source's: which one stays unsaid.
        others = Source.objects.exclude(pk=self.pk) if self.pk else Source.objects.all()
        other = others.named_like(self.name) if self.name.strip() else None
        if other is not None and other.name != self.name:
            raise ValidationError(
                {
                    "name": _(
                        "Another source's name looks the same; choose one that reads differently."
                    )
                }
            )

    def audit_sources(self) -> list[int]:
        """The sources an audit event about this row is about (``portal.admin_audit``)."""
        return [self.pk]

    @property
    def is_syncing(self) -> bool:
        return self.last_sync_status in self.SYNC_ACTIVE

    @property
    def display_url(self) -> str:
        """Where it syncs from, without a password or token."""
        return redact_url(self.sync_url)


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


class DocumentTerm(models.Model):
    """How often a lexeme occurs in a document's searchable text: the inverted index of
    document-level BM25 (``knowledge.retrieval.documents``), kept by ``store``."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    lexeme = models.TextField()
    tf = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["lexeme", "document"], name="documentterm_unique")
        ]
        indexes = [models.Index(fields=["document"], name="documentterm_document")]

    def __str__(self) -> str:
        return f"{self.lexeme} x{self.tf}"


class DocumentTermStat(models.Model):
    """How many of one source's searchable documents hold a lexeme: the document frequency of
    document-level BM25, kept with ``knowledge_documentterm`` (``knowledge.documentstats``) so
    that a search reads it in one index lookup instead of counting documents. Per source, like
    ``TermStat``: a search sums the sources its user may read only."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="+")
    lexeme = models.TextField()
    df = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["lexeme", "source"], name="documenttermstat_unique")
        ]

    def __str__(self) -> str:
        return f"{self.lexeme}: {self.df}"


class DocumentCorpusStat(models.Model):
    """One source's searchable documents (those with a full-text vector): their number and
    summed length (document-level BM25's N and avgdl)."""

    source = models.OneToOneField(
        Source, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    documents = models.BigIntegerField(default=0)
    total_length = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.documents} documents"


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


class Chunk(models.Model):
    class BlockType(models.TextChoices):
        TEXT = "text", _("Text")
        TABLE = "table", _("Table")
        TEST_CASE = "test_case", _("Test case")
        LIST = "list", _("List")
        CODE = "code", _("Code")
        ROW = "row", _("Table rows (searched for their table)")

    version = models.ForeignKey(DocumentVersion, on_delete=models.CASCADE, related_name="chunks")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()
    text = models.TextField()
    heading_path = ArrayField(models.CharField(max_length=500), default=list, blank=True)
    section = models.CharField(max_length=50, blank=True)
    sections = ArrayField(models.CharField(max_length=50), default=list, blank=True)
    block_type = models.CharField(max_length=20, choices=BlockType.choices, default=BlockType.TEXT)
    block_start = models.PositiveIntegerField(default=0)
    block_end = models.PositiveIntegerField(default=0)
    page = models.PositiveIntegerField(null=True, blank=True)
    sheet = models.CharField(max_length=200, blank=True)
    row_start = models.PositiveIntegerField(null=True, blank=True)
    row_end = models.PositiveIntegerField(null=True, blank=True)
    meta = models.JSONField(default=dict, blank=True)
    token_count = models.PositiveIntegerField(default=0)
    language = models.CharField(max_length=20, default="simple")
    # No fixed dimension: each embedding model gets its own partial HNSW index on an
    # expression cast to its dimension (see knowledge.vector_index).
    embedding = VectorField(null=True, blank=True)
    sparse = SparseVectorField(null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True)
    # SHA-1 of the text the model embedded: a later version's unchanged chunk reuses the vector.
    embed_key = models.CharField(max_length=40, blank=True)
    search_vector = SearchVectorField(null=True, editable=False)
    lexeme_count = models.PositiveIntegerField(default=0)  # BM25 length: lexemes in search_vector
    searchable = models.BooleanField(default=False)

    objects = ChunkQuerySet.as_manager()

    class Meta:
        ordering = ["version", "position"]
        constraints = [
            models.UniqueConstraint(fields=["version", "position"], name="chunk_unique_position")
        ]
        indexes = [
            GinIndex(fields=["search_vector"], name="chunk_search_vector"),
            models.Index(fields=["document", "searchable"], name="chunk_document_searchable"),
            models.Index(
                fields=["source", "block_type"],
                name="chunk_searchable_source",
                condition=Q(searchable=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.version} #{self.position}"

    @property
    def heading(self) -> str:
        return " › ".join(self.heading_path)


class ChunkVector(models.Model):
    """A chunk's second vectors: multilingual-e5-small's reading of each of its units (its
    sentences, list items and table rows: ``knowledge.units``), made by a follow-up task once
    the version is searchable on its words and first vector (``knowledge.ingest.second``).

    Search reads them for its candidates (how close the chunk's best sentence is to the
    question), the answer check for whether anything found is close enough to answer, and the
    extractive answer for the sentence to quote. ``units_key`` says which cutting of the text
    they belong to: vectors of another cutting are not read. They live beside the chunk, not
    in its row: adding them later rewrites none of the chunk's indexes.
    """

    chunk = models.OneToOneField(
        Chunk, primary_key=True, on_delete=models.CASCADE, related_name="second_vector"
    )
    model_id = models.CharField(max_length=200)
    cutting = models.PositiveSmallIntegerField(default=1)  # knowledge.units.CUTTING
    units_key = models.CharField(max_length=40)  # SHA-1 of the units' texts, in order
    count = models.PositiveIntegerField(default=0)
    vectors = models.BinaryField()  # float16, count x dimensions, row-major

    def __str__(self) -> str:
        return f"{self.chunk_id} ({self.model_id}, {self.count} units)"


class TermStat(models.Model):
    """Document frequency of a lexeme over one source's searchable chunks (BM25's IDF).

    PostgreSQL's full-text ranking has no IDF; this table keeps it, updated in the same
    transaction that makes chunks searchable or not (``knowledge.termstats``). Kept per source
    so that a search sums the sources its user may read only: a private document's words must
    not move anyone else's scores.
    """

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="+")
    lexeme = models.TextField()
    df = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["lexeme", "source"], name="termstat_unique_lexeme")
        ]

    def __str__(self) -> str:
        return f"{self.lexeme}: {self.df}"


class CorpusStat(models.Model):
    """One source's searchable chunks: their number and summed length (BM25's avgdl)."""

    source = models.OneToOneField(
        Source, primary_key=True, on_delete=models.CASCADE, related_name="+"
    )
    chunks = models.BigIntegerField(default=0)
    total_length = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.source_id}: {self.chunks} chunks"


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
