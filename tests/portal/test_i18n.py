"""The interface's language: the user's choice (header switcher, Profile page), else the browser's
Accept-Language, else KB_LANGUAGE (ru by default); catalogs compiled without GNU gettext; API
errors, relative times and numbers in that language; the style check proven to fail on one
untranslated string."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import timedelta

import polib
import pytest
from django.test import Client, override_settings
from django.utils import timezone

from knowledge.models import Document, Source
from portal.api_auth import create_token
from portal.locale_build import compile_catalogs
from portal.models import UserPreference
from tests.conftest import ROOT
from tests.i18n_check import RU_CATALOG, untranslated

pytestmark = pytest.mark.django_db


def page(client: Client, path: str, language: str | None = None) -> str:
    headers = {"HTTP_ACCEPT_LANGUAGE": language} if language else {}
    response = client.get(path, **headers)
    assert response.status_code == 200, (path, response.status_code)
    return response.content.decode()


# --- Accept-Language and the default ---------------------------------------------------------


def test_login_page_follows_the_browsers_accept_language(client):
    russian = client.get("/login/", HTTP_ACCEPT_LANGUAGE="ru-RU,ru;q=0.9,en;q=0.8")
    html = russian.content.decode()
    assert '<html lang="ru">' in html
    assert "<h1>Вход</h1>" in html and ">Войти</button>" in html
    assert "Имя пользователя" in html and "Пароль" in html
    assert "User name" not in html and "Log in" not in html
    assert russian["Content-Language"] == "ru"
    assert "Accept-Language" in russian["Vary"]

    english = client.get("/login/", HTTP_ACCEPT_LANGUAGE="en-US,en;q=0.9")
    html = english.content.decode()
    assert '<html lang="en">' in html
    assert "User name" in html and "Password" in html and ">Log in</button>" in html
    assert "Имя пользователя" not in html
    assert english["Content-Language"] == "en"


def test_a_wrong_password_is_refused_in_the_pages_language(client, bob):
    response = client.post(
        "/login/", {"username": "bob", "password": "nope"}, HTTP_ACCEPT_LANGUAGE="ru"
    )
    assert "Неверное имя пользователя или пароль." in response.content.decode()


@pytest.mark.parametrize(
    ("default", "expected", "absent"),
    [("ru", "Имя пользователя", "User name"), ("en", "User name", "Имя пользователя")],
)
def test_without_accept_language_pages_use_kb_language(client, default, expected, absent):
    with override_settings(LANGUAGE_CODE=default):
        html = page(client, "/login/")
    assert expected in html and absent not in html


def test_an_unsupported_browser_language_falls_back_to_kb_language(client):
    with override_settings(LANGUAGE_CODE="ru"):
        assert "Имя пользователя" in page(client, "/login/", "de-DE,fr;q=0.8")


def _settings_language(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "KB_LANGUAGE"}
    clean.update(env)
    code = "from django.conf import settings; print(settings.LANGUAGE_CODE)"
    return subprocess.run(
        [sys.executable, "-c", f"import portal.boot as b; b.load_settings_or_exit(); {code}"],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_kb_language_defaults_to_russian_and_refuses_an_unknown_language():
    assert _settings_language().stdout.strip() == "ru"
    assert _settings_language(KB_LANGUAGE="en").stdout.strip() == "en"
    wrong = _settings_language(KB_LANGUAGE="de")
    assert wrong.returncode == 2
    assert "KB_LANGUAGE='de' must be one of: ru, en" in wrong.stderr


# --- the user's choice -----------------------------------------------------------------------


def test_the_header_switcher_is_a_csrf_protected_post_form_with_a_label(bob):
    client = Client(enforce_csrf_checks=True)
    client.force_login(bob)
    html = page(client, "/documents/", "en")
    assert '<form method="post" action="/language/" class="lang-switch"' in html
    assert 'aria-label="Interface language"' in html
    assert 'name="csrfmiddlewaretoken"' in html.split('class="lang-switch"')[1].split("</form>")[0]
    assert 'value="ru" lang="ru" title="Русский"' in html
    refused = client.post("/language/", {"language": "ru"})
    assert refused.status_code == 403  # no CSRF token, no switch
    assert not UserPreference.objects.filter(user=bob).exists()


def test_the_switcher_choice_persists_for_the_user_in_every_browser(client, bob):
    client.force_login(bob)
    response = client.post(
        "/language/", {"language": "ru", "next": "/documents/"}, HTTP_ACCEPT_LANGUAGE="en"
    )
    assert response.status_code == 302 and response.url == "/documents/"
    assert response.cookies["django_language"].value == "ru"
    assert UserPreference.objects.get(user=bob).language == "ru"
    html = page(client, "/documents/", "en")  # the browser asks for English: the choice wins
    assert ">Документы</h1>" in html and 'aria-pressed="true">RU</button>' in html

    other_browser = Client()  # no cookie: the choice comes from the profile
    other_browser.force_login(bob)
    assert ">Документы</h1>" in page(other_browser, "/documents/", "en")

    client.post("/language/", {"language": "en", "next": "/documents/"})
    assert ">Documents</h1>" in page(other_browser, "/documents/", "ru")


def test_the_profile_page_sets_and_clears_the_choice(client, bob):
    client.force_login(bob)
    html = page(client, "/profile/", "en")
    assert '<label for="profile-language">Language</label>' in html
    assert '<option value="" selected>As the browser asks (automatic)</option>' in html
    response = client.post("/language/", {"language": "ru", "next": "/profile/"})
    assert response.url == "/profile/"
    html = page(client, "/profile/", "en")
    assert "<h1>Профиль</h1>" in html
    assert '<option value="ru" lang="ru" selected>Русский</option>' in html
    # Back to automatic: the preference and the cookie go, the browser decides again.
    response = client.post("/language/", {"language": "", "next": "/profile/"})
    assert response.cookies["django_language"].value == ""
    assert UserPreference.objects.get(user=bob).language == ""
    assert "<h1>Profile</h1>" in page(client, "/profile/", "en")
    assert "<h1>Профиль</h1>" in page(client, "/profile/", "ru")


def test_before_signing_in_the_switcher_sets_the_cookie_only(client):
    response = client.post("/language/", {"language": "ru", "next": "/login/"})
    assert response.status_code == 302 and response.url == "/login/"
    assert "Имя пользователя" in page(client, "/login/", "en")
    assert not UserPreference.objects.exists()


def test_the_switcher_refuses_an_unknown_language_and_a_foreign_next(client, bob):
    client.force_login(bob)
    assert client.post("/language/", {"language": "de"}).status_code == 400
    response = client.post("/language/", {"language": "en", "next": "https://evil.example/"})
    assert response.url == "/"  # never off the portal


# --- what follows the language: API errors, relative times, numbers --------------------------


def test_api_errors_follow_the_accept_language(client, bob):
    _row, token = create_token(bob, "ci")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    russian = client.get("/api/v1/search", HTTP_ACCEPT_LANGUAGE="ru", **auth)
    assert russian.status_code == 400
    assert russian.json()["error"] == "Параметр q (вопрос или слова для поиска) обязателен."
    assert "Параметр q" in russian.content.decode()  # readable JSON, not \\u escapes
    english = client.get("/api/v1/search", HTTP_ACCEPT_LANGUAGE="en", **auth)
    assert english.json()["error"].startswith("The parameter q")


def test_relative_times_and_counts_follow_the_language(client, alice):
    source = Source.objects.create(name="Вики")
    document = Document.objects.create(source=source, path="a.md", title="Документ")
    Document.objects.filter(pk=document.pk).update(updated_at=timezone.now() - timedelta(hours=3))
    client.force_login(alice)
    assert "3\xa0часа назад" in page(client, "/documents/", "ru")
    assert "3\xa0hours ago" in page(client, "/documents/", "en")


def test_decimal_numbers_follow_the_language():
    from django.template import Context, Template
    from django.utils import translation

    template = Template("{{ value|floatformat:2 }}")
    with translation.override("ru"):
        assert template.render(Context({"value": 0.5})) == "0,50"
    with translation.override("en"):
        assert template.render(Context({"value": 0.5})) == "0.50"


# --- the catalogs ----------------------------------------------------------------------------


def test_catalogs_are_committed_complete_and_built_with_polib(tmp_path):
    catalog = polib.pofile(str(RU_CATALOG))
    assert catalog.percent_translated() == 100, [e.msgid for e in catalog.untranslated_entries()]
    assert not catalog.fuzzy_entries()
    assert catalog.metadata["Language"] == "ru"
    assert (ROOT / "locale" / "en" / "LC_MESSAGES" / "django.po").exists()
    copy = tmp_path / "locale"
    shutil.copytree(ROOT / "locale", copy, ignore=shutil.ignore_patterns("*.mo"))
    written = compile_catalogs(copy)
    assert {p.relative_to(copy).as_posix() for p in written} == {
        "en/LC_MESSAGES/django.mo",
        "ru/LC_MESSAGES/django.mo",
    }
    assert compile_catalogs(copy) == []  # up to date: nothing rebuilt
    built = polib.mofile(str(copy / "ru" / "LC_MESSAGES" / "django.mo"))
    assert built.find("Log in").msgstr == "Вход"
    ignored = subprocess.run(
        ["git", "check-ignore", "locale/ru/LC_MESSAGES/django.mo"], cwd=ROOT, capture_output=True
    )
    assert ignored.returncode == 0  # built, never committed


def test_the_style_check_fails_on_one_untranslated_string(client, bob, tmp_path, settings):
    client.force_login(bob)
    assert untranslated(page(client, "/", "ru")) == []
    # The same catalog with one translation taken out, compiled and used by the portal.
    copy = tmp_path / "locale"
    shutil.copytree(ROOT / "locale", copy, ignore=shutil.ignore_patterns("*.mo"))
    po_path = copy / "ru" / "LC_MESSAGES" / "django.po"
    catalog = polib.pofile(str(po_path))
    catalog.find("Ask the knowledge base").msgstr = ""
    catalog.save()
    compile_catalogs(copy)
    settings.LOCALE_PATHS = [copy]  # resets Django's translation caches
    html = page(client, "/", "ru")
    assert "Ask the knowledge base" in html
    problems = untranslated(html, po_path)
    assert problems == ["'Ask the knowledge base' (msgid 'Ask the knowledge base')"]


def test_the_command_line_speaks_kb_language(tmp_path):
    from tests.conftest import subprocess_env

    def ingest(language: str) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", "ingest", str(tmp_path / "nowhere")],
            cwd=ROOT,
            env=subprocess_env(KB_LANGUAGE=language),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode != 0 and "Traceback" not in result.stderr
        return result.stderr

    assert "нет такого файла или папки" in ingest("ru")
    assert "no such file or folder" in ingest("en")


def test_error_pages_speak_the_pages_language(client, bob):
    client.force_login(bob)
    missing = client.get("/documents/999999/", HTTP_ACCEPT_LANGUAGE="ru")
    assert missing.status_code == 404
    assert "<h1>Страница не найдена</h1>" in missing.content.decode()
    missing = client.get("/documents/999999/", HTTP_ACCEPT_LANGUAGE="en")
    assert "<h1>Page not found</h1>" in missing.content.decode()
    refused = client.get("/feedback/", HTTP_ACCEPT_LANGUAGE="ru")  # staff only
    assert refused.status_code == 403
    assert "<h1>Доступ закрыт</h1>" in refused.content.decode()


def test_the_500_page_renders_without_a_request_in_the_active_language():
    from django.template.loader import render_to_string
    from django.utils import translation

    with translation.override("ru"):
        html = render_to_string("500.html")
    assert '<html lang="ru">' in html and "<h1>Что-то пошло не так</h1>" in html
    with translation.override("en"):
        assert "<h1>Something went wrong</h1>" in render_to_string("500.html")
