"""In the browser: the feedback page shows the questions' topics over time (documents' topics,
content gaps, noise apart), and a topic opens the journal filtered by it."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from knowledge.models import Document, Source
from tests.conftest import login, screenshot
from tests.feedback.conftest import make_answer, make_document

pytestmark = pytest.mark.browser


def folder_document(source: Source, folder: str, title: str) -> Document:
    document = make_document(source, title)
    document.path = f"{folder}/{title}.md"
    document.save(update_fields=["path"])
    return document


def add_history(bob) -> dict[str, int]:
    """Two weeks of questions on three topics, refusals and nonsense; returns the expected
    count per row of the topics table."""
    wiki = Source.objects.create(name="QA wiki", kind=Source.Kind.WIKI)
    specs = Source.objects.create(name="HSE specs", kind=Source.Kind.SPECS)
    Document.objects.create(source=wiki, path="obshee/README.md", title="Общее")
    Document.objects.create(source=wiki, path="test-dizain/README.md", title="Тест дизайн")
    general = folder_document(wiki, "obshee", "Дефекты и ошибки")
    design = folder_document(wiki, "test-dizain", "Классы эквивалентности")
    programme = make_document(specs, "Программа и методика испытаний")
    now = timezone.now()
    plan = [general] * 9 + [design] * 6 + [programme] * 4
    for i, document in enumerate(plan):
        make_answer(
            bob,
            f"Вопрос {i} о «{document.title}»",
            documents=[document],
            created_at=now - timedelta(days=i % 7, hours=1),
        )
    refused = ["Как оформить отпуск?", "Как оформить отпуск в компании?", "Где график отпусков?"]
    for i, question in enumerate(refused):
        make_answer(
            bob, question, outcome="refusal", answer="—", created_at=now - timedelta(days=i)
        )
    for i, question in enumerate(["фывапролдж", "???"]):
        make_answer(
            bob, question, outcome="refusal", answer="—", created_at=now - timedelta(days=i)
        )
    call_command("topics", stdout=io.StringIO())
    return {
        "QA wiki › Общее": 9,
        "QA wiki › Тест дизайн": 6,
        "HSE specs › Программа и методика испытаний": 4,
        "Refused: content gaps": 3,
        "Noise: empty or nonsense": 2,
    }


def test_feedback_page_shows_topics_over_time_and_a_topic_opens_the_journal(
    portal_server, page, alice, bob
):
    expected = add_history(bob)
    login(page, portal_server.url, "alice")
    page.goto(portal_server.url + "/feedback/")
    section = page.locator("#topics")
    section.wait_for()
    chart = section.locator("svg.chart")
    assert chart.count() == 1
    assert chart.get_attribute("aria-label") == "Questions per day by topic"
    assert chart.locator("rect").count() >= 7  # a bar part per day and topic
    shown = {
        row.locator("td").nth(0).inner_text().strip(): int(row.locator("td").nth(1).inner_text())
        for row in section.locator("tbody tr").all()
    }
    assert shown == expected
    section.scroll_into_view_if_needed()
    section.screenshot(
        path=str(screenshot(page, "feedback-topics").with_name("feedback-topics-chart.png"))
    )

    section.get_by_role("link", name="QA wiki › Тест дизайн").click()
    page.wait_for_url("**/journal/?**topic=**")
    rows = page.locator("#journal-results tbody tr")
    assert rows.count() == 6
    assert all("Классы эквивалентности" in text for text in rows.all_inner_texts())
    assert page.locator("select[name=topic]").input_value() == "QA wiki › Тест дизайн"
    screenshot(page, "journal-topic-filter")

    page.goto(portal_server.url + "/feedback/")
    page.locator("#topics").get_by_role("link", name="Noise: empty or nonsense").click()
    page.wait_for_url("**/journal/?**topic_kind=noise**")
    texts = page.locator("#journal-results tbody tr").all_inner_texts()
    assert len(texts) == 2 and any("фывапролдж" in t for t in texts)
    # Noise is not a content gap.
    page.goto(portal_server.url + "/feedback/")
    gaps = page.locator("#content-gaps").inner_text()
    assert "отпуск" in gaps and "фывапролдж" not in gaps
