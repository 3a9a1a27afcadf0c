"""Accessibility: axe-core (bundled in axe-playwright-python) on every page in Chromium, no
serious or critical violation."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe

from chat.models import Conversation, Message
from chat.pipeline import answer_now
from knowledge.models import Document
from scenarios.analysis import answer_question, start_analysis
from tests.chat.conftest import ingest_small_kb
from tests.conftest import PortalServer, login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def serious(results) -> list[str]:
    found = []
    for violation in results.response["violations"]:
        if violation.get("impact") in ("serious", "critical"):
            targets = [", ".join(n["target"]) for n in violation["nodes"][:3]]
            found.append(
                f"{violation['id']} ({violation['impact']}): {violation['help']} {targets}"
            )
    return found


def test_every_page_has_no_serious_or_critical_axe_violation(tmp_path, alice, _browser):
    ingest_small_kb(tmp_path)
    conversation = Conversation.objects.create(user=alice)
    answer_now(conversation, "Чем верификация отличается от валидации?", user=alice, llm=None)
    answer_now(conversation, "Какая погода завтра в Казани?", user=alice, llm=None)
    message = Message.objects.filter(conversation=conversation).first()
    document = Document.objects.first()
    programme = Document.objects.get(title="Программа и методика испытаний")
    asking = start_analysis(alice, "Экран настроек: выбор цветовой темы сохраняется в памяти")
    mapped = start_analysis(alice, "Поиск по мероприятиям: фильтр по тегам")
    while mapped.current_question:
        answer_question(mapped, mapped.current_question["tiles"][0]["value"], llm=None)
    # axe is injected as a script: the test's browser lets it past the page's CSP.
    context = _browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 860})
    page = context.new_page()
    server = PortalServer()
    axe = Axe()
    problems: dict[str, list[str]] = {}
    try:
        page.goto(server.url + "/login/")
        problems["/login/"] = serious(axe.run(page))
        login(page, server.url, "alice")
        for path in (
            f"/chat/{conversation.pk}/",
            "/documents/",
            f"/documents/{document.pk}/",
            "/versions/",
            "/feedback/",
            "/journal/",
            f"/journal/{message.pk}/",
            "/evaluation/",
            "/audit/",
            "/profile/",
            "/scenarios/",
            f"/scenarios/coverage/?requirements={document.pk}&tests={programme.pk}",
            f"/scenarios/analyses/{asking.pk}/",
            f"/scenarios/analyses/{mapped.pk}/",
        ):
            page.goto(server.url + path)
            problems[path] = serious(axe.run(page))
    finally:
        server.stop()
        context.close()
    failing = [f"{path}: {problem}" for path, found in problems.items() for problem in found]
    assert not failing, "\n".join(failing)
