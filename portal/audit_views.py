"""The audit log page (staff): filters, and the same selection as CSV."""

from __future__ import annotations

import csv
import json
import re
import unicodedata

from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from portal.audit import ACTIONS
from portal.models import AuditEvent
from portal.params import within_dates


def audit_queryset(params, viewer):
    """Events filtered by action, user name, text and a date range (bad values ignored), each
    marked ``hidden`` when it is about a source ``viewer`` may not read (then its text matches
    no filter either)."""
    events = AuditEvent.objects.with_access(viewer)
    if params.get("action") in ACTIONS:
        events = events.filter(action=params["action"])
    if params.get("user"):
        events = events.filter(actor_name__iexact=params["user"].strip())
    if params.get("q"):
        events = events.text_contains(params["q"].strip())
    return within_dates(events, params, "at")


@staff_member_required
@require_GET
def audit_log(request: HttpRequest) -> HttpResponse:
    """Who did what, when and from where; ``?format=csv`` downloads the same selection."""
    events = audit_queryset(request.GET, request.user)
    if request.GET.get("format") == "csv":
        return _csv(events)
    page = Paginator(events, 100).get_page(request.GET.get("page"))
    return render(
        request,
        "portal/audit.html",
        {"page": page, "actions": ACTIONS, "params": request.GET},
    )


# In the CSV, instead of the target and detail of an event about a source the viewer may not read.
HIDDEN = "(about a source you may not read)"


def _csv(events) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="audit-log.csv"'
    # Every field quoted: a ";" inside one stays inside it in a spreadsheet that splits on ";".
    writer = csv.writer(response, quoting=csv.QUOTE_ALL)
    writer.writerow(["when", "who", "action", "what", "detail", "from"])
    for event in events.iterator():
        what, detail = (
            (HIDDEN, "")
            if event.hidden
            else (event.target, json.dumps(event.detail, ensure_ascii=False))
        )
        writer.writerow(
            [
                event.at.isoformat(),
                cell(event.actor_name),
                cell(event.action),
                cell(what),
                cell(detail),
                event.address or "",
            ]
        )
    return response


# A spreadsheet reads a field starting with one of these as a formula: a failed sign-in named
# =HYPERLINK(...) would become a link (or worse) in the staff member's Excel. Their fullwidth
# and small forms too ("＝", "﹢"): some spreadsheets read them as the signs.
FORMULA_STARTS = frozenset("=+-@\t\r") | frozenset(
    chr(code)
    for code in range(0x80, 0x10000)
    if unicodedata.normalize("NFKC", chr(code)) in ("=", "+", "-", "@")
)
# Where a spreadsheet starts a field: the cell's start, and after a comma or a semicolon (Excel
# in a Russian or German locale splits a line on ";", quoted or not, when it opens a .csv).
_FIELD_START = re.compile(r"(?:^|(?<=[,;]))[ \u00a0\u3000]*")


def cell(value: object) -> str:
    """A CSV cell a spreadsheet shows as text: a leading ' before whatever could start a formula,
    at the cell's start and after every "," or ";" in it (OWASP's advice for CSV injection,
    with the separators of every locale)."""

    def neutral(start: re.Match[str]) -> str:
        following = start.string[start.end() : start.end() + 1]
        return "'" + start.group(0) if following in FORMULA_STARTS else start.group(0)

    return _FIELD_START.sub(neutral, str(value))
