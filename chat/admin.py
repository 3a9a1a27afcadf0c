from __future__ import annotations

from django.contrib import admin

from chat.models import (
    AssistantProfile,
    ChatSettings,
    Conversation,
    Message,
    MessageSource,
    ModerationRule,
)
from portal.admin_audit import AuditedModelAdmin


@admin.register(AssistantProfile)
class AssistantProfileAdmin(AuditedModelAdmin):
    list_display = ["name", "kind", "temperature", "is_default", "position"]
    list_editable = ["position", "is_default"]
    filter_horizontal = ["allowed_sources"]


@admin.register(ChatSettings)
class ChatSettingsAdmin(AuditedModelAdmin):
    list_display = ["__str__", "chat_enabled", "refusal_text", "updated_by", "updated_at"]
    readonly_fields = ["updated_by", "updated_at"]

    def has_add_permission(self, request) -> bool:
        return not ChatSettings.objects.exists()

    def save_model(self, request, obj, form, change) -> None:
        obj.updated_by = request.user
        super().save_model(request, obj, form, change)


class MessageSourceInline(admin.TabularInline):
    model = MessageSource
    extra = 0
    fields = ["number", "title", "version_label", "section", "score", "cited"]
    readonly_fields = fields
    can_delete = False


@admin.register(Message)
class MessageAdmin(AuditedModelAdmin):
    list_display = ["created_at", "question", "outcome", "mode"]
    list_filter = ["outcome", "mode", "created_at"]
    search_fields = ["question", "answer"]
    readonly_fields = [f.name for f in Message._meta.fields]
    inlines = [MessageSourceInline]


@admin.register(Conversation)
class ConversationAdmin(AuditedModelAdmin):
    list_display = ["title", "user", "profile", "updated_at"]
    list_filter = ["profile"]
    search_fields = ["title", "user__username"]


@admin.register(ModerationRule)
class ModerationRuleAdmin(AuditedModelAdmin):
    """Staff edit what is refused before any search: patterns and term lists per kind."""

    list_display = ["name", "kind", "enabled", "position", "updated_at"]
    list_editable = ["enabled", "position"]
    list_filter = ["kind", "enabled"]
    search_fields = ["name", "patterns", "terms", "note"]
    fields = ["name", "kind", "enabled", "position", "patterns", "terms", "note"]
