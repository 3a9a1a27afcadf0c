"""Rating buttons under every answer, the staff analytics page and its export."""

from __future__ import annotations

from django.contrib import messages as flash
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.middleware import HtmxDetails

from chat.models import AssistantProfile, Message
from feedback.analytics import ReportFilters, ratings
from feedback.export import export_filename, export_lines, ratings_for_export
from feedback.models import Rating
from feedback.querysets import rateable_messages
from feedback.report import analytics_report
from feedback.services import rate_answer
from knowledge.models import Source
from portal import audit
from portal.params import id_param


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


def _rateable(request: HttpRequest, pk: int) -> Message:
    message = rateable_messages(request.user).filter(pk=pk).first()
    if message is None:
        # The same answer for someone else's message as for none: a 403 would tell an
        # outsider which message ids exist.
        raise Http404(_("No such answer of yours."))
    return message


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def rate(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """POST: thumbs up or down (the reason form sends ``details`` with reasons and comment).
    GET: the buttons again, with the reason form open for editing."""
    message = _rateable(request, pk)
    if request.method == "GET":
        rating = Rating.objects.filter(message=message, user=request.user).first()
        editing = True
    else:
        details = "details" in request.POST
        try:
            rating = rate_answer(
                message,
                request.user,
                request.POST.get("value", ""),
                reasons=request.POST.getlist("reasons") if details else None,
                comment=request.POST.get("comment", "") if details else None,
            )
        except ValueError:
            return HttpResponseBadRequest(_("value must be up or down"))
        editing = rating.value == Rating.Value.DOWN and not details
    if not request.htmx:
        url = reverse("conversation", args=[message.conversation_id])
        return redirect(f"{url}#answer-{message.pk}")
    return render(
        request,
        "chat/_rating_slot.html",
        {"message": message, "feedback_rating": rating, "editing": editing},
    )


def _staff_only(request: HttpRequest) -> None:
    if not request.user.is_staff:
        raise PermissionDenied(_("The analytics are for staff."))


@require_GET
@vary_on_headers("HX-Request")
def analytics_page(request: HtmxHttpRequest) -> HttpResponse:
    """Questions, outcomes, ratings, citations, content gaps and latency for a period."""
    _staff_only(request)
    filters = ReportFilters.from_query(request.GET)
    sources = Source.objects.visible_to(request.user)
    if filters.source_id and not sources.filter(pk=filters.source_id).exists():
        filters.source_id = None  # a source this staff member may not read: no figures of it
    context = {
        "filters": filters,
        "sources": sources,
        "profiles": AssistantProfile.objects.all(),
        "sign_in_alerts": audit.sign_in_alerts(*filters.bounds),
        **analytics_report(filters, viewer=request.user),
    }
    if request.htmx:
        return render(request, "feedback/analytics.html#report", context)
    return render(request, "feedback/analytics.html", context)


@require_POST
def export(request: HttpRequest) -> HttpResponse:
    """The chosen ratings (or every rating of the period) as a JSON Lines file download."""
    _staff_only(request)
    if request.POST.get("scope") == "period":
        ids = list(ratings(ReportFilters.from_query(request.POST)).values_list("pk", flat=True))
    else:
        ids = [i for i in map(id_param, request.POST.getlist("rating")) if i]
    if not ids:
        flash.error(request, _("Choose at least one rated answer to export."))
        return redirect(reverse("feedback"))
    rows = ratings_for_export(ids=ids, viewer=request.user)
    body = "".join(export_lines(rows))
    # Answers about a source this staff member may not read are left out, and counted.
    audit.record(request, "export", f"{len(ids)} ratings", left_out=len(ids) - rows.count())
    response = HttpResponse(body, content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{export_filename()}"'
    return response
