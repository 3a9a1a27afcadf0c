from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from portal.health import as_json, service_states


@login_not_required
@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """JSON with the state of the database, Redis and the workers; 200 only when all are up."""
    payload = as_json(service_states())
    return JsonResponse(payload, status=200 if payload["status"] == "ok" else 503)
