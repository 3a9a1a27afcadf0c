"""The audit log: an upload, a permission change, a token use and sign-ins appear with who,
when and from where; staff read it with filters and as CSV, others cannot."""

from __future__ import annotations

import io
import re
import unicodedata
from csv import reader

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from knowledge.models import Source
from portal.api_auth import create_token
from portal.audit import purge_old_events
from portal.models import AuditEvent

pytestmark = pytest.mark.django_db


def test_an_upload_a_permission_change_and_a_token_use_are_recorded(client, alice, bob):
    client.force_login(alice)
    page = SimpleUploadedFile("notes.md", b"# Notes\n\nRelease on Friday.\n")
    client.post("/documents/upload/", {"files": [page], "new_source": "Team notes"})
    source = Source.objects.get(name="Team notes")
    form = {
        "name": source.name,
        "kind": source.kind,
        "description": "",
        "base_url": "",
        "root_path": "",
        "priority": 1,
        "history_depth": 1,
        "sync_interval_minutes": 15,
        "readers": [bob.pk],
        "reader_groups": [],
    }  # is_public left out: unticked
    response = client.post(f"/admin/knowledge/source/{source.pk}/change/", form)
    assert response.status_code == 302, response.content[:500]
    _, token = create_token(bob, "agent")
    client.get("/api/v1/search", {"q": "release"}, HTTP_AUTHORIZATION=f"Bearer {token}")

    upload = AuditEvent.objects.get(action="upload")
    assert (upload.actor, upload.target, upload.detail["new"]) == (
        alice,
        "Team notes",
        ["notes.md"],
    )
    assert upload.address == "127.0.0.1" and upload.at is not None
    permissions = AuditEvent.objects.get(action="permissions")
    assert permissions.actor == alice and permissions.target == "Team notes"
    assert permissions.detail["readers"] == ["bob"] and permissions.detail["public"] is False
    used = AuditEvent.objects.get(action="token-use")
    assert used.actor == bob and used.target == "/api/v1/search"
    assert token not in str(used.detail)  # only its first characters


def test_sign_ins_and_failures_are_recorded(client, bob):
    client.post("/login/", {"username": "bob", "password": "wrong"})
    client.post("/login/", {"username": "bob", "password": "correct-horse-battery-staple"})
    actions = list(AuditEvent.objects.order_by("at", "pk").values_list("action", "actor_name"))
    assert actions == [("sign-in-failed", "bob"), ("sign-in", "bob")]


def test_staff_filter_the_log_and_download_it_as_csv_readers_cannot(client, alice, bob):
    AuditEvent.objects.create(actor=alice, actor_name="alice", action="reindex", target="all")
    AuditEvent.objects.create(actor=alice, actor_name="alice", action="export", target="3 ratings")
    client.force_login(bob)
    assert client.get("/audit/").status_code in (302, 403)
    client.force_login(alice)
    page = client.get("/audit/", {"action": "export"}).content.decode()
    assert "3 ratings" in page and ">all<" not in page
    csv = client.get("/audit/", {"format": "csv", "user": "alice"}).content.decode()
    assert next(reader(io.StringIO(csv))) == ["when", "who", "action", "what", "detail", "from"]
    assert "reindex" in csv and "export" in csv


@pytest.mark.parametrize(
    "username", ["x;=1+1;", "=HYPERLINK(1)", "＝1+1", "a,@SUM(1)", "b; -2+3", "﹢cmd"]
)
def test_no_field_of_the_audit_csv_starts_a_formula_in_any_locale(client, alice, username):
    """Excel splits on "," or, in a Russian locale, on ";" (inside quotes too, when it opens a
    .csv): no piece of any line may start with a formula sign, fullwidth ones included."""
    client.post("/login/", {"username": username, "password": "wrong"})
    client.force_login(alice)
    lines = client.get("/audit/", {"format": "csv"}).content.decode().splitlines()
    assert any("1" in line for line in lines[1:])
    for line in lines:
        for piece in re.split(r"[,;]", line):
            text = piece.strip(' "')
            assert not text[:1] or unicodedata.normalize("NFKC", text[0]) not in "=+-@", line


@pytest.mark.parametrize("value", ["＝1+1", "﹦cmd", "x;＋1", "＠SUM(1)", "y,﹣2"])
def test_fullwidth_and_small_formula_signs_are_neutralised_too(value):
    # The sign-in form folds a typed name with NFKC; an uploaded file name or a source name
    # reaches the log as typed.
    from portal.audit_views import cell

    for piece in re.split(r"[,;]", cell(value)):
        assert not piece or unicodedata.normalize("NFKC", piece[0]) not in "=+-@", cell(value)


def test_events_older_than_the_retention_are_purged(settings, alice):
    from datetime import timedelta

    from django.utils import timezone

    settings.AUDIT_RETENTION_DAYS = 30
    old = AuditEvent.objects.create(actor_name="alice", action="export")
    AuditEvent.objects.filter(pk=old.pk).update(at=timezone.now() - timedelta(days=31))
    AuditEvent.objects.create(actor_name="alice", action="reindex")
    assert purge_old_events() == 1
    assert list(AuditEvent.objects.values_list("action", flat=True)) == ["reindex"]
