"""POST /api/v1/ask with personal API tokens: same pipeline, same permissions."""

from __future__ import annotations

import json

import pytest

from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import register_file
from knowledge.models import Source
from portal.api_auth import create_token, revoke_token

pytestmark = pytest.mark.django_db


@pytest.fixture
def runbook(db):
    source = Source.objects.create(name="Runbooks")
    text = "Сервис биллинга перезапускается командой systemctl restart billing на узле app-3."
    ingest_version(register_file(source, "runbook.txt", text.encode(), enqueue=False).version.pk)
    return source


def post(client, token: str | None, payload: dict):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    return client.post(
        "/api/v1/ask", data=json.dumps(payload), content_type="application/json", **headers
    )


def test_ask_api_answers_with_sources_like_the_cli(client, bob, runbook):
    _, token = create_token(bob, "agent")
    response = post(client, token, {"question": "Как перезапустить сервис биллинга?"})
    assert response.status_code == 200
    body = response.json()
    assert body["refused"] is False and body["clarification"] is None
    assert body["sources"][0]["document"] == "runbook"
    assert body["sources"][0]["url"].startswith("http://testserver/documents/")


def test_ask_api_refuses_without_a_valid_token(client, bob, runbook):
    assert post(client, None, {"question": "x"}).status_code == 401
    assert post(client, "kb_not-a-token", {"question": "x"}).status_code == 401
    row, token = create_token(bob, "agent")
    revoke_token(bob, row.pk)
    assert post(client, token, {"question": "x"}).status_code == 401


def test_ask_api_sees_only_the_owners_sources(client, bob, eve, runbook):
    runbook.is_public = False
    runbook.save()
    runbook.readers.add(bob)
    _, eve_token = create_token(eve, "agent")
    body = post(client, eve_token, {"question": "Как перезапустить сервис биллинга?"}).json()
    assert body["refused"] is True and body["sources"] == []
    _, bob_token = create_token(bob, "agent")
    assert (
        post(client, bob_token, {"question": "Как перезапустить сервис биллинга?"}).json()[
            "refused"
        ]
        is False
    )


def test_ask_api_validates_its_input(client, bob):
    _, token = create_token(bob, "agent")
    assert post(client, token, {}).status_code == 400
    assert post(client, token, {"question": "x", "profile": "Nope"}).status_code == 404
    response = client.post(
        "/api/v1/ask",
        data="not json",
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 400


@pytest.mark.parametrize(
    "body",
    [
        '{"question": ["a"]}',
        '{"question": {"text": "a"}}',
        '{"question": NaN}',
        '{"question": 12}',
        '{"question": true}',
        '{"question": "x", "profile": ["Draft test cases"]}',
        '["question"]',
    ],
)
def test_ask_api_refuses_a_question_that_is_not_text(client, bob, body):
    from chat.models import Message

    _, token = create_token(bob, "agent")
    response = client.post(
        "/api/v1/ask",
        data=body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 400, response.content
    assert "error" in response.json()
    assert not Message.objects.exists()  # nothing asked, nothing stored


def test_the_conversation_title_from_the_api_is_the_redacted_question(client, bob, runbook):
    from chat.models import Conversation

    _, token = create_token(bob, "agent")
    question = "Как перезапустить биллинг? Пишите на ivan.petrov@example.com или +7 916 123-45-67"
    response = post(client, token, {"question": question})
    assert response.status_code == 200
    title = Conversation.objects.get(user=bob).title
    assert "ivan.petrov" not in title and "916" not in title
    assert title.startswith("Как перезапустить биллинг?")
