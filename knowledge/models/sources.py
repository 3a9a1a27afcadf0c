"""Sources: where documents come from (a wiki, checklists, a tracker, uploads, a drop folder),
their place in the search's cascade, who may read them, and how they sync."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from knowledge.querysets import SourceQuerySet
from knowledge.roles import Role


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
