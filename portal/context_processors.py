from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext_lazy as _

# (url name, label, staff only)
NAVIGATION = [
    ("home", _("Ask"), False),
    ("documents", _("Documents"), False),
    ("versions", _("Versions"), False),
    ("scenarios", _("Scenarios"), False),
    ("feedback", _("Feedback"), True),
    ("journal", _("Journal"), True),
    ("evaluation", _("Evaluation"), True),
    ("audit_log", _("Audit"), True),
]


def portal(request: HttpRequest) -> dict[str, object]:
    """Navigation for the base layout: pages the user may open, the current one marked."""
    user = getattr(request, "user", None)
    is_staff = bool(user and user.is_authenticated and user.is_staff)
    items = []
    for name, label, staff_only in NAVIGATION:
        if staff_only and not is_staff:
            continue
        try:
            url = reverse(name)
        except NoReverseMatch:
            continue  # a page of an app that is not installed
        current = request.path == url or (url != "/" and request.path.startswith(url))
        items.append({"url": url, "label": label, "current": current})
    return {
        "nav_items": items,
        "is_staff": is_staff,
        "oidc_enabled": settings.OIDC_ENABLED,
        "oidc_label": settings.OIDC_LABEL,
    }
