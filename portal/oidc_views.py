"""The two OpenID Connect views (mozilla-django-oidc's), open without a session and answering
404 while company sign-in is off."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
)
from requests.exceptions import RequestException

from portal import audit

logger = logging.getLogger(__name__)
_start = OIDCAuthenticationRequestView.as_view()
_callback = OIDCAuthenticationCallbackView.as_view()


@login_not_required
def start(request: HttpRequest) -> HttpResponse:
    """Redirect to the provider's sign-in page (state and nonce kept in the session)."""
    if not settings.OIDC_ENABLED:
        raise Http404(_("Company sign-in is not configured"))
    return _start(request)


@login_not_required
def callback(request: HttpRequest) -> HttpResponse:
    """The provider sends the browser back here with a code: exchanged, verified, signed in.

    The provider refusing the code or the client, being down, or sending a token that does not
    verify ends on the sign-in page with a plain message (and an audit event), never a 500."""
    if not settings.OIDC_ENABLED:
        raise Http404(_("Company sign-in is not configured"))
    try:
        return _callback(request)
    except (RequestException, SuspiciousOperation) as exc:
        logger.warning("OpenID Connect sign-in failed: %s", exc)
        audit.record(request, "sign-in-failed", "oidc", reason=type(exc).__name__)
        return redirect(settings.LOGIN_REDIRECT_URL_FAILURE)
