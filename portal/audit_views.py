"""The audit log page (staff): filters, and the same selection as CSV."""

from __future__ import annotations

import csv
import json

from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from portal.audit import ACTIONS
from portal.models import AuditEvent
from portal.params import within_dates


def audit_queryset(params):
    """Events filtered by action, user name, text and a date range (bad values ignored)."""
    events = AuditEvent.objects.all()
    if params.get("action") in ACTIONS:
        events = events.filter(action=params["action"])
    if params.get("user"):
        events = events.filter(actor_name__iexact=params["user"].strip())
    if params.get("q"):
        events = events.filter(target__icontains=params["q"].strip())
    return within_dates(events, params, "at")


@staff_member_required
@require_GET
def audit_log(request: HttpRequest) -> HttpResponse:
    """Who did what, when and from where; ``?format=csv`` downloads the same selection."""
    events = audit_queryset(request.GET)
    if request.GET.get("format") == "csv":
        return _csv(events)
    page = Paginator(events, 100).get_page(request.GET.get("page"))
    return render(
        request,
        "portal/audit.html",
        {"page": page, "actions": ACTIONS, "params": request.GET},
    )


def _csv(events) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="audit-log.csv"'
    writer = csv.writer(response)
    writer.writerow(["when", "who", "action", "what", "detail", "from"])
    for event in events.iterator():
        writer.writerow(
            [
                event.at.isoformat(),
                cell(event.actor_name),
                cell(event.action),
                cell(event.target),
                cell(json.dumps(event.detail, ensure_ascii=False)),
                event.address or "",
            ]
        )
    return response


# A spreadsheet reads a cell starting with one of these as a formula: a failed sign-in named
# =HYPERLINK(...) would become a link (or worse) in the staff member's Excel.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value: object) -> str:
    """A CSV cell a spreadsheet shows as text: a leading ' before what could start a formula
    (OWASP's advice for CSV injection)."""
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text
