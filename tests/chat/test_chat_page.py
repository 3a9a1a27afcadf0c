"""The chat window in a real browser: the answer streams in, sources open the cited section."""

from __future__ import annotations

import time

import pytest

from tests.chat.conftest import ingest_small_kb
from tests.conftest import PortalServer, login, screenshot
from tests.llm_server import LlmTestServer

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QUESTION = "Что такое верификация и валидация?"


def _ask(page, question: str) -> None:
    page.wait_for_selector("#question")  # on the home page too: the box is there at once
    page.fill("#question", question)
    page.keyboard.press("Enter")


def test_answer_streams_in_and_its_source_opens_the_cited_section(tmp_path, bob, page):
    ingest_small_kb(tmp_path)
    with LlmTestServer(default_delay=0.12) as llm:
        server = PortalServer(KB_LLM_BASE_URL=llm.base_url)
        try:
            login(page, server.url, "bob")
            _ask(page, QUESTION)
            live = page.locator(".turn").last.locator(".answer-text")
            lengths: list[int] = []
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if page.locator(".turn").last.locator(".bubble.answer[data-outcome]").count():
                    break
                lengths.append(len(live.inner_text()) if live.count() else 0)
                if len(lengths) == 6:
                    screenshot(page, "chat-streaming")
                time.sleep(0.1)
            growing = sorted({n for n in lengths if n > 0})
            assert len(growing) >= 2, f"the answer did not grow in steps: {lengths}"
            answer = page.locator(".turn").last.locator(".bubble.answer")
            assert answer.get_attribute("data-outcome") == "answer"
            assert answer.locator(".sources a.source-link").count() >= 1
            screenshot(page, "chat-answer")
            href = answer.locator("a.cite").first.get_attribute("href")
            chunk_id = href.split("#chunk-")[1]
            answer.locator("a.cite").first.click()
            page.wait_for_url(f"**/documents/**chunk={chunk_id}**")
            highlighted = page.locator(".highlight").first
            highlighted.wait_for()
            assert highlighted.is_visible()
            box = highlighted.bounding_box()
            assert box is not None and 0 <= box["y"] < 860, (
                "the cited section is not scrolled into view"
            )
            screenshot(page, "viewer-cited-section")
        finally:
            server.stop()


def test_with_the_llm_server_stopped_the_page_shows_a_notice_and_quotes(tmp_path, bob, page):
    ingest_small_kb(tmp_path)
    stopped = LlmTestServer().start()
    url = stopped.base_url
    stopped.stop()
    server = PortalServer(KB_LLM_BASE_URL=url, KB_LLM_CONNECT_TIMEOUT="1")
    try:
        login(page, server.url, "bob")
        _ask(page, QUESTION)
        answer = page.locator(".turn").last.locator(".bubble.answer[data-outcome]")
        answer.wait_for(timeout=30_000)
        assert "недоступна" in answer.locator(".notice").inner_text()
        assert "без языковой модели" in answer.inner_text()
        assert answer.locator(".sources a.source-link").count() >= 1
        assert "Server Error" not in page.content()
        screenshot(page, "chat-llm-down")
    finally:
        server.stop()


def test_clarification_tiles_in_the_browser_answer_from_the_chosen_document(bob, page):
    from tests.chat.test_policy import _two_meanings

    _two_meanings()
    server = PortalServer()
    try:
        login(page, server.url, "bob")
        _ask(page, "Что такое протокол?")
        answer = page.locator(".turn").last.locator(".bubble.answer[data-outcome]")
        answer.wait_for(timeout=30_000)
        assert answer.get_attribute("data-outcome") == "clarification"
        tiles = answer.locator("button.tile")
        assert tiles.count() >= 2
        screenshot(page, "clarification-tiles")
        tiles.filter(has_text="Сетевой протокол").first.click()
        page.locator(".turn").nth(1).wait_for()  # (no wait_for_function: the CSP forbids eval)
        followed = page.locator(".turn").last.locator(".bubble.answer[data-outcome]")
        followed.wait_for(timeout=30_000)
        assert followed.get_attribute("data-outcome") == "answer"
        sources = [s.inner_text() for s in followed.locator(".sources a.source-link").all()]
        assert sources and all("Сетевой протокол" in s for s in sources), sources
        screenshot(page, "clarification-answered")
    finally:
        server.stop()


@pytest.fixture
def small_kb_portal(tmp_path, bob):
    """The portal serving the small knowledge base, Bob a reader."""
    ingest_small_kb(tmp_path)
    server = PortalServer()
    yield server
    server.stop()


def _answer(server, page, question: str):
    """Bob's answer bubble to ``question``, once done."""
    login(page, server.url, "bob")
    _ask(page, question)
    answer = page.locator(".turn").last.locator(".bubble.answer[data-outcome]")
    answer.wait_for(timeout=30_000)
    return answer


def test_a_partial_answer_shows_what_is_missing_and_the_nearest_passages(small_kb_portal, page):
    answer = _answer(small_kb_portal, page, "Сколько дней длится приёмка приложения по ПМИ?")
    assert answer.get_attribute("data-outcome") == "partial"
    text = answer.inner_text()
    assert "В документах описано" in text and "но не указано срок или длительность" in text
    assert "Программа и методика испытаний" in text
    sources = answer.locator(".sources a.source-link")
    assert sources.count() >= 1
    assert all("Программа и методика испытаний" in s.inner_text() for s in sources.all())
    screenshot(page, "chat-partial-answer")


def test_a_refusal_says_so_and_its_tiles_are_captioned_as_nearest_topics(small_kb_portal, page):
    answer = _answer(small_kb_portal, page, "Как испечь шарлотку с яблоками?")
    assert answer.get_attribute("data-outcome") == "refusal"
    assert "В документах базы знаний нет ответа" in answer.inner_text()
    # The tiles are the nearest headings, not an answer: the page says what they are.
    assert answer.locator("button.tile").count() >= 1
    caption = answer.locator("p.muted", has_text="Nearest topics in the documents")
    assert caption.count() == 1
    assert answer.locator(".sources").count() == 0
    screenshot(page, "chat-refusal")
