"""Response headers for signed-in pages: nothing that shows document text or answers is kept
by a browser's or a proxy's cache (a shared machine, a caching proxy in front)."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control


class PrivatePagesMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            patch_cache_control(response, private=True, no_store=True)
        return response


class ContentSecurityPolicyMiddleware:
    """Every page says where its scripts, styles and requests may come from: this server only,
    no inline script or event handler (the portal's behaviour lives in static/kb/portal.js), no
    framing. Retrieved document text shown on a page can therefore never run as a script, even
    if a sanitiser missed something. Inline ``style`` attributes stay allowed (layout only)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = settings.CONTENT_SECURITY_POLICY
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        return response
