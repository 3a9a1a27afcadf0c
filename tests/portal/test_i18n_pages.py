"""Every page in Russian and in English, in Chromium: a screenshot of each (artifacts/screenshots/
i18n/), no English string of our catalog on a Russian page (tests/i18n_check.py), the page's
language declared, and no serious or critical axe-core violation in either language."""

from __future__ import annotations

import io
import json
import re
import shutil
import urllib.request

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.core.management import call_command

from chat.models import Conversation, Message
from chat.pipeline import answer_now
from evaluation.models import EvalRun
from evaluation.regression import case_from_message
from feedback.services import rate_answer
from knowledge import termstats
from knowledge.models import Document, Source
from tests.chat.conftest import ingest_small_kb
from tests.conftest import PortalServer, browser_page, login, screenshot
from tests.i18n_check import untranslated
from tests.knowledge.versions.conftest import ingest_folder as ingest_versions
from tests.knowledge.versions.helpers import HSE
from tests.portal.test_accessibility import serious

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EVAL_SET = [
    {"id": "q-verification", "group": "answerable",
     "question": "Чем верификация отличается от валидации?",
     "gold_docs": ["obshee/verifikaciya-i-validaciya-verification-and-validation.md"]},
    {"id": "q-weather", "group": "out_of_domain",
     "question": "Какая погода будет завтра в Казани?", "gold_docs": []},
]  # fmt: skip

# Words of each language that must head the page: the navigation, in the user's language.
NAV = {"ru": ["Спросить", "Документы", "Версии", "Отзывы", "Журнал"], "en": ["Ask", "Documents"]}


def build_portal(tmp_path, alice) -> dict[str, str]:
    """Something on every page: documents, a versioned document, a conversation with a rated
    answer and a refusal, two evaluation runs and a regression case, a synced source."""
    # The session's demo knowledge base is committed for the database tests that run before
    # this one: its hundreds of documents (with English words in their titles) are not ours.
    Source.objects.all().delete()
    termstats.rebuild()  # a cascade delete does not maintain the search statistics
    ingest_small_kb(tmp_path)
    versions = tmp_path / "hse"
    versions.mkdir()
    pair = ("ПМИ_2019-05-03_cc60019.docx", "ПМИ_2019-05-04_aa30d6d.docx")
    for name in pair:
        shutil.copy(HSE / name, versions / name)
    (versions / "ORDER.txt").write_text("\n".join(pair) + "\n", encoding="utf-8")
    assert ingest_versions(versions, "ПМИ, версии")["ready"] == 2
    versioned = Document.objects.get(source__name="ПМИ, версии")
    old, new = versioned.versions.order_by("number")
    Source.objects.create(
        name="Общая папка", connector=Source.Connector.FOLDER, sync_url=str(tmp_path / "shared")
    )

    conversation = Conversation.objects.create(user=alice)
    answer = answer_now(conversation, "Чем верификация отличается от валидации?", user=alice)
    answer_now(conversation, "Какая погода завтра в Казани?", user=alice)
    rate_answer(answer, alice, "down", reasons=["incomplete"], comment="Не хватает примера")
    case_from_message(answer, user=alice, behaviour="answer", expected_answer="Пример")

    questions = tmp_path / "set.jsonl"
    questions.write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in EVAL_SET), encoding="utf-8"
    )
    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    call_command("eval", str(questions), "--label", "первый", **quiet)
    call_command("eval", str(questions), "--label", "второй", **quiet)
    run_a, run_b = EvalRun.objects.order_by("pk")
    document = Document.objects.filter(source__name="QA Bible").first()
    message = Message.objects.filter(conversation=conversation).first()
    return {
        "home": "/",
        "conversation": f"/chat/{conversation.pk}/",
        "documents": "/documents/",
        "document": f"/documents/{document.pk}/",
        "versions": "/versions/",
        "history": f"/documents/{versioned.pk}/versions/",
        "comparison": f"/documents/{versioned.pk}/compare/?a={old.pk}&b={new.pk}",
        "version-edit": f"/documents/{versioned.pk}/versions/{new.pk}/edit/",
        "version-remove": f"/documents/{versioned.pk}/versions/{new.pk}/remove/",
        "feedback": "/feedback/",
        "journal": "/journal/",
        "journal-entry": f"/journal/{message.pk}/",
        "evaluation": "/evaluation/",
        "evaluation-run": f"/evaluation/runs/{run_b.pk}/",
        "evaluation-compare": f"/evaluation/compare/?a={run_a.pk}&b={run_b.pk}",
        "evaluation-cases": "/evaluation/cases/",
        "scenarios": "/scenarios/",
        "coverage": "/scenarios/coverage/",
        "audit": "/audit/",
        "profile": "/profile/",
        "admin": "/admin/",
    }


