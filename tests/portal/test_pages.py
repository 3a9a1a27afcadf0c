"""Login, navigation and permissions through the pages users touch."""

from __future__ import annotations

import pytest

from tests.conftest import PASSWORD, login, screenshot


def test_anonymous_user_is_sent_to_login(client, db):
    response = client.get("/")
    assert response.status_code == 302
    assert response.url.startswith("/login/")


def test_reader_sees_navigation_without_admin(client, bob):
    client.force_login(bob)
    html = client.get("/").content.decode()
    assert ">Ask<" in html
    assert "/admin/" not in html


def test_staff_sees_admin_link_and_reader_cannot_open_admin(client, alice, bob):
    client.force_login(alice)
    assert "/admin/" in client.get("/").content.decode()
    assert client.get("/admin/").status_code == 200
    client.force_login(bob)
    assert client.get("/admin/").status_code == 302  # to the admin login, not the admin


def test_logout_needs_post_and_csrf(client, bob):
    client.force_login(bob)
    assert client.get("/logout/").status_code == 405
    csrf_client = type(client)(enforce_csrf_checks=True)
    csrf_client.force_login(bob)
    assert csrf_client.post("/logout/").status_code == 403


def test_htmx_is_served_from_our_static_files(client, bob):
    client.force_login(bob)
    html = client.get("/").content.decode()
    assert "/static/django_htmx/htmx-2.min.js" in html
    assert "https://" not in html.split("<body")[0]  # no CDN in the head


@pytest.mark.browser
def test_login_through_the_real_login_page(portal_server, page, bob):
    page.goto(portal_server.url + "/")
    assert "/login/" in page.url
    page.fill("#id_username", "bob")
    page.fill("#id_password", "wrong password")
    page.click("button[type=submit]")
    assert page.locator(".error").is_visible()
    screenshot(page, "login-error")
    login(page, portal_server.url, "bob", PASSWORD)
    assert page.locator(".topbar .who").inner_text().startswith("bob")
    screenshot(page, "home")
