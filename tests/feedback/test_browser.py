"""Acceptance in the browser: a real answer (asked through the chat page over a few real pages of
the QA wiki) is rated down with a reason and a comment; the analytics page lists it among the
worst-rated with links to its sources."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from chat.models import Message
from feedback.models import Rating
from tests.conftest import login, screenshot
from tests.feedback.conftest import ingest_wiki_pages, make_answer, make_document, rate

pytestmark = pytest.mark.browser

QUESTION = "Чем дефект отличается от ошибки?"


def add_history(bob, wiki) -> None:
    """A few days of journal around the real answer, so the charts have something to show."""
    now = timezone.now()
    extra = make_document(wiki, "Чек-лист регрессии")
    refused = [
        "Как оформить отпуск в компании?",
        "Сколько дней отпуска положено сотруднику?",
        "Где посмотреть график отпусков?",
        "Как настроить VPN для удалённой работы?",
        "Не работает VPN из дома, что делать?",
    ]
    for i in range(12):
        when = now - timedelta(days=i % 6, hours=1)
        outcome = ["answer", "answer", "partial", "clarification"][i % 4]
        message = make_answer(
            bob,
            f"Вопрос о регрессии {i}",
            outcome=outcome,
            documents=[extra],
            created_at=when,
            timings={"rewrite_ms": 2.0 + i, "search_ms": 60.0 + 9 * i, "total_ms": 90.0 + 15 * i},
        )
        rate(message, bob, "up" if i % 3 else "down", [] if i % 3 else ["incomplete"])
    for i, question in enumerate(refused):
        make_answer(
            bob,
            question,
            outcome="refusal",
            answer="В документах базы знаний нет ответа на этот вопрос.",
            created_at=now - timedelta(days=i % 4, hours=2),
        )


def test_rate_an_answer_down_and_find_it_among_the_worst_rated(
    portal_server, page, alice, bob, wiki
):
    ingest_wiki_pages(
        wiki, ["obshee/defekty-i-oshibki.md", "obshee/biznes-logika-business-logic.md"]
    )
    add_history(bob, wiki)

    login(page, portal_server.url, "bob")
    page.goto(portal_server.url + "/")
    page.click(".new-chat button[type=submit]")  # bob has older conversations
    page.fill("#question", QUESTION)
    page.click(".ask-form button[type=submit]")
    answer = page.locator(".bubble.answer[data-outcome]").last
    answer.wait_for(timeout=120_000)
    message = Message.objects.filter(question=QUESTION).get()
    assert message.outcome in ("answer", "partial"), message.answer
    assert message.sources.exists()

    slot = page.locator(f"#rating-{message.pk}")
    slot.locator(".thumb-down").click()
    form = slot.locator("form.rating-form")
    form.wait_for()
    assert slot.locator(".thumb-down").get_attribute("aria-pressed") == "true"
    form.locator("label.chip", has_text="Incomplete").click()
    form.locator("label.chip", has_text="Outdated").click()
    form.locator("textarea").fill("Не сказано, что такое отказ (failure); определение устарело.")
    # A window as tall as the page, so the sticky question box stays below the answer.
    page.set_viewport_size({"width": 1280, "height": 1400})
    screenshot(page, "feedback-reason-form")
    form.locator("button[type=submit]").click()
    page.locator(f"#rating-{message.pk} .rating-details").wait_for()
    assert "Outdated" in slot.inner_text()
    screenshot(page, "feedback-rated-down")

    rating = Rating.objects.get(message=message)
    assert (rating.user, rating.value) == (bob, "down")
    assert rating.reasons == ["incomplete", "outdated"]
    assert "отказ (failure)" in rating.comment

    # A reload shows the rating as it was left.
    page.reload()
    page.locator(f"#rating-{message.pk}[data-rating=down] .rating-details").wait_for()

    page.context.clear_cookies()
    login(page, portal_server.url, "alice")
    page.goto(portal_server.url + "/feedback/")
    worst = page.locator(f"#worst-{message.pk}")
    worst.wait_for()
    assert worst.locator(".worst-rating .chip", has_text="Outdated").count() == 1
    assert "отказ (failure)" in worst.inner_text()
    links = worst.locator(".worst-sources a.source-link")
    expected = [s.url for s in message.sources.order_by("number")]
    assert [links.nth(i).get_attribute("href") for i in range(links.count())] == expected
    assert page.locator("#content-gaps .gap").count() >= 2  # holidays and VPN, at least
    screenshot(page, "analytics")

    links.first.click()  # the source opens in the document viewer
    page.wait_for_url(lambda url: "/documents/" in url)
    assert page.locator(".doc-body").count() == 1
