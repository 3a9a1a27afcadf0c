from __future__ import annotations

from django.contrib import admin

from portal.admin_audit import AuditedModelAdmin
from scenarios.models import Analysis


@admin.register(Analysis)
class AnalysisAdmin(AuditedModelAdmin):
    list_display = ("title", "user", "status", "task_key", "created_at")
    list_filter = ("status",)
    search_fields = ("title", "description", "task_key")
    readonly_fields = ("questions", "answers", "tree", "llm_model", "created_at", "updated_at")
