from __future__ import annotations

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.middleware import HtmxDetails

from portal import audit
from portal.api_auth import create_token, revoke_token
from portal.capacity import slots_in_use
from portal.health import as_json, cached_service_states
from portal.i18n import preferred_language
from portal.models import ApiToken


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


@staff_member_required
@never_cache
@require_GET
def health_services(request: HttpRequest) -> JsonResponse:
    """``/healthz/services`` (staff): the status and the state of each service, from the same
    shared check as ``/healthz`` (which ``portal.health.HealthCheckMiddleware`` answers before
    any session is read)."""
    payload = as_json(cached_service_states(), details=True)
    payload["slots"] = slots_in_use()
    return JsonResponse(payload, status=200 if payload["status"] == "ok" else 503)


# --- profile: personal API tokens -----------------------------------------------------------------


def _profile_context(user, **extra) -> dict[str, object]:
    return {
        "tokens": ApiToken.objects.filter(user=user),
        "chosen_language": preferred_language(user),
        "default_language_name": dict(settings.LANGUAGES)[settings.LANGUAGE_CODE],
        **extra,
    }


def _tokens_response(request: HtmxHttpRequest, **extra) -> HttpResponse:
    template = "portal/profile.html#tokens" if request.htmx else "portal/profile.html"
    return render(request, template, _profile_context(request.user, **extra))


@require_GET
def profile(request: HtmxHttpRequest) -> HttpResponse:
    """The user's profile: the interface language, and their API tokens (create, revoke)."""
    return render(request, "portal/profile.html", _profile_context(request.user))


@require_POST
@vary_on_headers("HX-Request")
def create_api_token(request: HtmxHttpRequest) -> HttpResponse:
    """Create a token and show it this once (it is stored only as a hash)."""
    row, token = create_token(request.user, request.POST.get("name", ""))
    audit.record(request, "token-create", f"{row.name} ({row.prefix}…)")
    response = _tokens_response(request, new_token=token, new_token_row=row)
    response["Cache-Control"] = "no-store"  # the token itself is in this page
    return response


@require_POST
@vary_on_headers("HX-Request")
def revoke_api_token(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    if not revoke_token(request.user, pk):
        raise Http404(_("No such active token"))
    audit.record(request, "token-revoke", pk)
    if request.htmx:
        return _tokens_response(request)
    return redirect("profile")
