"""The first admin account, created by the run command on a fresh installation."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError


@dataclass(frozen=True)
class FirstAdmin:
    username: str
    password: str | None  # set only when it was generated now and must be shown once


def ensure_first_admin() -> FirstAdmin | None:
    """Create the first superuser if there is none; returns it, or None when one exists.

    The password comes from ``KB_ADMIN_PASSWORD``; without it a random one is generated and
    returned so the caller can print it once (it is stored only as a hash).
    """
    users = get_user_model()
    if users.objects.filter(is_superuser=True).exists():
        return None
    password = settings.ADMIN_PASSWORD or secrets.token_urlsafe(12)
    users.objects.create_superuser(
        username=settings.ADMIN_USERNAME, email=settings.ADMIN_EMAIL, password=password
    )
    return FirstAdmin(
        username=settings.ADMIN_USERNAME,
        password=None if settings.ADMIN_PASSWORD else password,
    )


def command_user(username: str = ""):
    """The user a management command answers as: the one named (LookupError when there is no
    such user), else the command line's service account "cli": a staff view kept apart from
    people's conversations, which cannot sign in."""
    users = get_user_model()
    if username:
        try:
            return users.objects.get(username=username)
        except users.DoesNotExist:
            raise LookupError(f"no user {username!r}") from None
    user, _ = users.objects.get_or_create(
        username="cli", defaults={"is_staff": True, "is_active": False}
    )
    return user


def reader_for_command(username: str):
    """The user a management command's ``--user`` names, None when it names nobody (then the
    command reads as staff); a name of no user is the command's error, in one line."""
    if not username:
        return None
    try:
        return command_user(username)
    except LookupError as exc:
        raise CommandError(str(exc)) from None
