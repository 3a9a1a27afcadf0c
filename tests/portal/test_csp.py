"""Content-Security-Policy: scripts from the server only, no inline script or handler."""

from __future__ import annotations

import re

import pytest

from chat.models import Conversation
from chat.pipeline import answer_now
from knowledge.models import Document
from tests.chat.conftest import ingest_small_kb
from tests.conftest import PortalServer, login, screenshot

_INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", re.I)
_HANDLER = re.compile(r"\s(on[a-z]+|hx-on[:\w-]*)\s*=", re.I)


def pages(document: Document, conversation: Conversation) -> list[str]:
    return [
        "/",
        f"/chat/{conversation.pk}/",
        "/documents/",
        f"/documents/{document.pk}/",
        "/versions/",
        "/feedback/",
        "/journal/",
        "/evaluation/",
        "/audit/",
        "/profile/",
        "/scenarios/",
        "/scenarios/coverage/",
        "/admin/",
        "/admin/knowledge/source/",
    ]


@pytest.mark.django_db
def test_every_page_has_the_policy_and_no_inline_script_or_handler(client, alice, tmp_path):
    ingest_small_kb(tmp_path)
    conversation = Conversation.objects.create(user=alice)
    answer_now(conversation, "Что такое верификация?", user=alice, llm=None)
    document = Document.objects.first()
    assert "script-src 'self'" in client.get("/login/")["Content-Security-Policy"]
    assert "onload" not in client.get("/login/").content.decode()
    client.force_login(alice)
    for url in pages(document, conversation):
        response = client.get(url, follow=True)
        assert response.status_code == 200, url
        policy = response["Content-Security-Policy"]
        script_src = re.search(r"script-src ([^;]*)", policy)[1]
        assert "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in script_src, url
        assert "frame-ancestors 'none'" in policy
        html = response.content.decode()
        assert not _INLINE_SCRIPT.search(html), (url, _INLINE_SCRIPT.search(html)[0])
        assert not _HANDLER.search(html), (url, _HANDLER.search(html)[0])


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_pages_work_under_the_policy_without_a_single_violation(tmp_path, alice, page):
    ingest_small_kb(tmp_path)
    document = Document.objects.filter(title__icontains="Программа").first()
    violations: list[str] = []
    page.on(
        "console",
        lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
    )
    server = PortalServer()
    try:
        login(page, server.url, "alice")
        page.fill("#question", "Что такое верификация?")  # the home page's box
        page.keyboard.press("Enter")  # portal.js: Enter sends
        answer = page.locator(".turn").last.locator(".bubble.answer[data-outcome]")
        answer.wait_for(timeout=60_000)  # streamed in over SSE (htmx extension)
        assert page.input_value("#question") == ""  # data-reset-on-success emptied the form
        page.goto(f"{server.url}/documents/")
        page.select_option("select[name=source]", label="QA Bible")  # data-autosubmit
        page.wait_for_url(lambda url: "source=" in url)
        page.goto(f"{server.url}/documents/{document.pk}/")
        page.goto(f"{server.url}/admin/knowledge/source/")
        screenshot(page, "csp-admin-sources")
        assert violations == []
    finally:
        server.stop()
