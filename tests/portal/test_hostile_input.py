"""Hostile values in every parameter of every page, form and API: an answer (400, 404, the
default), never a server error. Driven by Hypothesis over the real views on PostgreSQL."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chat.models import Conversation, Message
from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import register_file
from knowledge.models import Source
from portal.api_auth import create_token

pytestmark = pytest.mark.django_db

HOSTILE = st.one_of(
    st.sampled_from(
        [
            "²",
            "١٢",
            "\x00",
            "1\x00",
            "-1",
            "0",
            "99999999999999999999999",
            "1e3",
            "[]",
            "{}",
            "' OR 1=1 --",
            "<script>alert(1)</script>",
            "../../etc/passwd",
            "2019-13-45",
            " ",
            "ﬁ",
        ]
    ),
    st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=30),
)


@pytest.fixture
def world(alice):
    source = Source.objects.create(name="Runbooks")
    first = register_file(source, "runbook.md", b"# Runbook\n\nRestart billing.\n", enqueue=False)
    ingest_version(first.version.pk)
    second = register_file(
        source, "runbook.md", b"# Runbook\n\nRestart billing twice.\n", enqueue=False
    )
    ingest_version(second.version.pk)
    conversation = Conversation.objects.create(user=alice, title="t")
    message = Message.objects.create(
        conversation=conversation, question="q", answer="a", status=Message.Status.DONE
    )
    _, token = create_token(alice, "fuzz")
    return {
        "doc": first.document.pk,
        "vid": second.version.pk,
        "conv": conversation.pk,
        "msg": message.pk,
        "token": token,
    }


def _gets(w: dict) -> list[tuple[str, list[str]]]:
    return [
        ("/", ["conversation"]),
        ("/documents/", ["source", "q"]),
        (f"/documents/{w['doc']}/", ["version", "chunk"]),
        (f"/documents/{w['doc']}/compare/", ["a", "b", "view"]),
        (f"/documents/{w['doc']}/versions/", ["page"]),
        ("/versions/", ["q"]),
        (
            "/journal/",
            [
                "profile",
                "outcome",
                "mode",
                "user",
                "since",
                "until",
                "q",
                "page",
                "topic",
                "topic_kind",
            ],
        ),
        (f"/journal/{w['msg']}/", ["x"]),
        ("/feedback/", ["since", "until", "profile", "source", "period", "days"]),
    ]


def _posts(w: dict) -> list[tuple[str, list[str]]]:
    return [
        ("/chat/new/", ["profile"]),
        (f"/chat/{w['conv']}/ask/", ["question"]),
        (f"/documents/{w['doc']}/versions/{w['vid']}/move/", ["direction", "position"]),
        (f"/feedback/answers/{w['msg']}/rating/", ["value", "reasons", "comment"]),
        ("/profile/tokens/", ["name"]),
    ]


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(value=HOSTILE)
def test_no_parameter_value_makes_a_page_answer_500(client, world, alice, value):
    client.force_login(alice)
    for url, names in _gets(world):
        response = client.get(url, dict.fromkeys(names, value))
        assert response.status_code < 500, (url, value)
    for url, names in _posts(world):
        response = client.post(url, dict.fromkeys(names, value))
        assert response.status_code < 500, (url, value)
    search = client.get(
        "/api/v1/search",
        {"q": value, "k": value, "type": value, "section": value},
        HTTP_AUTHORIZATION=f"Bearer {world['token']}",
    )
    assert search.status_code < 500, value
    for body in (
        {"question": value},
        {"question": "restart", "conversation": value},
        {"question": "restart", "profile": value},
    ):
        response = client.post(
            "/api/v1/ask",
            data=json.dumps(body),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {world['token']}",
        )
        assert response.status_code < 500, (body, response.content[:200])


def test_nul_bytes_foreign_charsets_and_deep_json_get_400_in_plain_words(client, world, alice):
    client.force_login(alice)
    assert client.get("/documents/", {"q": "a\x00b"}).status_code == 400
    response = client.post(
        "/chat/new/", "profile=1", content_type="application/x-www-form-urlencoded; charset=utf-16"
    )
    assert response.status_code == 400 and b"UTF-8" in response.content
    deep = "[" * 5000 + "]" * 5000
    response = client.post(
        "/api/v1/ask",
        data=deep,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {world['token']}",
    )
    assert response.status_code == 400
    response = client.post(
        "/api/v1/ask",
        data=json.dumps({"question": "a\x00b"}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {world['token']}",
    )
    assert response.status_code == 400
