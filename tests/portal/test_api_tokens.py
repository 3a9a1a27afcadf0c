"""Personal API tokens: the profile page that creates and revokes them, and the JSON search
API they open (same hits and permissions as search() for their owner)."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from knowledge.embedding import get_embedder
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.weights import Hits
from portal.api_auth import create_token, hash_token
from portal.models import ApiToken
from tests.conftest import PASSWORD, login, screenshot
from tests.knowledge.retrieval.conftest import add_document, make_source

TOKEN = re.compile(r"kb_[A-Za-z0-9_-]{40,}")


def htmx_post(client: Client, url: str, data: dict | None = None):
    return client.post(url, data or {}, HTTP_HX_REQUEST="true")


# --- the profile page ------------------------------------------------------------------------


def test_profile_link_next_to_the_user_name(client, bob):
    client.force_login(bob)
    html = client.get("/documents/").content.decode()
    assert 'href="/profile/"' in html
    assert client.get("/profile/").status_code == 200


def test_profile_needs_login(client, db):
    response = client.get("/profile/")
    assert response.status_code == 302 and response.url.startswith("/login/")


def test_a_created_token_is_shown_once_and_stored_only_as_a_hash(client, bob):
    client.force_login(bob)
    response = htmx_post(client, "/profile/tokens/", {"name": "CI bot"})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="api-tokens"' in html and "<html" not in html  # the partial, for HTMX
    [token] = TOKEN.findall(html)
    row = ApiToken.objects.get(user=bob)
    assert row.name == "CI bot"
    assert row.token_hash == hash_token(token)
    assert token not in (row.token_hash, row.prefix, row.name)
    assert token.startswith(row.prefix)
    assert "no-store" in response["Cache-Control"]
    page = client.get("/profile/").content.decode()
    assert "CI bot" in page and row.prefix in page
    assert token not in page  # never shown again


def test_creating_and_revoking_need_the_csrf_token(bob):
    client = Client(enforce_csrf_checks=True)
    client.force_login(bob)
    assert htmx_post(client, "/profile/tokens/", {"name": "x"}).status_code == 403
    page = client.get("/profile/").content.decode()
    csrf = re.search(r'"X-CSRFToken": "([^"]+)"', page)[1]  # hx-headers on <body>
    response = client.post(
        "/profile/tokens/", {"name": "x"}, HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=csrf
    )
    assert response.status_code == 200
    row = ApiToken.objects.get(user=bob)
    url = f"/profile/tokens/{row.pk}/revoke/"
    assert htmx_post(client, url).status_code == 403
    assert client.post(url, HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=csrf).status_code == 200
    row.refresh_from_db()
    assert row.revoked_at is not None


def test_revoking_marks_the_token_and_one_cannot_revoke_anothers(client, bob, eve):
    row, _ = create_token(bob, "laptop")
    client.force_login(eve)
    assert htmx_post(client, f"/profile/tokens/{row.pk}/revoke/").status_code == 404
    client.force_login(bob)
    html = htmx_post(client, f"/profile/tokens/{row.pk}/revoke/").content.decode()
    assert "revoked" in html
    row.refresh_from_db()
    assert row.revoked_at is not None
    assert htmx_post(client, f"/profile/tokens/{row.pk}/revoke/").status_code == 404  # already


def test_without_htmx_revoking_goes_back_to_the_profile(client, bob):
    row, _ = create_token(bob, "laptop")
    client.force_login(bob)
    response = client.post(f"/profile/tokens/{row.pk}/revoke/")
    assert response.status_code == 302 and response.url == "/profile/"


# --- the API ---------------------------------------------------------------------------------

BADGES = """# Пропуска

## Потерянный пропуск

О потерянном пропуске сообщите на ресепшен: пропуск заблокируют и выдадут новый за 500 рублей.
"""

PARKING = """# Парковка

## Гостевой пропуск на парковку

