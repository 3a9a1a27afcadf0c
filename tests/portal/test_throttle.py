"""Sign-in throttling and rate limits, counted in the session's real Redis.

Failures are counted per (account, address) pair before the password is checked; a pair that
guessed too often cools off (growing), its account's owner elsewhere is never locked out; many
failures of one account from anywhere alert staff instead of locking it.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx2
import pytest
from django.test import override_settings

from portal import signin
from portal.api_auth import create_token
from portal.models import AuditEvent
from portal.throttle import _redis
from tests.conftest import PASSWORD, PortalServer

pytestmark = pytest.mark.django_db
THROTTLED = "Too many failed sign-ins from here"
WRONG = "Wrong user name or password."


@pytest.fixture(autouse=True)
def _clean_counters():
    client = _redis()
    for key in client.scan_iter("kb:*"):
        client.delete(key)
    yield
    for key in client.scan_iter("kb:*"):
        client.delete(key)


@pytest.fixture
def one_period(monkeypatch):
    """The account's counters are kept per fixed period (an hour); a test that counts them must
    not cross a period's end, where they start afresh."""
    period = signin._period()
    monkeypatch.setattr(signin, "_period", lambda: (period[0], 1800))


def _sign_in(client, username: str, password: str, address: str = "10.0.0.7", path="/login/"):
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=address)


def _signed_in(client) -> bool:
    return "_auth_user_id" in client.session


def _wait_minutes(response) -> int:
    return int(re.search(r"try again in (\d+) min", response.content.decode())[1])


def _end_cooloffs() -> None:
    """As if every cool-off had run out (the pairs keep their counts)."""
    client = _redis()
    for key in client.scan_iter("kb:signin:pair:*"):
        client.hset(key, "until", "0")


@override_settings(LOGIN_FAILURES=5)
def test_wrong_passwords_on_the_admin_login_cool_that_address_off_even_for_the_right_one(
    client, alice
):
    texts = [
        _sign_in(
            client, "alice", "wrong-" + uuid.uuid4().hex, path="/admin/login/"
        ).content.decode()
        for _ in range(12)
    ]
    assert sum(WRONG[:20] in t or "correct username and password" in t for t in texts) == 5
    assert all(THROTTLED in t for t in texts[5:])
    refused = _sign_in(client, "alice", PASSWORD, path="/admin/login/")
    assert THROTTLED in refused.content.decode() and not _signed_in(client)
    # The same pair on the other form: one counter for both.
    assert THROTTLED in _sign_in(client, "alice", PASSWORD).content.decode()


@override_settings(LOGIN_FAILURES=5)
def test_a_cooled_off_account_still_signs_in_from_another_address_on_both_forms(
    client, alice, django_user_model
):
    for _ in range(10):
        _sign_in(client, "alice", "wrong-" + uuid.uuid4().hex, address="203.0.113.9")
    assert THROTTLED in _sign_in(client, "alice", PASSWORD, address="203.0.113.9").content.decode()
    assert _sign_in(client, "alice", PASSWORD, address="10.0.0.8").status_code == 302
    assert _signed_in(client)
    client.logout()
    response = _sign_in(client, "alice", PASSWORD, address="10.0.0.9", path="/admin/login/")
    assert response.status_code == 302 and _signed_in(client)
    client.logout()
    # The attacker's address is not locked for anyone else either: only that pair cools off.
    django_user_model.objects.create_user("carol", password=PASSWORD)
    assert _sign_in(client, "carol", PASSWORD, address="203.0.113.9").status_code == 302


@override_settings(LOGIN_FAILURES=3, LOGIN_COOLOFF_MINUTES=1, LOGIN_LOCKOUT_MINUTES=15)
def test_the_cool_off_grows_with_each_wrong_password_after_one_and_a_success_clears_it(client, bob):
    for _ in range(3):
        _sign_in(client, "bob", "wrong")
    first = _sign_in(client, "bob", PASSWORD).content.decode()
    assert "try again in 1 min" in first and not _signed_in(client)
    waits = []
    for _ in range(4):
        _end_cooloffs()
        _sign_in(client, "bob", "wrong")  # checked once the cool-off is over: the next is longer
        waits.append(_wait_minutes(_sign_in(client, "bob", "x")))
    assert waits == [2, 4, 8, 15]  # doubling, at most KB_LOGIN_LOCKOUT_MINUTES
    _end_cooloffs()
    assert _sign_in(client, "bob", PASSWORD).status_code == 302
    client.logout()
    for _ in range(2):  # a success cleared the pair: the free attempts are back
        _sign_in(client, "bob", "wrong")
    assert _sign_in(client, "bob", PASSWORD).status_code == 302
    throttled = AuditEvent.objects.filter(action="sign-in-throttled", actor_name="bob")
    assert throttled.count() == 5 and {e.address for e in throttled} == {"10.0.0.7"}


