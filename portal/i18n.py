"""The interface language: the user's choice, else the browser's, else ``KB_LANGUAGE``.

Django's ``LocaleMiddleware`` reads the language cookie (set by the header's switcher) and
``Accept-Language``, falling back to ``settings.LANGUAGE_CODE`` (``KB_LANGUAGE``). It runs before
authentication, so :class:`UserLanguageMiddleware`, placed after it, lets a signed-in user's
choice on the Profile page win over both.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.urls import reverse
from django.utils import translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from portal.models import UserPreference

LANGUAGE_CODES = frozenset(code for code, _name in settings.LANGUAGES)


def preferred_language(user) -> str:
    """The language a user chose on the Profile page, or "" (follow the browser)."""
    if not getattr(user, "is_authenticated", False):
        return ""
    language = (
        UserPreference.objects.filter(user=user).values_list("language", flat=True).first() or ""
    )
    return language if language in LANGUAGE_CODES else ""


def set_preferred_language(user, language: str) -> None:
    """Store a user's choice ("" to follow the browser again)."""
    UserPreference.objects.update_or_create(user=user, defaults={"language": language})


class UserLanguageMiddleware:
    """Activate the signed-in user's chosen language for the rest of the request."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        language = preferred_language(getattr(request, "user", None))
        if language:
            translation.activate(language)
            request.LANGUAGE_CODE = language
        return self.get_response(request)


def _next_url(request: HttpRequest) -> str:
    for candidate in (request.POST.get("next"), request.headers.get("referer")):
        if candidate and url_has_allowed_host_and_scheme(
            candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        ):
            return candidate
    return reverse("home")


@login_not_required
@require_POST
def set_language(request: HttpRequest) -> HttpResponse:
    """Switch the interface language (the header's switcher and the Profile page).

    The choice goes into the language cookie, and for a signed-in user into their profile too,
    so it follows them to another browser. An empty choice means "follow the browser again".
    """
    language = request.POST.get("language", "")
    if language and language not in LANGUAGE_CODES:
        return HttpResponseBadRequest("Unknown language")
    response = HttpResponseRedirect(_next_url(request))
    if request.user.is_authenticated:
        set_preferred_language(request.user, language)
    if language:
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            language,
            max_age=settings.LANGUAGE_COOKIE_AGE or 365 * 24 * 3600,
            path=settings.LANGUAGE_COOKIE_PATH,
            samesite="Lax",
            secure=request.is_secure(),
            httponly=True,
        )
    else:
        response.delete_cookie(settings.LANGUAGE_COOKIE_NAME, path=settings.LANGUAGE_COOKIE_PATH)
    return response