Гостевой пропуск на парковку заказывают у секретаря за день до визита гостя.
"""


@pytest.fixture
def knowledge(db, bob, eve):
    embedder = get_embedder()
    public = make_source("Office", is_public=True)
    private = make_source("Bob's notes", is_public=False)
    private.readers.add(bob)
    add_document(public, "badges.md", BADGES, embedder)
    add_document(private, "parking.md", PARKING, embedder)
    return {"public": public, "private": private}


def api(client: Client, token: str | None, **params):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    return client.get("/api/v1/search", params, **headers)


def test_no_token_is_401_json(client, db):
    response = api(client, None, q="пропуск")
    assert response.status_code == 401
    assert "token" in response.json()["error"]
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_an_unknown_or_malformed_token_is_401(client, db):
    assert api(client, "kb_" + "x" * 43, q="пропуск").status_code == 401
    assert (
        client.get("/api/v1/search", {"q": "x"}, HTTP_AUTHORIZATION="Basic Ym9iOnB3").status_code
        == 401
    )


def test_a_revoked_token_is_401(client, bob, knowledge):
    row, token = create_token(bob, "old")
    assert api(client, token, q="пропуск").status_code == 200
    client.force_login(bob)
    htmx_post(client, f"/profile/tokens/{row.pk}/revoke/")
    assert api(Client(), token, q="пропуск").status_code == 401


def test_a_deactivated_users_token_is_401(client, bob, knowledge):
    _, token = create_token(bob, "ci")
    bob.is_active = False
    bob.save()
    assert api(client, token, q="пропуск").status_code == 401


def test_a_session_cookie_is_not_an_api_credential(client, bob, knowledge):
    client.force_login(bob)
    assert api(client, None, q="пропуск").status_code == 401


def test_the_api_gives_the_owners_hits_as_search_does(client, bob, knowledge, ranking_weights):
    # Two documents: every chunk counts, the order is the point.
    ranking_weights(gate={"min_score": 0.0})
    _, token = create_token(bob, "agent")
    response = api(client, token, q="Как получить пропуск?", k="5")
    assert response.status_code == 200
    data = response.json()
    expected = search(
        "Как получить пропуск?",
        user=bob,
        options=SearchOptions(hits=Hits(k=5)),
        embedder=get_embedder(),
    )
    assert expected.hits
    assert [r["chunk_id"] for r in data["results"]] == [c.chunk_id for c in expected.hits]
    row = data["results"][0]
    assert set(row) >= {
        "document",
        "version",
        "section",
        "heading_path",
        "block_type",
        "url",
        "score",
        "text",
    }
    assert row["url"].startswith("http://testserver/documents/")
    assert f"chunk={row['chunk_id']}#chunk-{row['chunk_id']}" in row["url"]
    assert ApiToken.objects.get(user=bob).last_used_at is not None
    assert "candidates" not in data


def test_explain_gives_each_candidates_stages_as_the_search_kept_them(
    client, bob, knowledge, ranking_weights
):
    ranking_weights(gate={"min_score": 0.0})
    _, token = create_token(bob, "agent")
    data = api(client, token, q="Как получить пропуск?", k="3", explain="1").json()
    expected = search(
        "Как получить пропуск?",
        user=bob,
        options=SearchOptions(hits=Hits(k=3)),
        embedder=get_embedder(),
    )
    rows = data["candidates"]
    assert [r["chunk_id"] for r in rows] == [c.chunk_id for c in expected.candidates]
    hits = [r["chunk_id"] for r in rows if r["result"].startswith("hit")]
    assert hits == [r["chunk_id"] for r in data["results"]]
    for row, candidate in zip(rows, expected.candidates, strict=True):
        assert row["dense_score"] == round(candidate.dense.score, 4)
        assert row["calibrated"] == round(candidate.calibrated.score, 4) == row["score"]
        assert row["fused_rank"] == candidate.fused.rank
        assert row["final_rank"] == candidate.final.rank


def test_another_users_sources_stay_invisible(client, bob, eve, knowledge):
    _, bob_token = create_token(bob, "bob")
    _, eve_token = create_token(eve, "eve")
    question = {"q": "гостевой пропуск на парковку", "k": "10"}
    bob_sources = {r["source"] for r in api(client, bob_token, **question).json()["results"]}
    eve_sources = {r["source"] for r in api(client, eve_token, **question).json()["results"]}
    assert "Bob's notes" in bob_sources
    assert eve_sources == {"Office"} or eve_sources == set()
    assert "Bob's notes" not in eve_sources


def test_bad_parameters_are_400(client, bob, knowledge):
    _, token = create_token(bob, "x")
    assert api(client, token).status_code == 400
    assert api(client, token, q="пропуск", k="many").status_code == 400
    assert api(client, token, q="пропуск", k="0").status_code == 400
    assert api(client, token, q="пропуск", type="poem").status_code == 400


def test_filters_apply_like_the_command(client, bob, knowledge):
    _, token = create_token(bob, "x")
    data = api(client, token, q="пропуск", section="1.1", type="text").json()
    assert data["filters"] == {"sections": ["1.1"], "block_types": ["text"]}
    assert all(r["section"].startswith("1.1") for r in data["results"])


def test_the_api_needs_no_csrf_token_and_takes_only_get(bob, knowledge):
    _, token = create_token(bob, "x")
    client = Client(enforce_csrf_checks=True)
    response = client.post("/api/v1/search?q=x", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 405  # past authentication, not stopped by CSRF


# --- the page in a browser -------------------------------------------------------------------


@pytest.mark.browser
def test_creating_and_revoking_a_token_in_the_browser(portal_server, page, bob):
    login(page, portal_server.url, "bob", PASSWORD)
    page.click("header >> text=Profile")
    page.wait_for_url("**/profile/")
    page.fill("input[name=name]", "CI bot")
    page.click("text=Create token")
    token = page.locator("#new-token").inner_text()
    assert TOKEN.fullmatch(token)
    screenshot(page, "profile-token-created")
    response = page.request.get(
        portal_server.url + "/api/v1/search?q=test", headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status == 200
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button:has-text('Revoke')")
    page.wait_for_selector("#api-tokens tr.muted")  # the revoked token, greyed out
    assert page.locator("#new-token").count() == 0
    screenshot(page, "profile-token-revoked")
    again = page.request.get(
        portal_server.url + "/api/v1/search?q=test", headers={"Authorization": f"Bearer {token}"}
    )
    assert again.status == 401
