"""Company sign-in with OpenID Connect (any provider: Keycloak, Azure AD / Entra ID, ADFS,
Authentik, Yandex 360...), through mozilla-django-oidc's authorization-code flow.

Accounts are matched by the provider's issuer and subject (``ExternalIdentity``), never by a
user name or e-mail: a provider account named like a local administrator does not become that
administrator. A first sign-in creates the user (a free user name from the username claim, no
usable password). Every sign-in copies the name and e-mail and sets the user's groups from the
groups claim (the groups that source permissions name); membership of a group in
``KB_OIDC_STAFF_GROUPS`` makes the user staff, and the provider never makes a superuser.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from portal.audit import access_of, record_access_change
from portal.models import ExternalIdentity

_NOT_NAME = re.compile(r"[^\w.@+-]")


def issuer() -> str:
    return settings.OIDC_ISSUER


def free_username(wanted: str) -> str:
    """``wanted`` made a valid user name, with a number added when it is taken."""
    from django.contrib.auth import get_user_model

    users = get_user_model()
    base = _NOT_NAME.sub("", wanted)[:140] or "user"
    name, n = base, 1
    while users.objects.filter(username__iexact=name).exists():
        n += 1
        name = f"{base}{n}"
    return name


def claim_groups(claims: dict) -> list[str]:
    """The group names of the groups claim (a list, or one string), without a leading "/"
    (Keycloak writes group paths)."""
    value = claims.get(settings.OIDC_GROUPS_CLAIM) or []
    values = [value] if isinstance(value, str) else list(value)
    return sorted({str(v).strip().lstrip("/") for v in values if str(v).strip()})


class PortalOIDCBackend(OIDCAuthenticationBackend):
    def verify_claims(self, claims: dict) -> bool:
        return bool(claims.get("sub"))

    def filter_users_by_claims(self, claims: dict):
        return self.UserModel.objects.filter(
            external_identities__issuer=issuer(), external_identities__subject=claims["sub"]
        )

    def create_user(self, claims: dict):
        wanted = (
            claims.get(settings.OIDC_USERNAME_CLAIM)
            or (claims.get("email") or "").split("@")[0]
            or claims["sub"]
        )
        with transaction.atomic():
            user = self.UserModel.objects.create_user(free_username(str(wanted)))
            user.set_unusable_password()
            user.save(update_fields=["password"])
            ExternalIdentity.objects.create(user=user, issuer=issuer(), subject=claims["sub"])
        return self.update_user(user, claims)

    def update_user(self, user, claims: dict):
        """The provider's view of the user wins at every sign-in: name, e-mail, groups, staff
        (a change of the groups or the staff flag is audited)."""
        before = access_of(user)
        user.email = str(claims.get("email") or user.email)[:254]
        user.first_name = str(claims.get("given_name") or user.first_name)[:150]
        user.last_name = str(claims.get("family_name") or user.last_name)[:150]
        names = claim_groups(claims)
        if settings.OIDC_SYNC_GROUPS:
            groups = [Group.objects.get_or_create(name=name[:150])[0] for name in names]
            user.groups.set(groups)
        if settings.OIDC_STAFF_GROUPS and not user.is_superuser:
            user.is_staff = bool(set(names) & set(settings.OIDC_STAFF_GROUPS))
        user.save()
        record_access_change(None, user, before, by="oidc")
        ExternalIdentity.objects.filter(user=user, issuer=issuer()).update(
            last_login_at=timezone.now()
        )
        return user
