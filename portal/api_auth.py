"""Personal API tokens: create, revoke, and authenticate a JSON API request with one.

API views take ``Authorization: Bearer <token>`` and nothing else: no session cookie, so they
are exempt from CSRF (a browser cannot be tricked into sending a header it does not have).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from datetime import timedelta
from functools import wraps

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt

from portal import audit
from portal.addresses import client_address
from portal.models import ApiToken

TOKEN_PREFIX = "kb_"
LAST_USED_PRECISION = timedelta(minutes=1)  # at most one write per token and minute


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(user, name: str) -> tuple[ApiToken, str]:
    """A new token for ``user``: the row, and the token itself (shown once, never stored)."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken.objects.create(
        user=user,
        name=name.strip()[:100] or "API token",
        prefix=token[:10],
        token_hash=hash_token(token),
    )
    return row, token


def revoke_token(user, token_id: int) -> bool:
    """Revoke one of ``user``'s own tokens; False when there is no such active token."""
    return bool(
        ApiToken.objects.filter(pk=token_id, user=user, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
    )


def user_for_token(token: str):
    """The active user of an active token, or None. Records when the token was last used."""
    if not token.startswith(TOKEN_PREFIX):
        return None
    row = (
        ApiToken.objects.active()
        .select_related("user")
        .filter(token_hash=hash_token(token))
        .first()
    )
    if row is None:
        return None
    now = timezone.now()
    if row.last_used_at is None or now - row.last_used_at > LAST_USED_PRECISION:
        ApiToken.objects.filter(pk=row.pk).update(last_used_at=now)
    return row.user


def authenticate_token(token: str, address: str, request=None) -> tuple[object | None, int]:
    """(the token's active user or None, seconds to wait): a wrong token counts like a wrong
    password, per (token prefix, address), and a pair cooling off is refused before the lookup
    (``portal.signin``: why a token is looked up before it is counted)."""
    from portal import signin

    account = "API token " + token[:10]
    wait = signin.cooling_off(account, address)
    if wait:
        return None, wait
    user = user_for_token(token)
    if user is None:
        signin.failed(signin.begin(account, address), request)
    return user, 0


def throttled(wait: int) -> JsonResponse:
    response = JsonResponse(
        {"error": signin_wait_message(wait)}, status=429, json_dumps_params={"ensure_ascii": False}
    )
    response["Retry-After"] = str(wait)
    return response


def signin_wait_message(wait: int) -> str:
    from portal.signin import wait_message

    return wait_message(wait)


def bearer_token(request: HttpRequest) -> str:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def unauthorized(message: str) -> JsonResponse:
    response = JsonResponse(
        {"error": str(message)}, status=401, json_dumps_params={"ensure_ascii": False}
    )
    response["WWW-Authenticate"] = 'Bearer realm="knowledge-belt"'
    return response


def api_token_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Authenticate with a personal API token only: sets ``request.user`` from it, or answers
    401 JSON. A session cookie does not count (so the view needs no CSRF token)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        token = bearer_token(request)
        if not token:
            return unauthorized(_("An API token is required: Authorization: Bearer <token>."))
        user, wait = authenticate_token(token, client_address(request), request)
        if wait:
            return throttled(wait)
        if user is None:
            return unauthorized(_("The API token is not valid or has been revoked."))
        request.user = user
        audit.record(request, "token-use", request.path, token=token[: len(TOKEN_PREFIX) + 6] + "…")
        return view(request, *args, **kwargs)

    return csrf_exempt(login_not_required(wrapped))
