"""Typed readers for environment variables that fail loudly.

Every variable the portal reads goes through one of these helpers so that a wrong value stops
the process at start with one readable line instead of a traceback from deep inside a driver.
A variable ``NAME_FILE`` (a path) is read in place of ``NAME`` for secrets kept in files.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _raw(name: str) -> str | None:
    file_path = os.environ.get(f"{name}_FILE")
    if file_path:
        try:
            return Path(file_path).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ImproperlyConfigured(
                f"{name}_FILE={file_path}: cannot read ({exc.strerror})"
            ) from None
    return os.environ.get(name)


def env_str(name: str, default: str = "") -> str:
    value = _raw(name)
    return default if value is None else value


def env_bool(name: str, default: bool = False) -> bool:
    value = _raw(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use 1/0, true/false, yes/no)")


def env_int(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    value = _raw(name)
    if value is None or value.strip() == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a whole number") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} is below the minimum {minimum}")
    if maximum is not None and number > maximum:
        raise ImproperlyConfigured(f"{name}={number} is above the maximum {maximum}")
    return number


def env_float(name: str, default: float) -> float:
    value = _raw(name)
    if value is None or value.strip() == "":
        return default
    try:
        return float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a number") from None


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    value = _raw(name)
    if value is None:
        return list(default or [])
    return [item.strip() for item in value.split(",") if item.strip()]


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(name, default).strip().lower()
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} must be one of: {', '.join(choices)}")
    return value


def env_path(name: str, default: Path) -> Path:
    value = _raw(name)
    return (Path(value).expanduser() if value else default).resolve()


def env_url(name: str, schemes: tuple[str, ...]) -> str:
    """An optional URL whose scheme must be one of ``schemes``; empty means "not set"."""
    value = env_str(name).strip()
    if not value:
        return ""
    parts = urlsplit(value)
    if parts.scheme not in schemes or not (parts.netloc or parts.path or parts.query):
        raise ImproperlyConfigured(
            f"{name}={value!r} is not a valid URL (expected {' or '.join(s + '://...' for s in schemes)})"
        )
    return value


def database_from_url(name: str, url: str) -> dict[str, object]:
    """Django DATABASES entry from a ``postgres://user:pass@host:port/db`` URL."""
    parts = urlsplit(url)
    database = parts.path.lstrip("/")
    if not database:
        raise ImproperlyConfigured(
            f"{name}={url!r} names no database (postgres://user:pass@host:5432/dbname)"
        )
    try:
        port = parts.port
    except ValueError:
        raise ImproperlyConfigured(f"{name}={url!r} has an invalid port") from None
    options: dict[str, str] = {}
    for pair in filter(None, parts.query.split("&")):
        key, _, val = pair.partition("=")
        options[key] = val
    host = options.pop("host", "") or (parts.hostname or "")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": database,
        "USER": parts.username or "",
        "PASSWORD": parts.password or "",
        "HOST": host,
        "PORT": str(port or ""),
        "OPTIONS": options,
    }
