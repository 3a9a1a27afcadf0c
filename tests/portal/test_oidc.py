"""Company sign-in with OpenID Connect against a real provider (tests/oidc_provider.py)."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx2
import pytest
from django.contrib.auth import get_user_model

from portal.models import AuditEvent, ExternalIdentity
from tests.conftest import PortalServer, login, screenshot
from tests.oidc_provider import OidcTestProvider

IVAN = {
    "sub": "0f3c-ivan",
    "preferred_username": "ivan",
    "email": "ivan@example.com",
    "given_name": "Иван",
    "family_name": "Петров",
    "groups": ["/qa"],
}


@pytest.fixture
def provider() -> Iterator[OidcTestProvider]:
    with OidcTestProvider() as running:
        yield running


@pytest.fixture
def oidc(provider, settings) -> OidcTestProvider:
    """The portal configured for the provider, as KB_OIDC_* would configure it."""
    env = provider.settings()
    settings.OIDC_ENABLED = True
    settings.OIDC_RP_CLIENT_ID = env["KB_OIDC_CLIENT_ID"]
    settings.OIDC_RP_CLIENT_SECRET = env["KB_OIDC_CLIENT_SECRET"]
    settings.OIDC_OP_AUTHORIZATION_ENDPOINT = env["KB_OIDC_AUTHORIZATION_URL"]
    settings.OIDC_OP_TOKEN_ENDPOINT = env["KB_OIDC_TOKEN_URL"]
    settings.OIDC_OP_USER_ENDPOINT = env["KB_OIDC_USERINFO_URL"]
    settings.OIDC_OP_JWKS_ENDPOINT = env["KB_OIDC_JWKS_URL"]
    settings.OIDC_ISSUER = env["KB_OIDC_ISSUER"]
    settings.OIDC_STAFF_GROUPS = ["kb-admins"]
    settings.AUTHENTICATION_BACKENDS = [
        "django.contrib.auth.backends.ModelBackend",
        "portal.oidc.PortalOIDCBackend",
    ]
    return provider


def sign_in(client, provider: OidcTestProvider, claims: dict):
    """The browser's round trip: portal -> provider -> portal callback."""
    provider.sign_in_as(claims)
    start = client.get("/oidc/authenticate/")
    assert start.status_code == 302 and start["Location"].startswith(provider.issuer)
    back = httpx2.get(start["Location"], follow_redirects=False).headers["Location"]
    parts = urlsplit(back)
    return client.get(f"{parts.path}?{parts.query}")


def test_a_first_sign_in_creates_the_user_with_the_providers_name_and_groups(client, db, oidc):
    done = sign_in(client, oidc, IVAN)
    assert done.status_code == 302 and done["Location"] == "/"
    user = get_user_model().objects.get(username="ivan")
    assert (user.email, user.first_name, user.last_name) == ("ivan@example.com", "Иван", "Петров")
    assert [g.name for g in user.groups.all()] == ["qa"]
    assert not user.is_staff and not user.is_superuser and not user.has_usable_password()
    assert ExternalIdentity.objects.get(user=user).subject == "0f3c-ivan"
    assert client.get("/").status_code == 200  # signed in
    assert AuditEvent.objects.filter(action="sign-in", actor=user).exists()
    assert oidc.requests == ["authorize", "token", "userinfo"]


def test_each_sign_in_takes_the_providers_groups_and_staff_group(client, db, oidc):
    sign_in(client, oidc, IVAN)
    client.logout()
    sign_in(client, oidc, {**IVAN, "groups": ["kb-admins", "support"]})
    user = get_user_model().objects.get(username="ivan")
    assert sorted(g.name for g in user.groups.all()) == ["kb-admins", "support"]
    assert user.is_staff
    assert get_user_model().objects.count() == 1  # the same account, matched by its subject


def test_a_provider_account_named_like_a_local_admin_does_not_become_that_admin(
    client, db, oidc, alice
):
    sign_in(client, oidc, {**IVAN, "sub": "outsider", "preferred_username": "alice"})
    newcomer = get_user_model().objects.get(external_identities__subject="outsider")
    assert newcomer.username == "alice2" and newcomer.pk != alice.pk
    assert not newcomer.is_superuser


def test_a_wrong_client_secret_signs_nobody_in(client, db, oidc, settings):
    settings.OIDC_RP_CLIENT_SECRET = "not-the-secret"
    done = sign_in(client, oidc, IVAN)
    assert done.status_code == 302 and done["Location"] == "/login/?sso=failed"
    assert not get_user_model().objects.filter(username="ivan").exists()
    assert "did not succeed" in client.get("/login/?sso=failed").content.decode()


def test_without_configuration_the_sign_in_urls_are_not_there(client, db):
    assert client.get("/oidc/authenticate/").status_code == 404
    assert "oidc-login" not in client.get("/login/").content.decode()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_signing_in_with_the_company_account_in_a_browser(provider, page, alice):
    provider.sign_in_as({**IVAN, "groups": ["kb-admins"]})
    server = PortalServer(**provider.settings(), KB_OIDC_STAFF_GROUPS="kb-admins")
    try:
        page.goto(server.url + "/login/")
        button = page.locator("#oidc-login")
        assert "company account" in button.inner_text()
        screenshot(page, "login-with-company-account")
        button.click()
        page.wait_for_url(lambda url: "/login/" not in url and url.startswith(server.url))
        assert "ivan · staff" in page.locator("header").inner_text()
        screenshot(page, "signed-in-with-company-account")
        # Local accounts keep working beside it.
        page.context.clear_cookies()
        login(page, server.url, "alice")
        assert "alice" in page.locator("header").inner_text()
    finally:
        server.stop()
