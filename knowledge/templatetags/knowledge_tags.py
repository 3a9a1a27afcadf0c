"""Template filters of the knowledge pages."""

from __future__ import annotations

from django import template
from django.utils.translation import gettext_lazy as _

from knowledge.models import DocumentVersion

register = template.Library()

# Words the ingest pipeline stores in DocumentVersion.stage besides the statuses themselves.
_EXTRA = {
    "none": _("no version"),
    "queued": _("queued"),
    "waiting to retry": _("waiting to retry"),
}


@register.filter
def status_label(value: str) -> str:
    """A version's status (or ingest stage) in the interface's language: ``ready`` -> "Ready"."""
    value = value or "queued"
    try:
        return str(DocumentVersion.Status(value).label)
    except ValueError:
        return str(_EXTRA.get(value, value))
