from __future__ import annotations

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from feedback.models import Rating
from portal.admin_audit import AuditedModelAdmin


@admin.register(Rating)
class RatingAdmin(AuditedModelAdmin):
    """Staff read the rating as given and write what the assistant should have done."""

    list_display = ["message", "value", "reasons", "user", "updated_at", "has_expected_answer"]
    list_filter = ["value", "expected_behaviour", "updated_at"]
    search_fields = ["message__question", "comment", "expected_answer"]
    readonly_fields = ["message", "user", "value", "reasons", "comment", "created_at", "updated_at"]
    fields = [*readonly_fields[:5], "expected_behaviour", "expected_answer", *readonly_fields[5:]]
    list_select_related = ["message", "user"]

    def has_add_permission(self, request) -> bool:
        return False  # ratings come from the buttons under the answers

    @admin.display(boolean=True, description=_("Expected answer"))
    def has_expected_answer(self, rating: Rating) -> bool:
        return bool(rating.expected_answer)
