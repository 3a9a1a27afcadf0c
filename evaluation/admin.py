from __future__ import annotations

from django.contrib import admin

from evaluation.models import EvalRun, RegressionCase
from portal.admin_audit import AuditedModelAdmin


@admin.register(RegressionCase)
class RegressionCaseAdmin(AuditedModelAdmin):
    list_display = ("pk", "question", "group", "origin", "active", "created_at")
    list_filter = ("group", "origin", "active")
    search_fields = ("question", "expected_answer")
    raw_id_fields = ("rating", "message", "created_by")


@admin.register(EvalRun)
class EvalRunAdmin(AuditedModelAdmin):
    list_display = ("pk", "label", "status", "question_set", "started_at", "git_commit")
    list_filter = ("status",)
    readonly_fields = ("config", "metrics")
