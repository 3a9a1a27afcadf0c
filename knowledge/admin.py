from __future__ import annotations

from django import forms
from django.contrib import admin
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from knowledge.models import Document, DocumentVersion, Source, Synonym
from knowledge.sources.problems import sync_settings_problems
from knowledge.sources.schedule import request_sync
from portal import audit
from portal.admin_audit import AuditedModelAdmin

SYNC_ORIGIN = {"connector", "sync_url", "branch", "subpath"}


class SourceForm(forms.ModelForm):
    """A source that syncs itself names where it syncs from in a form the connector reads
    (the admin makes the form's fields from its fieldsets)."""

    def clean(self) -> dict:
        cleaned = super().clean()
        # The instance gets the form's values only after clean(): check them on a copy.
        probe = Source(**{f: cleaned.get(f, getattr(self.instance, f)) for f in SYNC_ORIGIN})
        for field, problem in sync_settings_problems(probe).items():
            self.add_error(field if field in self.fields else None, problem)
        return cleaned


@admin.register(Source)
class SourceAdmin(AuditedModelAdmin):
    form = SourceForm
    list_display = [
        "name",
        "kind",
        "role",
        "priority",
        "prefer_fresh",
        "is_public",
        "restricted",
        "base_url",
        "connector",
        "last_synced_at",
        "last_sync_status",
    ]
    list_editable = ["priority", "prefer_fresh", "is_public", "restricted"]
    filter_horizontal = ["readers", "reader_groups"]
    search_fields = ["name"]
    actions = ["sync_now"]
    readonly_fields = [
        "last_synced_at",
        "last_sync_status",
        "last_sync_result",
        "last_sync_error",
        "sync_cursor",
    ]
    fieldsets = [
        (None, {"fields": ["name", "kind", "role", "description", "base_url", "root_path"]}),
        (_("Search"), {"fields": ["priority", "prefer_fresh"]}),
        (_("Coding agents (MCP)"), {"fields": ["mcp_listed", "mcp_tool"]}),
        (_("Readers"), {"fields": ["is_public", "restricted", "readers", "reader_groups"]}),
        (
            _("Sync"),
            {
                "fields": [
                    "connector",
                    "sync_url",
                    "branch",
                    "subpath",
                    "history_depth",
                    "sync_interval_minutes",
                    *readonly_fields,
                ]
            },
        ),
    ]

    @admin.action(description=_("Sync now"))
    def sync_now(self, request, queryset) -> None:
        queued = [(s.pk, s.name) for s in queryset.exclude(connector="") if request_sync(s)]
        for pk, name in queued:
            audit.record(request, "source-sync", name, sources=[pk], queued=True)
        self.message_user(
            request,
            gettext("Syncing: %(sources)s.") % {"sources": ", ".join(n for _, n in queued)}
            if queued
            else gettext("Nothing to sync (already under way, or no connector)."),
        )

    def save_model(self, request, obj, form, change) -> None:
        if change and SYNC_ORIGIN & set(form.changed_data):
            obj.sync_cursor = ""  # another origin: the next sync lists it whole
        super().save_model(request, obj, form, change)
        changed = [f for f in form.changed_data if f not in ("readers", "reader_groups")]
        if changed or not change:
            audit.record(
                request,
                "source-change",
                obj.name,
                sources=[obj.pk],
                changed=changed or ["created"],
            )

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        if {"readers", "reader_groups", "is_public", "restricted"} & set(form.changed_data):
            source = form.instance
            audit.record(
                request,
                "permissions",
                source.name,
                sources=[source.pk],
                public=source.is_public,
                restricted=source.restricted,
                readers=sorted(u.get_username() for u in source.readers.all()),
                groups=sorted(g.name for g in source.reader_groups.all()),
            )


class VersionInline(admin.TabularInline):
    model = DocumentVersion
    extra = 0
    fields = ["number", "label", "label_date", "status", "chunk_count", "filename", "created_at"]
    readonly_fields = ["number", "status", "chunk_count", "filename", "created_at"]
    show_change_link = True
    can_delete = False


@admin.register(Document)
class DocumentAdmin(AuditedModelAdmin):
    list_display = ["title", "source", "role", "detected_role", "current_version", "removed_at"]
    list_filter = ["source", "role", "detected_role"]
    search_fields = ["title", "path", "aliases"]
    readonly_fields = ["detected_role", "current_version", "created_at", "updated_at"]
    inlines = [VersionInline]


@admin.register(DocumentVersion)
class DocumentVersionAdmin(AuditedModelAdmin):
    list_display = [
        "document",
        "number",
        "label",
        "status",
        "progress",
        "chunk_count",
        "created_at",
    ]
    list_filter = ["status", "format"]
    search_fields = ["document__title", "label", "sha256"]
    exclude = ["parsed"]
    readonly_fields = [
        "document",
        "number",
        "sha256",
        "file",
        "filename",
        "size",
        "format",
        "status",
        "progress",
        "stage",
        "error",
        "block_count",
        "chunk_count",
        "table_count",
        "page_count",
        "ocr",
        "timings",
        "embedding_model",
        "added_by",
        "added_via",
        "claim_token",
        "heartbeat_at",
        "attempts",
        "created_at",
        "ready_at",
    ]


@admin.register(Synonym)
class SynonymAdmin(AuditedModelAdmin):
    """Staff add synonyms of their own (document left empty); the read ones come and go with
    their documents."""

    list_display = ["term", "equivalent", "document"]
    search_fields = ["term", "equivalent"]
    list_filter = [("document", admin.EmptyFieldListFilter)]
    raw_id_fields = ["document"]