def visit(browser, server_url: str, pages: dict[str, str], language: str) -> dict[str, list]:
    """Every page in one language: screenshots, and what is wrong on each."""
    locale = {"ru": "ru-RU", "en": "en-US"}[language]
    # axe is injected as a script: the test's browser lets it past the page's CSP.
    context = browser.new_context(
        locale=locale, bypass_csp=True, viewport={"width": 1280, "height": 860}
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    axe = Axe()
    problems: dict[str, list] = {}

    def check(name: str) -> None:
        found = serious(axe.run(page))
        html = page.content()
        if not re.search(f'<html lang="{language}"[ >]', html):
            found.append(f"the page does not say lang={language}")
        if language == "ru":
            found += untranslated(html)
        screenshot(page, f"i18n/{language}-{name}")
        problems[name] = found

    try:
        page.goto(server_url + "/login/")
        check("login")
        login(page, server_url, "alice")
        for name, path in pages.items():
            response = page.goto(server_url + path)
            assert response is not None and response.status == 200, (name, path)
            if name != "admin":
                nav = page.locator("nav.nav").inner_text()
                missing = [word for word in NAV[language] if word not in nav]
                if missing:
                    problems.setdefault(name, []).append(f"navigation lacks {missing}")
            check(name)
    finally:
        context.close()
    return problems


def curl_login(server_url: str, language: str) -> str:
    """``curl -H 'Accept-Language: …' /login/`` against the real server."""
    request = urllib.request.Request(server_url + "/login/", headers={"Accept-Language": language})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.headers["Content-Language"] == language
        return response.read().decode()


def test_every_page_in_russian_and_in_english(tmp_path, alice, _browser):
    pages = build_portal(tmp_path, alice)
    server = PortalServer()
    try:
        russian, english = curl_login(server.url, "ru"), curl_login(server.url, "en")
        assert "Имя пользователя" in russian and ">Войти</button>" in russian
        assert "User name" in english and ">Log in</button>" in english
        found = {lang: visit(_browser, server.url, pages, lang) for lang in ("ru", "en")}
    finally:
        server.stop()
    failing = [
        f"{lang} {name}: {problem}"
        for lang, by_page in found.items()
        for name, problems in by_page.items()
        for problem in problems
    ]
    assert not failing, "\n".join(failing)
    assert len(found["ru"]) == len(found["en"]) == len(pages) + 1  # and the login page


def test_the_header_switcher_and_the_profile_choice_in_a_browser(portal_server, bob, _browser):
    page = browser_page(_browser, "en-US")
    try:
        login(page, portal_server.url, "bob")
        page.goto(portal_server.url + "/documents/")
        assert page.locator("h1").inner_text() == "Documents"
        page.click(".lang-switch button[value=ru]")
        page.wait_for_load_state()
        assert page.url.endswith("/documents/")  # back where the switch was pressed
        assert page.locator("h1").inner_text() == "Документы"
        assert page.locator("html").get_attribute("lang") == "ru"
        screenshot(page, "i18n/switched-to-ru")
        page.goto(portal_server.url + "/profile/")
        assert page.locator("#profile-language").input_value() == "ru"
        # Back to the browser's language from the Profile page.
        page.select_option("#profile-language", "")
        page.click("#language button[type=submit]")
        page.wait_for_url(lambda url: url.endswith("/profile/"))
        assert page.locator("h1").inner_text() == "Profile"
        assert page.locator("#profile-language").input_value() == ""
    finally:
        page.context.close()
