"""Rate limits, counted in Redis (shared by every web process): at most
``KB_RATE_ASK_PER_MINUTE`` questions and ``KB_RATE_SEARCH_PER_MINUTE`` searches per user (pages,
API tokens and MCP alike); past that, 429 with ``Retry-After``. Sign-in throttling is
``portal.signin``.

If Redis cannot be reached the limits are not applied (logged): an outage of the counter must
not lock everybody out of the portal.
"""

from __future__ import annotations

import logging
import time
from functools import lru_cache

from django.conf import settings
from django.utils.translation import gettext as _

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
