"""The chat home: the question box at once; the first question starts the conversation."""

from __future__ import annotations

import pytest

from chat.models import AssistantProfile, Conversation, Message
from tests.chat.conftest import ingest_small_kb
from tests.conftest import PortalServer, login, screenshot


@pytest.mark.django_db
def test_the_home_page_has_the_question_box_and_the_first_question_starts_a_conversation(
    client, bob
):
    coverage = AssistantProfile.objects.get(
        name="Coverage check"
    )  # a profile of the data migration
    client.force_login(bob)
    home = client.get("/").content.decode()
    assert 'id="question"' in home and "Start a conversation" not in home
    assert 'name="profile"' in home  # the profile is chosen beside the box
    response = client.post(
        "/chat/new/", {"question": "  Что такое верификация?  ", "profile": coverage.pk}
    )
    conversation = Conversation.objects.get(user=bob)
    assert response.status_code == 302 and response["Location"] == f"/chat/{conversation.pk}/"
    assert conversation.profile == coverage
    message = Message.objects.get(conversation=conversation)
    assert message.question == "Что такое верификация?"
    page = client.get(response["Location"]).content.decode()
    assert "sse-connect" in page  # its answer streams on the conversation's page
    client.post("/chat/new/", {"question": ""})  # no question: an empty new conversation
    assert Conversation.objects.filter(user=bob).count() == 2
    assert Message.objects.count() == 1


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_a_newcomer_types_a_question_on_the_home_page_and_presses_enter(tmp_path, bob, page):
    ingest_small_kb(tmp_path)
    server = PortalServer()
    try:
        login(page, server.url, "bob")
        page.fill("#question", "Чем верификация отличается от валидации?")
        screenshot(page, "chat-home-question-box")
        page.keyboard.press("Enter")
        answer = page.locator(".turn").last.locator(".bubble.answer[data-outcome]")
        answer.wait_for(timeout=60_000)
        assert answer.get_attribute("data-outcome") in ("answer", "partial")
        assert "/chat/" in page.url
        screenshot(page, "chat-home-first-answer")
    finally:
        server.stop()
