"""Rate limits and sign-in lockout, counted in Redis (shared by every web process).

- Sign-in: ``KB_LOGIN_FAILURES`` failed sign-ins in ``KB_LOGIN_LOCKOUT_MINUTES`` lock the
  account name and, separately, the address they came from, for that long; the right password
  does not open a locked account. A success clears the account's count.
- Questions and searches: at most ``KB_RATE_ASK_PER_MINUTE`` / ``KB_RATE_SEARCH_PER_MINUTE``
  per user (pages and API tokens alike); past that, 429 with ``Retry-After``.

If Redis cannot be reached the limits are not applied (logged): an outage of the counter must
not lock everybody out of the portal.
"""

from __future__ import annotations

import contextlib
import logging
import time
from functools import lru_cache

from django import forms
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

logger = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def _redis():
    import redis

    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1, socket_connect_timeout=1)


def hit(key: str, limit: int, window: int) -> int:
    """Count one event under ``key`` in a fixed window; the seconds to wait when over
    ``limit`` (0: allowed)."""
    import redis

    bucket = f"kb:rate:{key}:{int(time.time() // window)}"
    try:
        pipe = _redis().pipeline()
        pipe.incr(bucket)
        pipe.expire(bucket, window + 1)
        count, _ = pipe.execute()
    except redis.RedisError:
        logger.warning("rate limit not applied: Redis unreachable", exc_info=True)
        return 0
    return 0 if count <= limit else window - int(time.time()) % window


def _failures_key(kind: str, value: str) -> str:
    return f"kb:login-failures:{kind}:{value.casefold()}"


def locked_for(username: str, address: str) -> int:
    """Seconds until sign-in is possible again for this account or address (0: now)."""
    import redis

    try:
        client = _redis()
        waits = []
        for key in (_failures_key("user", username), _failures_key("ip", address)):
            count = int(client.get(key) or 0)
            if count >= settings.LOGIN_FAILURES:
                waits.append(max(1, client.ttl(key)))
        return max(waits, default=0)
    except redis.RedisError:
        logger.warning("sign-in lockout not checked: Redis unreachable", exc_info=True)
        return 0


def record_failure(username: str, address: str) -> None:
    import redis

    window = settings.LOGIN_LOCKOUT_MINUTES * 60
    try:
        pipe = _redis().pipeline()
        for key in (_failures_key("user", username), _failures_key("ip", address)):
            pipe.incr(key)
            pipe.expire(key, window)
        pipe.execute()
    except redis.RedisError:
        logger.warning("failed sign-in not counted: Redis unreachable", exc_info=True)


def clear_failures(username: str) -> None:
    import redis

    with contextlib.suppress(redis.RedisError):
        _redis().delete(_failures_key("user", username))


def client_address(request) -> str:
    return request.META.get("REMOTE_ADDR", "") or "unknown"


class LockoutAuthenticationForm(AuthenticationForm):
    """The sign-in form, refusing a locked account or address before checking the password."""

    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": gettext_lazy("Wrong user name or password."),
    }

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        address = client_address(self.request) if self.request else "unknown"
        wait = locked_for(username, address)
        if wait:
            minutes = max(1, round(wait / 60))
            raise forms.ValidationError(
                _("Too many failed sign-ins: try again in %(minutes)d min.") % {"minutes": minutes},
                code="locked",
            )
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            record_failure(username, address)
            raise
        clear_failures(username)
        return cleaned


LIMITS = {"ask": "RATE_ASK_PER_MINUTE", "search": "RATE_SEARCH_PER_MINUTE"}


def over_limit(request, kind: str, *, json: bool = False):
    """A 429 response (with ``Retry-After``) when this user is over the limit for ``kind``
    ("ask" or "search"), else None."""
    from django.http import HttpResponse, JsonResponse

    limit = getattr(settings, LIMITS[kind])
    wait = hit(f"{kind}:{request.user.pk}", limit, 60)
    if not wait:
        return None
    message = _("Too many requests: at most %(limit)d a minute; try again in %(wait)d s.") % {
        "limit": limit,
        "wait": wait,
    }
    if json:
        response = JsonResponse(
            {"error": message}, status=429, json_dumps_params={"ensure_ascii": False}
        )
    else:
        response = HttpResponse(message, status=429, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(wait)
    return response