@override_settings(
    LOGIN_FAILURES=5, LOGIN_ALERT_FAILURES=20, LOGIN_ALERT_MINUTES=60, LOGIN_ACCOUNT_FAILURES=20
)
def test_many_failures_from_many_addresses_never_lock_the_owner_out_and_alert_staff(
    client, alice, bob, one_period
):
    assert _sign_in(client, "bob", PASSWORD, address="10.1.2.3").status_code == 302  # bob's
    client.logout()
    for i in range(30):
        _sign_in(client, "bob", f"guess-{i}", address=f"198.51.100.{i + 1}")
    assert _sign_in(client, "bob", PASSWORD, address="10.1.2.3").status_code == 302
    client.logout()
    alerts = AuditEvent.objects.filter(action="sign-in-alert")
    assert alerts.count() == 1  # once per account and period, not once per failure
    alert = alerts.get()
    assert alert.target == "bob" and alert.detail["failures"] == 20
    assert alert.detail["addresses"] == 20
    client.force_login(alice)
    page = client.get("/feedback/").content.decode()
    assert "Sign-in alerts" in page and "bob" in page
    audit = client.get("/audit/", {"action": "sign-in-alert"}).content.decode()
    assert "bob" in audit


@override_settings(LOGIN_FAILURES=5, LOGIN_ACCOUNT_FAILURES=20)
def test_guessing_from_many_addresses_meets_the_accounts_ceiling(client, bob, one_period):
    """60 wrong passwords from 12 addresses, five each, were all checked: the account's ceiling
    lets 20 be checked from addresses it never signed in from, and refuses the rest unchecked;
    its owner still signs in from an address of theirs."""
    assert _sign_in(client, "bob", PASSWORD, address="10.1.2.3").status_code == 302
    client.logout()
    pages = [
        _sign_in(client, "bob", f"guess-{i}", address=f"198.51.100.{i % 12 + 1}").content.decode()
        for i in range(60)
    ]
    checked = sum(WRONG in page for page in pages)
    refused = sum("Too many failed sign-ins of this account" in page for page in pages)
    assert (checked, refused) == (20, 40)
    assert AuditEvent.objects.filter(action="sign-in-failed").count() == 20
    assert _sign_in(client, "bob", PASSWORD, address="10.1.2.3").status_code == 302
    client.logout()
    # From an address bob never used, even the right password waits for the period's end.
    assert _sign_in(client, "bob", PASSWORD, address="203.0.113.9").status_code == 200


@override_settings(LOGIN_FAILURES=5)
def test_the_addresses_of_one_ipv6_64_count_as_one(client, bob):
    """A host is given a whole /64: each of its addresses is not a new guesser."""
    pages = [
        _sign_in(client, "bob", f"guess-{i}", address=f"2001:db8:1:2::{i + 1:x}").content.decode()
        for i in range(12)
    ]
    assert sum(WRONG in page for page in pages) == 5
    assert all(THROTTLED in page for page in pages[5:])
    # Another /64 is another address; an IPv4 address mapped into IPv6 is that IPv4 address.
    assert WRONG in _sign_in(client, "bob", "guess", address="2001:db8:1:3::1").content.decode()
    for _ in range(5):
        _sign_in(client, "bob", "guess", address="192.0.2.8")
    mapped = _sign_in(client, "bob", "guess", address="::ffff:192.0.2.8").content.decode()
    assert THROTTLED in mapped


