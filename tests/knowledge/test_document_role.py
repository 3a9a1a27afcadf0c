"""A document's role through the interfaces people use: read when a version is ingested, shown
on the document page, set there by staff (not by readers), set on a source in the admin."""

from __future__ import annotations

import pytest

from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import register_file
from knowledge.models import Document, Source
from knowledge.roles import Role
from portal.models import AuditEvent

pytestmark = pytest.mark.django_db

REQUIREMENTS = (
    "# Требования к сервису бронирования\n\n## Бронирование\n\n"
    "- Пользователь бронирует переговорную на интервал от 15 минут до 4 часов.\n"
)
HANDBOOK = b"# Release handbook\n\nThe release branch freezes two days before the release.\n"


@pytest.fixture
def documents() -> dict[str, Document]:
    specs = Source.objects.create(name="Specs", kind=Source.Kind.SPECS)
    wiki = Source.objects.create(name="Team wiki", kind=Source.Kind.WIKI)
    found = {}
    for source, name, data in (
        (specs, "booking.md", REQUIREMENTS.encode()),
        (specs, "handbook.md", HANDBOOK),
        (wiki, "booking-tests.md", REQUIREMENTS.encode()),
    ):
        registration = register_file(source, name, data, enqueue=False)
        ingest_version(registration.version.pk)
        found[name] = Document.objects.select_related("source").get(pk=registration.document.pk)
    return found


def test_the_role_is_read_when_a_version_is_ingested(documents):
    assert documents["booking.md"].effective_role == Role.REQUIREMENTS  # its title says so
    assert documents["handbook.md"].effective_role == Role.OTHER
    # The same words on a wiki page: the page teaches, it does not specify the product.
    assert documents["booking-tests.md"].effective_role == Role.KNOWLEDGE
    assert list(Document.objects.of_role(Role.REQUIREMENTS)) == [documents["booking.md"]]


def test_staff_set_a_documents_role_on_its_page_and_readers_cannot(client, alice, bob, documents):
    handbook = documents["handbook.md"]
    client.force_login(bob)
    page = client.get(f"/documents/{handbook.pk}/").content.decode()
    assert 'name="role"' not in page  # readers see the role, not the control
    assert client.post(f"/documents/{handbook.pk}/role/", {"role": "tests"}).status_code == 403
    client.force_login(alice)
    page = client.get(f"/documents/{handbook.pk}/").content.decode()
    assert 'name="role"' in page and 'class="doc-role"' in page
    response = client.post(f"/documents/{handbook.pk}/role/", {"role": Role.CHECKLIST})
    assert response.status_code == 302
    handbook.refresh_from_db()
    assert handbook.role == Role.CHECKLIST and handbook.effective_role == Role.CHECKLIST
    assert AuditEvent.objects.filter(action="document-role").exists()
    assert list(Document.objects.of_role(Role.CHECKLIST)) == [handbook]
    # "" gives the document back to what its source or its content says.
    client.post(f"/documents/{handbook.pk}/role/", {"role": ""})
    handbook.refresh_from_db()
    assert handbook.effective_role == Role.OTHER and handbook.role_origin == "detected"
    client.post(f"/documents/{handbook.pk}/role/", {"role": "not-a-role"})
    handbook.refresh_from_db()
    assert handbook.role == ""


def test_a_sources_role_set_in_the_admin_holds_for_its_documents(client, alice, documents):
    specs = documents["handbook.md"].source
    client.force_login(alice)
    form = client.get(f"/admin/knowledge/source/{specs.pk}/change/").content.decode()
    assert 'name="role"' in form
    Source.objects.filter(pk=specs.pk).update(role=Role.TESTS)
    handbook = Document.objects.select_related("source").get(pk=documents["handbook.md"].pk)
    assert handbook.effective_role == Role.TESTS and handbook.role_origin == "source"
    assert set(Document.objects.of_role(Role.TESTS)) == {handbook, documents["booking.md"]}
    page = client.get(f"/documents/{handbook.pk}/").content.decode()
    assert str(Role.TESTS.label) in page or "Программа и методика" in page
