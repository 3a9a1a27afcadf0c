"""The chat's answer streams have slots of their own and a cap per user (issue 40, row 2): a
user's streams (or anyone's) never take the slots the pages need, and one user cannot take all
the stream slots. Against the real server (uvicorn as ./kb run starts it); each stream waits
for an answer another stream is giving (the message is running), as a reconnect does."""

from __future__ import annotations

import contextlib

import httpx2
import pytest
from django.test import Client

from chat.models import Conversation, Message
from tests.conftest import PortalServer

LIMITS = {"KB_WEB_CONCURRENCY": "2", "KB_WEB_STREAMS": "4", "KB_STREAMS_PER_USER": "2"}


def _session(user) -> dict[str, str]:
    browser = Client()
    browser.force_login(user)
    return {"Cookie": f"sessionid={browser.cookies['sessionid'].value}"}


def _running_message(user) -> Message:
    conversation = Conversation.objects.create(user=user)
    return Message.objects.create(
        conversation=conversation, question="Что такое верификация?", status="running"
    )


@pytest.fixture
def server(transactional_db):
    server = PortalServer(**LIMITS)
    yield server
    server.stop()


def test_answer_streams_take_their_own_slots_and_at_most_two_are_one_users(server, bob, eve):
    bobs, eves = _running_message(bob), _running_message(eve)
    bob_session, eve_session = _session(bob), _session(eve)
    with httpx2.Client(base_url=server.url, timeout=30) as http, contextlib.ExitStack() as open_:

        def stream(message: Message, session: dict[str, str]) -> httpx2.Response:
            url = f"/chat/messages/{message.pk}/stream/"
            return open_.enter_context(http.stream("GET", url, headers=session))

        bob_streams = [stream(bobs, bob_session) for _ in range(3)]
        eve_stream = stream(eves, eve_session)
        pages = [http.get("/login/"), http.get("/documents/", headers=bob_session)]
        slots = http.get("/healthz").json()["slots"]
    # Bob's third stream is refused; Eve's own still opens.
    assert [r.status_code for r in bob_streams] == [200, 200, 429]
    assert bob_streams[2].headers["retry-after"] == "5"
    assert eve_stream.status_code == 200
    # Three streams open on a server of two page slots: the pages answer.
    assert [p.status_code for p in pages] == [200, 200]
    assert slots["streams"] == {"in_use": 3, "limit": 4}
    assert slots["pages"] == {"in_use": 0, "limit": 2}
