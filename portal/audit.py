"""The audit log: one ``record`` call per security-relevant action, kept for
``KB_AUDIT_RETENTION_DAYS`` (a beat task removes older events)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.dispatch import receiver
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from portal.addresses import client_address, is_address
from portal.models import AuditEvent

logger = logging.getLogger(__name__)

ACTIONS = {
    "sign-in": _("Signed in"),
    "sign-in-failed": _("Sign-in failed"),
    "sign-in-throttled": _("Sign-ins from an address paused"),
    "sign-in-alert": _("Many failed sign-ins of one account"),
    "upload": _("Uploaded files"),
    "reindex": _("Reindex"),
    "version-edit": _("Version edited"),
    "version-move": _("Version moved"),
    "version-remove": _("Version removed"),
    "permissions": _("Readers changed"),
    "source-change": _("Source changed"),
    "source-sync": _("Source sync requested"),
    "document-role": _("Document role set"),
    "token-create": _("API token created"),
    "token-revoke": _("API token revoked"),
    "token-use": _("API token used"),
    "kill-switch": _("Chat switched on/off"),
    "export": _("Ratings exported"),
    "admin-add": _("Added in the admin"),
    "admin-change": _("Changed in the admin"),
    "admin-delete": _("Deleted in the admin"),
    "user-access": _("User's staff flag or groups changed"),
}


def record(
    request, action: str, target: object = "", *, sources: Iterable[int] = (), **detail: object
) -> None:
    """Store one event: the request's user and address (None for both outside a request), and
    the knowledge sources it is about (``sources``: its target and detail are shown only to
    staff who may read them all, ``AuditEvent.objects.with_access``)."""
    user = getattr(request, "user", None) if request is not None else None
    known = user if user is not None and user.is_authenticated else None
    name = detail.pop("username", None) or (known.get_username() if known else "")
    address = detail.pop("address", None) or (
        client_address(request) if request is not None else None
    )
    try:
        AuditEvent.objects.create(
            actor=known,
            actor_name=str(name)[:150],
            action=action,
            target=str(target)[:300],
            detail={k: v for k, v in detail.items() if v not in (None, "")},
            sources=sorted({int(pk) for pk in sources if pk}),
            address=address if address and is_address(address) else None,
        )
    except Exception:  # noqa: BLE001 - the audit must never break the action it records
        logger.exception("audit event %s not stored", action)


ACCESS_FIELDS = ("is_active", "is_staff", "is_superuser")


def access_of(user) -> dict[str, object]:
    """What a user may do in the portal: the flags and the groups (source readers by group)."""
    return {
        **{field: getattr(user, field) for field in ACCESS_FIELDS},
        "groups": sorted(user.groups.values_list("name", flat=True)) if user.pk else [],
    }


def record_access_change(request, user, before: dict[str, object], *, by: str = "") -> None:
    """A ``user-access`` event when ``user``'s flags or groups differ from ``before``."""
    after = access_of(user)
    changed = {key: {"from": before.get(key), "to": value} for key, value in after.items()}
    changed = {key: change for key, change in changed.items() if change["from"] != change["to"]}
    if changed:
        detail = {"changes": changed, **({"by": by} if by else {})}
        record(request, "user-access", user.get_username(), **detail)


def sign_in_alerts(start, end, limit: int = 20):
    """The ``sign-in-alert`` events between ``start`` and ``end`` (newest first): accounts that
    many failed sign-ins were aimed at (``portal.signin``)."""
    return AuditEvent.objects.filter(action="sign-in-alert", at__gte=start, at__lt=end)[:limit]


def purge_old_events() -> int:
    """Remove events older than the retention; returns how many."""
    cutoff = timezone.now() - timedelta(days=settings.AUDIT_RETENTION_DAYS)
    deleted, _ = AuditEvent.objects.filter(at__lt=cutoff).delete()
    return deleted


@receiver(user_logged_in)
def _signed_in(sender, request, user, **_: object) -> None:
    record(request, "sign-in", user.get_username())


@receiver(user_login_failed)
def _sign_in_failed(sender, credentials, request=None, **_: object) -> None:
    username = str((credentials or {}).get("username", ""))
    record(request, "sign-in-failed", username, username=username)
