"""Company sign-in against an LDAP directory (OpenLDAP, Active Directory, FreeIPA...) through the
ordinary login form, with ldap3 (pure Python: no C library to build).

The flow: bind as the service account (``KB_LDAP_BIND_DN``, or anonymously), find the user's
entry with ``KB_LDAP_USER_FILTER`` (the typed name escaped, so ``*)(uid=*`` matches nobody), bind
as that entry's DN with the typed password to check it, then read the user's groups. An empty
password is refused before any bind: directories take a DN with an empty password as an
anonymous ("unauthenticated") bind and answer success.

Accounts are matched by the directory (the issuer ``ldap://<host>``) and the entry's stable
identifier (``KB_LDAP_ID_ATTRIBUTE``: entryUUID, objectGUID...) in ``ExternalIdentity``, never by
the user name: a directory user named like a local administrator does not become that
administrator. A first sign-in creates the user (no usable password); every sign-in copies the
name and e-mail and sets the user's groups from the directory's (the groups that source
permissions name); membership of a group in ``KB_LDAP_STAFF_GROUPS`` makes the user staff, and
the directory never makes a superuser.

A directory that cannot be reached, answers too slowly or refuses the service account fails the
sign-in like a wrong password (logged, with a ``sign-in-failed`` audit event), never a 500.
"""

from __future__ import annotations

import contextlib
import logging
import ssl
import uuid
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction
from django.utils import timezone
from ldap3 import NONE, SUBTREE, Connection, Server, Tls
from ldap3.core.exceptions import LDAPException
from ldap3.utils.conv import escape_filter_chars
from ldap3.utils.dn import parse_dn

from portal import audit
from portal.audit import access_of, record_access_change
from portal.models import ExternalIdentity
from portal.oidc import free_username

logger = logging.getLogger(__name__)

# Result codes a search may end with and still have answered: success, sizeLimitExceeded.
_ANSWERED = {0, 4}


class DirectoryError(Exception):
    """The directory did not answer as it should: unreachable, too slow, refusing the service
    account, or a search that failed (a wrong base)."""


@dataclass(frozen=True)
class DirectoryUser:
    dn: str
    subject: str  # the stable identifier: the account's key
    username: str
    email: str
    first_name: str
    last_name: str
    groups: tuple[str, ...]


def issuer() -> str:
    return settings.LDAP_ISSUER or "ldap://" + (urlsplit(settings.LDAP_URL).hostname or "")


def identifier(attribute: str, raw: bytes) -> str:
    """The text of a stable identifier: Active Directory's objectGUID is 16 raw bytes (shown,
    as AD does, as a UUID), entryUUID, nsUniqueId or ipaUniqueID are text."""
    if attribute.lower() == "objectguid" and len(raw) == 16:
        return str(uuid.UUID(bytes_le=raw))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.hex()


def group_name(dn: str) -> str:
    """A group's name from its DN (a memberOf value): its first RDN's value."""
    try:
        return parse_dn(dn)[0][1]
    except (LDAPException, IndexError):
        return dn


def _first(entry: dict, attribute: str) -> bytes | None:
    for name, values in entry.get("raw_attributes", {}).items():
        if name.lower() == attribute.lower() and values:
            return values[0]
    return None


def _text(entry: dict, attribute: str) -> str:
    raw = _first(entry, attribute)
    return raw.decode("utf-8", "replace").strip() if raw else ""


def _all_text(entry: dict, attribute: str) -> list[str]:
    for name, values in entry.get("raw_attributes", {}).items():
        if name.lower() == attribute.lower():
            return [value.decode("utf-8", "replace") for value in values]
    return []


def _connection(user: str | None = None, password: str | None = None) -> Connection | None:
    """An open connection bound as ``user`` (anonymous without one); None when the directory
    refuses the credentials. Raises ``LDAPException`` when it cannot be reached or is too slow."""
    tls = Tls(validate=ssl.CERT_REQUIRED, ca_certs_file=settings.LDAP_CA_FILE or None)
    server = Server(
        settings.LDAP_URL, tls=tls, get_info=NONE, connect_timeout=settings.LDAP_TIMEOUT
    )
    connection = Connection(
        server,
        user=user,
        password=password,
        receive_timeout=settings.LDAP_TIMEOUT,
        auto_referrals=False,
        read_only=True,
    )
    connection.open()
    try:
        if settings.LDAP_START_TLS:
            connection.start_tls()  # before the bind: the password never goes out in clear
        if connection.bind():
            return connection
    except LDAPException:
        _close(connection)  # the error to report is this one, not the close's
        raise
    _close(connection)
    return None


def _close(connection: Connection) -> None:
    with contextlib.suppress(LDAPException, OSError):
        connection.unbind()


def _search(connection: Connection, base: str, query: str, attributes: list[str]) -> list[dict]:
    connection.search(base, query, SUBTREE, attributes=attributes, size_limit=1000)
    if connection.result.get("result") not in _ANSWERED:
        raise DirectoryError(
            f"search under {base!r} failed: {connection.result.get('description')}"
        )
    # Referrals (Active Directory's other partitions) are not entries.
    return [item for item in connection.response or [] if item.get("type") == "searchResEntry"]


