"""Sign-in throttling that protects accounts without handing anyone a way to lock them.

What django-axes does with ``AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]`` and a
growing cool-off, with one difference that is the reason it is not django-axes: axes counts a
failure after the password was checked (its issue #592, closed as "won't fix"), so 150 wrong
passwords sent at once are all checked before the first one is counted. Here every attempt is
counted *before* its check, atomically in Redis (one Lua script), so at most
``KB_LOGIN_FAILURES`` attempts of one pair are ever checked, however many arrive together.

- **Per (account, address) pair**: the ``KB_LOGIN_FAILURES``-th attempt of a pair starts a
  cool-off for that pair, ``KB_LOGIN_COOLOFF_MINUTES`` long and doubling with each attempt
  checked after one (at most ``KB_LOGIN_LOCKOUT_MINUTES``). Attempts during a cool-off are
  refused unchecked and not counted. A success clears the pair. The account's right password
  from any other address keeps working: guessing from one place never locks its owner out.
- **Per account, across addresses**: ``KB_LOGIN_ACCOUNT_FAILURES`` attempts of one account
  within ``KB_LOGIN_ALERT_MINUTES`` from addresses it has not signed in from (in the last 30
  days), counted before their check too, and the rest of that period such addresses are
  refused unchecked: guessing from many addresses gets that many guesses, not five per
  address. An address the account signed in from is never refused by it, so its owner keeps
  signing in from their usual places meanwhile. ``KB_LOGIN_ALERT_FAILURES`` failed or refused
  attempts of one account within the period raise a ``sign-in-alert`` audit event, once per
  period, which the audit log and the feedback page show to staff.
- **Addresses** are counted by their /64 network for IPv6 (one host is given a /64 and may use
  any address in it), one by one for IPv4 (``portal.addresses.address_group``).
- **Where**: every form that checks a password (``/login/``, ``/admin/login/``, directory
  accounts behind them: ``portal.ldap_auth``) and the API token check (``portal.api_auth``:
  the JSON API and ``/mcp``). The address is ``portal.addresses.client_address``.
- **API tokens** are 256 random bits, looked up by their SHA-256 in an index: nothing to guess
  and nothing learnt from a lookup. A token is looked up first and only a wrong one is counted
  (per token prefix and address, the same cool-off; a pair cooling off is refused before the
  lookup): counted before its lookup, an agent's first burst of parallel requests with its own
  token would cool that token off.

If Redis cannot be reached nothing is throttled (logged): an outage of the counter must not
keep everybody out of the portal.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import time
from dataclasses import dataclass

import redis
from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from portal import audit
from portal.addresses import address_group, client_address
from portal.throttle import _redis

logger = logging.getLogger(__name__)

PAIR_MEMORY_SECONDS = 24 * 3600  # a pair's count is forgotten a day after its last attempt
KNOWN_MEMORY_SECONDS = 30 * 24 * 3600  # an address the account signed in from stays known

# KEYS[1]: the pair's hash; KEYS[2]: the account's attempts from addresses it has not signed in
# from, this period; KEYS[3]: the address groups it signed in from. ARGV: now, free attempts,
# first cool-off, longest cool-off, memory, the account's ceiling, the address group, the
# seconds left in the period, the period. Returns {allowed (0/1), seconds to wait, 1 when this
# attempt started a cool-off, 1 when the account's ceiling refused it, 1 when it counted
# towards that ceiling}.
_RESERVE = """
local now = tonumber(ARGV[1])
local wait_until = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if wait_until > now then
  return {0, math.ceil(wait_until - now), 0, 0, 0}
end
local counted = 0
if redis.call('SISMEMBER', KEYS[3], ARGV[7]) == 0 then
  if tonumber(redis.call('GET', KEYS[2]) or '0') >= tonumber(ARGV[6]) then
    return {0, tonumber(ARGV[8]), 0, 1, 0}
  end
  redis.call('INCR', KEYS[2])
  redis.call('EXPIRE', KEYS[2], ARGV[9])
  counted = 1
end
local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
local free = tonumber(ARGV[2])
local started = 0
if attempts >= free then
  local cooloff = math.min(tonumber(ARGV[3]) * 2 ^ (attempts - free), tonumber(ARGV[4]))
  redis.call('HSET', KEYS[1], 'until', tostring(now + cooloff))
  started = 1
end
redis.call('EXPIRE', KEYS[1], ARGV[5])
return {1, 0, started, 0, counted}
"""


def _digest(text: str) -> str:
    return hashlib.sha256(text.strip().casefold().encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class Attempt:
    """One sign-in attempt, counted before its check."""

    account: str
    address: str
    wait: int = 0  # seconds until the pair may try again; > 0: refused unchecked
    cooloff_started: bool = False
    over_ceiling: bool = False  # refused by the account's ceiling, not by the pair's cool-off
    counted: bool = False  # counted towards the account's ceiling (an address it is new from)

    @property
    def refused(self) -> bool:
        return self.wait > 0

    @property
    def pair_key(self) -> str:
        return f"kb:signin:pair:{_digest(self.account)}:{address_group(self.address)}"

    @property
    def known_key(self) -> str:
        return f"kb:signin:known:{_digest(self.account)}"


def _period() -> tuple[int, int]:
    """The current period of the account's counters: (its number, seconds left in it)."""
    window = settings.LOGIN_ALERT_MINUTES * 60
    now = int(time.time())
    return now // window, window - now % window


