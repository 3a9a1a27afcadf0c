"""What staff do in the admin goes to the audit log, not only to the admin's own history: every
addition, change and deletion of every model (a source deleted with its documents, a rule
switched off), and who became staff, superuser, inactive or a member of which groups.

Every ``ModelAdmin`` of the portal derives from ``AuditedModelAdmin``; the admins of users and
groups are Django's, audited the same way (registered again in ``portal.admin``).
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin, UserAdmin

from portal import audit


def _what(obj) -> str:
    return f"{obj._meta.verbose_name} #{obj.pk}: {obj}"


def _sources(obj) -> list[int]:
    """The knowledge sources a row is about (its ``audit_sources()``: a source, a document, a
    version, an answer...): its event is shown only to staff who may read them all."""
    about = getattr(obj, "audit_sources", None)
    return list(about()) if callable(about) else []


def _changed_fields(message) -> list[str]:
    """The field names of the admin's change message (its JSON list of changes)."""
    fields: list[str] = []
    for change in message if isinstance(message, list) else []:
        for kind in ("changed", "added", "deleted"):
            if kind in change:
                fields += change[kind].get("fields", []) or [change[kind].get("name", kind)]
    return fields


class AuditedModelAdmin(admin.ModelAdmin):
    """A ``ModelAdmin`` whose additions, changes and deletions are audited too."""

    def log_addition(self, request, obj, message):
        entry = super().log_addition(request, obj, message)
        audit.record(request, "admin-add", _what(obj), sources=_sources(obj), model=obj._meta.label)
        return entry

    def log_change(self, request, obj, message):
        entry = super().log_change(request, obj, message)
        audit.record(
            request,
            "admin-change",
            _what(obj),
            sources=_sources(obj),
            model=obj._meta.label,
            fields=[str(f) for f in _changed_fields(message)],
        )
        return entry

    def log_deletions(self, request, queryset):
        # Called before the rows go: their names are still there to record.
        for obj in queryset:
            audit.record(
                request, "admin-delete", _what(obj), sources=_sources(obj), model=obj._meta.label
            )
        return super().log_deletions(request, queryset)


class AuditedUserAdmin(AuditedModelAdmin, UserAdmin):
    def save_model(self, request, obj, form, change) -> None:
        existing = type(obj).objects.filter(pk=obj.pk).first() if change else None
        request._access_before = audit.access_of(existing) if existing else {}
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)  # the groups are set here
        audit.record_access_change(request, form.instance, getattr(request, "_access_before", {}))


class AuditedGroupAdmin(AuditedModelAdmin, GroupAdmin):
    pass
