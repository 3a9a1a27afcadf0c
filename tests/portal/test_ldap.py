"""Company sign-in against a real OpenLDAP directory (tests/ldap_server.py) through the login page."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from knowledge.models import Source
from portal.ldap_auth import LDAPBackend, find_user, identifier
from portal.models import AuditEvent, ExternalIdentity
from portal.throttle import _redis
from tests import ldap_server
from tests.conftest import PASSWORD, ROOT, PortalServer, login, screenshot
from tests.ldap_server import PEOPLE, LdapTestServer

IVAN_PASSWORD = "ivan-directory-pw"
PETR_PASSWORD = "petr-directory-pw"
LOGIN_FAILED = "Wrong user name or password."
directory = ldap_server.directory  # the fixture: a running slapd of its own per test


@pytest.fixture(autouse=True)
def _clean_lockout_counters():
    # Failed sign-ins here must not lock the test client's address for the tests that follow.
    client = _redis()
    for key in client.scan_iter("kb:signin:*"):
        client.delete(key)
    yield
    for key in client.scan_iter("kb:signin:*"):
        client.delete(key)


def configure(settings, env: dict[str, str]) -> None:
    """The portal configured as these KB_LDAP_* variables would configure it."""
    settings.LDAP_ENABLED = True
    settings.LDAP_URL = env["KB_LDAP_URL"]
    settings.LDAP_START_TLS = env.get("KB_LDAP_START_TLS") == "1"
    settings.LDAP_CA_FILE = env.get("KB_LDAP_CA_FILE", "")
    settings.LDAP_TIMEOUT = int(env.get("KB_LDAP_TIMEOUT", "5"))
    settings.LDAP_BIND_DN = env.get("KB_LDAP_BIND_DN", "")
    settings.LDAP_BIND_PASSWORD = env.get("KB_LDAP_BIND_PASSWORD", "")
    settings.LDAP_USER_BASE = env["KB_LDAP_USER_BASE"]
    settings.LDAP_USER_FILTER = env.get("KB_LDAP_USER_FILTER", "(uid=%(user)s)")
    settings.LDAP_GROUP_BASE = env.get("KB_LDAP_GROUP_BASE", "")
    settings.LDAP_STAFF_GROUPS = [g for g in env.get("KB_LDAP_STAFF_GROUPS", "").split(",") if g]
    settings.LDAP_ISSUER = ""
    settings.AUTHENTICATION_BACKENDS = [
        "django.contrib.auth.backends.ModelBackend",
        "portal.ldap_auth.LDAPBackend",
    ]


@pytest.fixture
def ldap(directory, settings) -> LdapTestServer:
    """ivan in qa; petr in qa and kb-admins (the staff group)."""
    directory.add_user("ivan", IVAN_PASSWORD, given="Иван", sn="Петров")
    directory.add_user("petr", PETR_PASSWORD, given="Пётр", sn="Сидоров")
    directory.add_group("qa", ["ivan", "petr"])
    directory.add_group("kb-admins", ["petr"])
    configure(settings, directory.settings(KB_LDAP_STAFF_GROUPS="kb-admins"))
    return directory


def sign_in(client, username: str, password: str):
    return client.post("/login/", {"username": username, "password": password})


def signed_in_user(client):
    pk = client.session.get("_auth_user_id")
    return get_user_model().objects.get(pk=pk) if pk else None


def groups(user) -> list[str]:
    return sorted(user.groups.values_list("name", flat=True))


def test_a_directory_user_signs_in_on_the_login_page_with_the_directorys_name_and_groups(
    client, db, ldap
):
    done = sign_in(client, "ivan", IVAN_PASSWORD)
    assert done.status_code == 302 and done["Location"] == "/"
    user = signed_in_user(client)
    assert user.username == "ivan"
    assert (user.email, user.first_name, user.last_name) == ("ivan@example.com", "Иван", "Петров")
    assert groups(user) == ["qa"]
    assert not user.is_staff and not user.is_superuser and not user.has_usable_password()
    identity = ExternalIdentity.objects.get(user=user)
    assert (identity.issuer, identity.subject) == ("ldap://127.0.0.1", ldap.entry_uuid("ivan"))
    assert client.get("/").status_code == 200
    assert AuditEvent.objects.filter(action="sign-in", actor=user).exists()


def test_each_sign_in_follows_the_directorys_groups_and_staff_group(client, db, ldap):
    qa_space = Source.objects.create(name="QA space", is_public=False, restricted=True)
    qa_space.reader_groups.add(Group.objects.create(name="qa"))
    sign_in(client, "ivan", IVAN_PASSWORD)
    assert list(Source.objects.visible_to(signed_in_user(client))) == [qa_space]
    client.logout()
    ldap.set_members("kb-admins", ["petr", "ivan"])
    ldap.set_members("qa", ["petr"])
    sign_in(client, "ivan", IVAN_PASSWORD)
    user = signed_in_user(client)
    assert groups(user) == ["kb-admins"] and user.is_staff and not user.is_superuser
    assert not Source.objects.visible_to(user).exists()  # restricted: staff is not enough
    client.logout()
    ldap.set_members("kb-admins", ["petr"])
    sign_in(client, "ivan", IVAN_PASSWORD)
    user = signed_in_user(client)
    assert groups(user) == [] and not user.is_staff
    assert get_user_model().objects.count() == 1  # the same account, matched by its entryUUID


def test_a_wrong_password_signs_nobody_in(client, db, ldap):
    refused = sign_in(client, "ivan", "not-" + IVAN_PASSWORD)
    assert refused.status_code == 200 and LOGIN_FAILED in refused.content.decode()
    assert signed_in_user(client) is None
    assert not get_user_model().objects.exists()


def test_wrong_directory_passwords_cool_off_that_address_not_the_directory_account(
    client, db, ldap, settings
):
    settings.LOGIN_FAILURES = 3
    for i in range(3):
        client.post(
            "/login/", {"username": "ivan", "password": f"guess-{i}"}, REMOTE_ADDR="203.0.113.5"
        )
    refused = client.post(
        "/login/", {"username": "ivan", "password": IVAN_PASSWORD}, REMOTE_ADDR="203.0.113.5"
    )
    assert "Too many failed sign-ins from here" in refused.content.decode()
    assert signed_in_user(client) is None
    # Three binds were tried against the directory, not four: the fourth was never checked.
    assert AuditEvent.objects.filter(action="sign-in-failed").count() == 3
    client.post("/login/", {"username": "ivan", "password": IVAN_PASSWORD}, REMOTE_ADDR="10.0.0.2")
    assert signed_in_user(client).username == "ivan"


def test_an_empty_password_is_refused_though_the_directory_takes_it_as_anonymous(client, db, ldap):
    # The directory answers success to a DN with an empty password (an "unauthenticated bind")...
    whoami = subprocess.run(
        ["ldapwhoami", "-x", "-H", ldap.url, "-D", f"uid=ivan,{PEOPLE}", "-w", ""],
        capture_output=True,
        text=True,
    )
    assert whoami.returncode == 0 and whoami.stdout.strip() == "anonymous"
    # ...so the portal refuses it before asking: the form, the backend and the lookup alike.
    assert sign_in(client, "ivan", "").status_code == 200 and signed_in_user(client) is None
    assert LDAPBackend().authenticate(None, username="ivan", password="") is None
    assert find_user("ivan", "") is None
    assert not get_user_model().objects.exists()
    assert not AuditEvent.objects.filter(target="ldap").exists()  # never reached the directory


@pytest.mark.parametrize("name", ["*)(uid=*", "iv*", "*)(uid=ivan"])
def test_an_ldap_injection_in_the_user_name_matches_nobody(client, db, ldap, settings, name):
    # An unescaped name would turn these filters into ones matching ivan alone.
    settings.LDAP_USER_FILTER = "(&(objectClass=inetOrgPerson)(uid=%(user)s))"
    refused = sign_in(client, name, IVAN_PASSWORD)
    assert refused.status_code == 200 and LOGIN_FAILED in refused.content.decode()
    assert signed_in_user(client) is None
    assert not get_user_model().objects.exists()


def test_a_local_account_named_like_a_directory_user_is_not_taken_over(
    client, db, ldap, alice, django_user_model
):
    local_ivan = django_user_model.objects.create_user("ivan", "local@example.com", PASSWORD)
    ldap.add_user("alice", "alice-directory-pw")
    ldap.set_members("kb-admins", ["petr", "alice"])
    sign_in(client, "ivan", IVAN_PASSWORD)
    newcomer = signed_in_user(client)
    assert newcomer.pk != local_ivan.pk and newcomer.username == "ivan2"
    client.logout()
    sign_in(client, "alice", "alice-directory-pw")
    other = signed_in_user(client)
    assert other.pk != alice.pk and other.username == "alice2"
    assert other.is_staff and not other.is_superuser  # staff from the directory, never more
    local_ivan.refresh_from_db()
    assert local_ivan.email == "local@example.com" and local_ivan.has_usable_password()
    assert groups(local_ivan) == []
    client.logout()
    sign_in(client, "ivan", PASSWORD)  # the local account keeps its own password
    assert signed_in_user(client).pk == local_ivan.pk


def test_a_deactivated_account_is_not_opened_by_the_directory(client, db, ldap):
    sign_in(client, "ivan", IVAN_PASSWORD)
    user = signed_in_user(client)
    client.logout()
    user.is_active = False
    user.save()
    assert sign_in(client, "ivan", IVAN_PASSWORD).status_code == 200
    assert signed_in_user(client) is None


def test_groups_from_memberof_with_an_anonymous_search(client, db, ldap, settings):
    settings.LDAP_BIND_DN = settings.LDAP_BIND_PASSWORD = ""
    settings.LDAP_GROUP_BASE = ""  # the memberOf attribute, as Active Directory has it
    sign_in(client, "petr", PETR_PASSWORD)
    user = signed_in_user(client)
    assert groups(user) == ["kb-admins", "qa"] and user.is_staff


@pytest.mark.parametrize("start_tls", [False, True], ids=["ldaps", "starttls"])
def test_tls_with_the_directorys_authority_signs_in(client, db, ldap, settings, start_tls):
    settings.LDAP_URL = (
        f"ldap://localhost:{ldap.port}" if start_tls else f"ldaps://localhost:{ldap.tls_port}"
    )
    settings.LDAP_START_TLS = start_tls
    settings.LDAP_CA_FILE = ldap.ca_file
    assert sign_in(client, "ivan", IVAN_PASSWORD).status_code == 302
    assert signed_in_user(client).username == "ivan"
    assert ExternalIdentity.objects.get().issuer == "ldap://localhost"


def test_a_certificate_from_an_unknown_authority_fails_the_sign_in_plainly(
    client, db, ldap, settings
):
    settings.LDAP_URL = f"ldap://localhost:{ldap.port}"
    settings.LDAP_START_TLS = True  # the system's authorities do not know the test one
    refused = sign_in(client, "ivan", IVAN_PASSWORD)
    assert refused.status_code == 200 and LOGIN_FAILED in refused.content.decode()
    event = AuditEvent.objects.get(action="sign-in-failed", target="ldap")
    assert "CERTIFICATE_VERIFY_FAILED" in event.detail["reason"]


def test_a_refused_service_account_fails_the_sign_in_plainly(client, db, ldap, settings):
    settings.LDAP_BIND_PASSWORD = "not-the-service-password"
    refused = sign_in(client, "ivan", IVAN_PASSWORD)
    assert refused.status_code == 200 and LOGIN_FAILED in refused.content.decode()
    event = AuditEvent.objects.get(action="sign-in-failed", target="ldap")
    assert "service account" in event.detail["reason"] and event.actor_name == "ivan"


def test_a_stopped_directory_fails_the_sign_in_plainly_and_local_accounts_still_work(
    client, db, ldap, bob, caplog
):
    ldap.stop()
    refused = sign_in(client, "ivan", IVAN_PASSWORD)
    assert refused.status_code == 200 and LOGIN_FAILED in refused.content.decode()
    assert "LDAP sign-in of 'ivan' failed" in caplog.text
    event = AuditEvent.objects.get(action="sign-in-failed", target="ldap")
    assert event.actor_name == "ivan" and event.detail["reason"]
    assert sign_in(client, "bob", PASSWORD).status_code == 302


def test_a_directory_that_never_answers_times_out_plainly(client, db, ldap, settings):
    with socket.socket() as silent:  # accepts connections (the kernel's backlog), says nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        settings.LDAP_URL = f"ldap://127.0.0.1:{silent.getsockname()[1]}"
        settings.LDAP_TIMEOUT = 1
        refused = sign_in(client, "ivan", IVAN_PASSWORD)
    assert refused.status_code == 200 and LOGIN_FAILED in refused.content.decode()
    event = AuditEvent.objects.get(action="sign-in-failed", target="ldap")
    assert "timed out" in event.detail["reason"]


def test_active_directorys_object_guid_reads_as_its_uuid():
    guid = uuid.UUID("5a6c1f0e-9b8d-4c1a-b2e3-0123456789ab")
    assert identifier("objectGUID", guid.bytes_le) == str(guid)
    assert identifier("entryUUID", b"0a1b2c3d-0000-1000-8000-00aa00bb00cc") == (
        "0a1b2c3d-0000-1000-8000-00aa00bb00cc"
    )


def _settings_in_a_process(tmp_path, **env: str) -> subprocess.CompletedProcess:
    code = "from portal import settings; print(settings.AUTHENTICATION_BACKENDS)"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "KB_DATA_DIR": str(tmp_path), **env},
        capture_output=True,
        text=True,
    )


def test_the_backend_is_on_only_with_kb_ldap_url_and_a_user_base(tmp_path):
    off = _settings_in_a_process(tmp_path)
    assert off.returncode == 0 and "LDAPBackend" not in off.stdout
    url = {"KB_LDAP_URL": "ldaps://dc1.corp.example"}
    on = _settings_in_a_process(tmp_path, **url, KB_LDAP_USER_BASE="ou=people,dc=corp")
    assert on.returncode == 0 and "portal.ldap_auth.LDAPBackend" in on.stdout
    missing = _settings_in_a_process(tmp_path, **url)
    assert missing.returncode != 0 and "KB_LDAP_USER_BASE" in missing.stderr
    wrong = _settings_in_a_process(tmp_path, KB_LDAP_URL="http://dc1", KB_LDAP_USER_BASE="dc=x")
    assert wrong.returncode != 0 and "KB_LDAP_URL" in wrong.stderr


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_signing_in_with_a_directory_account_in_a_browser(directory, page, alice):
    directory.add_user("ivan", IVAN_PASSWORD, given="Иван", sn="Петров")
    directory.add_group("kb-admins", ["ivan"])
    server = PortalServer(**directory.settings(KB_LDAP_STAFF_GROUPS="kb-admins"))
    try:
        page.goto(server.url + "/login/")
        page.fill("#id_username", "ivan")
        page.fill("#id_password", "not-" + IVAN_PASSWORD)
        page.click("button[type=submit]")
        assert LOGIN_FAILED in page.locator("[role=alert]").inner_text()
        screenshot(page, "login-directory-wrong-password")
        login(page, server.url, "ivan", IVAN_PASSWORD)
        assert "ivan · staff" in page.locator("header").inner_text()
        screenshot(page, "signed-in-with-directory-account")
        # Local accounts keep working beside it.
        page.context.clear_cookies()
        login(page, server.url, "alice")
        assert "alice" in page.locator("header").inner_text()
    finally:
        server.stop()