def _groups(connection: Connection, entry: dict, username: str) -> tuple[str, ...]:
    if not settings.LDAP_GROUP_BASE:
        names = [group_name(dn) for dn in _all_text(entry, "memberOf")]
    else:
        query = settings.LDAP_GROUP_FILTER.replace(
            "%(dn)s", escape_filter_chars(entry["dn"])
        ).replace("%(user)s", escape_filter_chars(username))
        attribute = settings.LDAP_GROUP_NAME_ATTRIBUTE
        found = _search(connection, settings.LDAP_GROUP_BASE, query, [attribute])
        names = [_text(group, attribute) or group_name(group["dn"]) for group in found]
    return tuple(sorted({name.strip() for name in names if name.strip()}))


def _user_entry(service: Connection, username: str) -> tuple[dict, str] | None:
    """The one entry the user filter finds for this name, with its stable identifier."""
    id_attribute, name_attribute = settings.LDAP_ID_ATTRIBUTE, settings.LDAP_USERNAME_ATTRIBUTE
    query = settings.LDAP_USER_FILTER.replace("%(user)s", escape_filter_chars(username))
    wanted = [name_attribute, "mail", "givenName", "sn", "memberOf"]
    if id_attribute.lower() != "dn":
        wanted.append(id_attribute)  # often an operational attribute: only sent when asked for
    entries = _search(service, settings.LDAP_USER_BASE, query, wanted)
    if len(entries) != 1:
        if entries:
            logger.warning("LDAP: %d entries match %s; nobody signed in", len(entries), query)
        return None
    entry = entries[0]
    by_dn = id_attribute.lower() == "dn"
    raw_id = entry["dn"].encode() if by_dn else _first(entry, id_attribute)
    if not entry["dn"] or not raw_id:
        logger.warning("LDAP: %s has no %s; not signed in", entry["dn"], id_attribute)
        return None
    subject = identifier(id_attribute, raw_id)
    if len(subject) > ExternalIdentity._meta.get_field("subject").max_length:
        logger.warning("LDAP: the %s of %s is too long to be a key", id_attribute, entry["dn"])
        return None
    return entry, subject


def find_user(username: str, password: str) -> DirectoryUser | None:
    """The directory's user with this name and password, or None (no such user, several, a
    wrong or empty password). Raises ``DirectoryError`` or ``LDAPException`` when the directory
    cannot answer."""
    if not username.strip() or not password:
        return None
    with contextlib.ExitStack() as stack:
        service = _connection(settings.LDAP_BIND_DN or None, settings.LDAP_BIND_PASSWORD or None)
        if service is None:
            raise DirectoryError("the directory refused the service account (KB_LDAP_BIND_DN)")
        stack.callback(_close, service)
        found = _user_entry(service, username)
        if found is None:
            return None
        entry, subject = found
        checked = _connection(entry["dn"], password)  # the password's only check
        if checked is None:
            return None
        _close(checked)
        name = _text(entry, settings.LDAP_USERNAME_ATTRIBUTE) or username.strip()
        return DirectoryUser(
            dn=entry["dn"],
            subject=subject,
            username=name,
            email=_text(entry, "mail"),
            first_name=_text(entry, "givenName"),
            last_name=_text(entry, "sn"),
            groups=_groups(service, entry, name),
        )


def _identified(subject: str):
    return (
        get_user_model()
        .objects.filter(external_identities__issuer=issuer(), external_identities__subject=subject)
        .first()
    )


def account_for(found: DirectoryUser):
    """The portal account of a directory user (created at the first sign-in, with no usable
    password), with the directory's name, e-mail, groups and staff flag copied onto it."""
    user = _identified(found.subject)
    if user is None:
        try:
            with transaction.atomic():
                user = get_user_model().objects.create_user(free_username(found.username))
                user.set_unusable_password()
                user.save(update_fields=["password"])
                ExternalIdentity.objects.create(user=user, issuer=issuer(), subject=found.subject)
        except IntegrityError:
            user = _identified(found.subject)  # a parallel first sign-in created it
            if user is None:
                raise
    if not user.is_active:
        return user
    before = access_of(user)
    user.email = found.email[:254] or user.email
    user.first_name = found.first_name[:150] or user.first_name
    user.last_name = found.last_name[:150] or user.last_name
    if settings.LDAP_SYNC_GROUPS:
        user.groups.set([Group.objects.get_or_create(name=name[:150])[0] for name in found.groups])
    if settings.LDAP_STAFF_GROUPS and not user.is_superuser:
        staff = {name.casefold() for name in settings.LDAP_STAFF_GROUPS}
        user.is_staff = any(name.casefold() in staff for name in found.groups)
    user.save()
    record_access_change(None, user, before, by="ldap")  # groups and staff follow the directory
    ExternalIdentity.objects.filter(user=user, issuer=issuer()).update(last_login_at=timezone.now())
    return user


class LDAPBackend(ModelBackend):
    """The login form's user name and password checked against the directory (after the local
    accounts: ``ModelBackend`` comes first in ``AUTHENTICATION_BACKENDS``)."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if not settings.LDAP_ENABLED or not username or not password:
            return None
        try:
            found = find_user(str(username), str(password))
        except (DirectoryError, LDAPException, OSError) as exc:
            logger.warning("LDAP sign-in of %r failed: %s", username, exc)
            reason = str(exc)[:300] or type(exc).__name__
            audit.record(request, "sign-in-failed", "ldap", username=username, reason=reason)
            return None
        if found is None:
            return None
        user = account_for(found)
        return user if self.user_can_authenticate(user) else None