@override_settings(LOGIN_FAILURES=5)
def test_150_parallel_wrong_passwords_are_counted_before_they_are_checked(transactional_db, bob):
    server = PortalServer()
    try:
        with httpx2.Client(base_url=server.url, timeout=60) as client:
            page = client.get("/login/")
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]
            cookies = dict(client.cookies)

        def attempt(i: int) -> httpx2.Response:
            return httpx2.post(
                server.url + "/login/",
                data={"username": "bob", "password": f"guess-{i}", "csrfmiddlewaretoken": token},
                cookies=cookies,
                timeout=120,
            )

        with ThreadPoolExecutor(max_workers=50) as pool:
            responses = list(pool.map(attempt, range(150)))
    finally:
        server.stop()
    pages = [r.text for r in responses]
    checked = sum(WRONG in p for p in pages)
    refused = sum(THROTTLED in p for p in pages)
    # On a busy machine a full web process sheds some at once (503 with Retry-After), before
    # any password is looked at; those are neither checked nor counted.
    shed = [r for r in responses if WRONG not in r.text and THROTTLED not in r.text]
    assert all(r.status_code == 503 and r.headers.get("Retry-After") for r in shed), [
        (r.status_code, r.text[:80]) for r in shed[:3]
    ]
    # The server's own setting (KB_LOGIN_FAILURES default) bounds how many were checked.
    from django.conf import settings as live

    assert refused > 0 and checked + refused + len(shed) == 150
    assert checked <= live.LOGIN_FAILURES, (checked, refused)
    assert AuditEvent.objects.filter(action="sign-in-failed").count() == checked


def test_x_forwarded_for_from_the_loopback_does_not_make_new_addresses(transactional_db, bob):
    """The web server as ./kb run starts it: a header anyone can write is no address."""
    server = PortalServer()
    try:
        texts = []
        with httpx2.Client(base_url=server.url, timeout=60) as client:
            for i in range(12):
                page = client.get("/login/")
                token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]
                response = client.post(
                    "/login/",
                    data={"username": "bob", "password": f"g{i}", "csrfmiddlewaretoken": token},
                    headers={"X-Forwarded-For": f"192.0.2.{i + 1}"},
                )
                texts.append(response.text)
    finally:
        server.stop()
    assert THROTTLED in texts[-1]
    addresses = set(
        AuditEvent.objects.filter(action="sign-in-failed").values_list("address", flat=True)
    )
    assert addresses == {"127.0.0.1"}


@override_settings(LOGIN_FAILURES=3, TRUSTED_PROXIES=["10.9.0.0/16"])
def test_a_trusted_proxys_x_forwarded_for_names_the_client(client, bob):
    def via_proxy(password: str, client_address: str):
        return client.post(
            "/login/",
            {"username": "bob", "password": password},
            REMOTE_ADDR="10.9.0.2",
            HTTP_X_FORWARDED_FOR=f"{client_address}, 10.9.0.1",
        )

    for i in range(3):
        via_proxy(f"wrong-{i}", "198.51.100.7")
    assert THROTTLED in via_proxy(PASSWORD, "198.51.100.7").content.decode()
    # Another client behind the same proxy is another address: the proxy is not locked.
    assert via_proxy(PASSWORD, "198.51.100.8").status_code == 302
    failed = AuditEvent.objects.filter(action="sign-in-failed")
    assert set(failed.values_list("address", flat=True)) == {"198.51.100.7"}


@override_settings(LOGIN_FAILURES=3)
def test_wrong_api_tokens_cool_off_before_lookup_and_the_owners_token_still_works(client, bob):
    _, good = create_token(bob, "agent")
    wrong = "kb_" + "x" * 43
    statuses = [
        client.get("/api/v1/search", {"q": "x"}, HTTP_AUTHORIZATION=f"Bearer {wrong}").status_code
        for _ in range(5)
    ]
    assert statuses == [401, 401, 401, 429, 429]
    limited = client.get("/api/v1/search", {"q": "x"}, HTTP_AUTHORIZATION=f"Bearer {wrong}")
    assert 1 <= int(limited["Retry-After"]) <= 60
    assert (
        client.get("/api/v1/search", {"q": "x"}, HTTP_AUTHORIZATION=f"Bearer {good}").status_code
        == 200
    )
    assert AuditEvent.objects.filter(action="sign-in-throttled").count() == 1


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


def test_counting_survives_threads_of_the_same_process(bob):
    """begin() is one Redis script: 40 threads at once reserve exactly the free attempts."""
    from django.conf import settings

    from portal import signin

    barrier = threading.Barrier(40)

    def reserve(_: int) -> bool:
        barrier.wait()
        return not signin.begin("bob", "10.3.3.3").refused

    with ThreadPoolExecutor(max_workers=40) as pool:
        allowed = sum(pool.map(reserve, range(40)))
    assert allowed == settings.LOGIN_FAILURES
