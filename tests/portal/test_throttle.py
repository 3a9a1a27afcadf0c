"""Sign-in lockout and rate limits, counted in the session's real Redis."""

from __future__ import annotations

import json
import uuid

import pytest
from django.test import override_settings

from portal.api_auth import create_token
from portal.throttle import _redis
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _clean_counters():
    # Before and after: a locked "bob" must not leak into the other tests' sign-ins.
    client = _redis()
    for key in client.scan_iter("kb:*"):
        client.delete(key)
    yield
    for key in client.scan_iter("kb:*"):
        client.delete(key)


def _sign_in(client, password: str, address: str = "10.0.0.7"):
    return client.post("/login/", {"username": "bob", "password": password}, REMOTE_ADDR=address)


def test_ten_wrong_passwords_lock_the_account_even_for_the_right_one(client, bob):
    for _ in range(10):
        response = _sign_in(client, "wrong-" + uuid.uuid4().hex)
        assert response.status_code == 200 and "_auth_user_id" not in client.session
    locked = _sign_in(client, PASSWORD, address="10.0.0.8")  # another address: the account
    assert locked.status_code == 200
    assert "Too many failed sign-ins" in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_a_success_before_the_limit_clears_the_count(client, bob):
    for _ in range(9):
        _sign_in(client, "wrong")
    assert _sign_in(client, PASSWORD).status_code == 302
    client.logout()
    # The account's count started again; the first address keeps its own (18 would lock it).
    for _ in range(9):
        _sign_in(client, "wrong", address="10.0.0.9")
    assert _sign_in(client, PASSWORD, address="10.0.0.9").status_code == 302


@override_settings(RATE_SEARCH_PER_MINUTE=3, RATE_ASK_PER_MINUTE=2)
def test_the_api_answers_429_with_retry_after_past_the_limit(client, bob):
    _, token = create_token(bob, "agent")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    statuses = [client.get("/api/v1/search", {"q": "x"}, **auth).status_code for _ in range(4)]
    assert statuses[:3] == [200, 200, 200] and statuses[3] == 429
    limited = client.get("/api/v1/search", {"q": "x"}, **auth)
    assert limited.status_code == 429 and 1 <= int(limited["Retry-After"]) <= 60
    assert "Too many requests" in limited.json()["error"]
    asked = [
        client.post(
            "/api/v1/ask",
            data=json.dumps({"question": "x"}),
            content_type="application/json",
            **auth,
        ).status_code
        for _ in range(3)
    ]
    assert asked[2] == 429
