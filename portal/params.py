"""Request parameters that cannot break a view: ids and the request guard.

Every id a view reads from a query string, a form or a JSON body goes through ``id_param``: only
ASCII digits within PostgreSQL's bigint count ("²" is a digit to ``str.isdigit`` and not to
``int``); anything else is "not given". ``ParameterGuardMiddleware`` answers 400, in plain
words, to what no view should see: a NUL character or a lone UTF-16 surrogate (PostgreSQL
refuses to store either), a body in a charset other than UTF-8, or JSON nested deeper than any
real request.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import date

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

_ID = re.compile(r"[0-9]{1,18}")
_CHARSETS = {"utf-8", "utf8", "us-ascii", "ascii", "iso-8859-1", "latin-1", "latin1"}
MAX_JSON_DEPTH = 32


def id_param(value: object) -> int | None:
    """A positive id from a request value, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 < value < 2**63 else None
    text = str(value or "").strip()
    return int(text) if _ID.fullmatch(text) and int(text) > 0 else None


def date_param(value: object):
    """A date from "YYYY-MM-DD", or None for anything else."""
    try:
        return date.fromisoformat(str(value or "").strip()) if value else None
    except ValueError:
        return None


def within_dates(queryset, params, field: str):
    """``queryset`` limited to ``?since=`` and ``?until=`` (days, inclusive) on the datetime
    ``field``; a missing or malformed date limits nothing."""
    since, until = date_param(params.get("since")), date_param(params.get("until"))
    if since:
        queryset = queryset.filter(**{f"{field}__date__gte": since})
    if until:
        queryset = queryset.filter(**{f"{field}__date__lte": until})
    return queryset


def json_depth(text: str) -> int:
    """How deeply a JSON text nests (counted without parsing it)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def unstorable(value: object) -> str:
    """What in ``value`` (text, or JSON's lists and objects of it, keys too) PostgreSQL cannot
    store: "a NUL character", "a lone surrogate"; "" when nothing. A lone surrogate (half of a
    UTF-16 pair, ``\\ud800`` in JSON) is valid JSON and a valid Python string, but no UTF-8."""
    if isinstance(value, str):
        if "\x00" in value:
            return "a NUL character"
        if any("\ud800" <= char <= "\udfff" for char in value):
            return "a lone surrogate (half of a UTF-16 pair)"
        return ""
    if isinstance(value, dict):
        return next((r for k, v in value.items() if (r := unstorable(k) or unstorable(v))), "")
    if isinstance(value, list):
        return next((r for item in value if (r := unstorable(item))), "")
    return ""


def _bad(message: str) -> HttpResponse:
    return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")


class ParameterGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        content_type = request.META.get("CONTENT_TYPE", "")
        charset = re.search(r"charset=([\w.-]+)", content_type, re.IGNORECASE)
        if charset and charset.group(1).lower() not in _CHARSETS:
            return _bad(_("Request bodies are accepted in UTF-8 only."))
        if any("\x00" in key or "\x00" in value for key, value in _pairs(request.GET)):
            return _bad(_("The address contains a NUL character."))
        form = content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data"))
        if (
            request.method == "POST"
            and form
            and any("\x00" in key or "\x00" in value for key, value in _pairs(request.POST))
        ):
            return _bad(_("The form contains a NUL character."))
        if content_type.startswith("application/json") and request.body:
            text = request.body.decode("utf-8", errors="replace")
            if "\\u0000" in text or "\x00" in text:
                return _bad(_("The body contains a NUL character."))
            if json_depth(text) > MAX_JSON_DEPTH:
                return _bad(
                    _("The JSON body nests deeper than %(depth)d levels.")
                    % {"depth": MAX_JSON_DEPTH}
                )
            reason = _unstorable_json(request.body)
            if reason:
                return _bad(
                    _("The body holds text that cannot be stored: %(what)s.") % {"what": reason}
                )
        return self.get_response(request)


def _unstorable_json(body: bytes) -> str:
    """``unstorable`` of a JSON body as a view's ``json.loads`` would read it (bytes decoded
    with surrogates let through); "" for a body that is not JSON (the view says so)."""
    try:
        return unstorable(json.loads(body))
    except (ValueError, RecursionError):
        return ""


def _pairs(query) -> list[tuple[str, str]]:
    return [(key, value) for key in query for value in query.getlist(key)]