def _ceiling_key(account: str) -> str:
    return f"kb:signin:new-addresses:{_digest(account)}:{_period()[0]}"


def begin(account: str, address: str) -> Attempt:
    """Count an attempt of ``account`` from ``address`` before checking it; ``refused`` when the
    pair is cooling off (then it must not be checked)."""
    attempt = Attempt(account, address)
    _, left = _period()
    try:
        allowed, wait, started, over, counted = _redis().eval(
            _RESERVE,
            3,
            attempt.pair_key,
            _ceiling_key(account),
            attempt.known_key,
            f"{time.time():.3f}",
            settings.LOGIN_FAILURES,
            settings.LOGIN_COOLOFF_MINUTES * 60,
            settings.LOGIN_LOCKOUT_MINUTES * 60,
            PAIR_MEMORY_SECONDS,
            settings.LOGIN_ACCOUNT_FAILURES,
            address_group(address),
            left,
            settings.LOGIN_ALERT_MINUTES * 60 + 60,
        )
    except redis.RedisError:
        logger.warning("sign-in not throttled: Redis unreachable", exc_info=True)
        return attempt
    if not allowed:
        return Attempt(account, address, wait=max(1, int(wait)), over_ceiling=bool(over))
    return Attempt(account, address, cooloff_started=bool(started), counted=bool(counted))


def cooling_off(account: str, address: str) -> int:
    """Seconds until ``account`` may be tried from ``address`` again (0: now), counting nothing."""
    try:
        until = _redis().hget(Attempt(account, address).pair_key, "until")
    except redis.RedisError:
        logger.warning("sign-in not throttled: Redis unreachable", exc_info=True)
        return 0
    wait = float(until or 0) - time.time()
    return max(1, math.ceil(wait)) if wait > 0 else 0


def succeeded(attempt: Attempt) -> None:
    """The credentials were right: the pair starts afresh, the address is known to the account
    (its ceiling never refuses it), and the attempt does not count towards that ceiling."""
    with contextlib.suppress(redis.RedisError):
        pipe = _redis().pipeline()
        pipe.delete(attempt.pair_key)
        pipe.sadd(attempt.known_key, address_group(attempt.address))
        pipe.expire(attempt.known_key, KNOWN_MEMORY_SECONDS)
        if attempt.counted:
            pipe.decr(_ceiling_key(attempt.account))
        pipe.execute()


def failed(attempt: Attempt, request=None, *, what: str = "") -> None:
    """The credentials were wrong (already counted for the pair by ``begin``), or the attempt
    was refused by the account's ceiling: audit a new cool-off, and count it for the account's
    alert."""
    if attempt.cooloff_started:
        audit.record(
            request,
            "sign-in-throttled",
            what or attempt.account,
            username=attempt.account,
            address=attempt.address,
        )
    window = settings.LOGIN_ALERT_MINUTES * 60
    key = f"kb:signin:account:{_digest(attempt.account)}:{_period()[0]}"
    try:
        pipe = _redis().pipeline()
        pipe.incr(key)
        pipe.expire(key, window + 60)
        pipe.pfadd(key + ":addresses", attempt.address)
        pipe.expire(key + ":addresses", window + 60)
        count, _, _, _ = pipe.execute()
        addresses = (
            _redis().pfcount(key + ":addresses") if count == settings.LOGIN_ALERT_FAILURES else 0
        )
    except redis.RedisError:
        logger.warning("failed sign-in not counted: Redis unreachable", exc_info=True)
        return
    if count == settings.LOGIN_ALERT_FAILURES:
        # Exactly once per account and period: the count passes the ceiling only once.
        logger.warning("sign-in alert: %s failed sign-ins for %r", count, attempt.account)
        audit.record(
            request,
            "sign-in-alert",
            what or attempt.account,
            username=attempt.account,
            failures=count,
            addresses=addresses,
            minutes=settings.LOGIN_ALERT_MINUTES,
        )


def wait_message(wait: int, *, account: bool = False) -> str:
    minutes = max(1, math.ceil(wait / 60))
    if account:
        return _("Too many failed sign-ins of this account: try again in %(minutes)d min.") % {
            "minutes": minutes
        }
    return _("Too many failed sign-ins from here: try again in %(minutes)d min.") % {
        "minutes": minutes
    }


class ThrottledSignInMixin:
    """For an ``AuthenticationForm``: the attempt is counted before ``authenticate`` runs, and
    a pair cooling off is refused without checking the password."""

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        if not username or not self.cleaned_data.get("password"):
            return super().clean()  # nothing is checked, so nothing is counted
        attempt = begin(username, client_address(self.request))
        if attempt.refused:
            if attempt.over_ceiling:
                failed(attempt, self.request)  # counted for the alert: it is guessing
            raise forms.ValidationError(
                wait_message(attempt.wait, account=attempt.over_ceiling), code="throttled"
            )
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            if self.get_user() is not None:
                # The password was right (the account may not use this form, e.g. the admin's
                # for a reader): not a guess.
                succeeded(attempt)
            else:
                failed(attempt, self.request)
            raise
        succeeded(attempt)
        return cleaned


class SignInForm(ThrottledSignInMixin, AuthenticationForm):
    """``/login/``: local and directory accounts."""

    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": gettext_lazy("Wrong user name or password."),
    }


class AdminSignInForm(ThrottledSignInMixin, AdminAuthenticationForm):
    """``/admin/login/``: the same counters as ``/login/``."""
