"""Version pages on the real ПМИ and ТЗ histories: history, comparison, versions index,
permissions, and the staff actions (edit, move, remove)."""

from __future__ import annotations

import re

import pytest
from django.core.files.storage import default_storage
from django.test import Client

from knowledge import termstats
from knowledge.ingest.registration import get_or_create_source, register_file
from knowledge.models import (
    Chunk,
    CorpusStat,
    Document,
    DocumentVersion,
    Source,
    TermStat,
    VersionChange,
    VersionEvent,
)
from knowledge.versions import services

pytestmark = pytest.mark.django_db


def _url(name: str, *args) -> str:
    from django.urls import reverse

    return reverse(name, args=args)


def _compare(client, hse, old: str, new: str, view: str = "", **headers):
    a, b = hse.version(old), hse.version(new)
    query = {"a": a.pk, "b": b.pk, **({"view": view} if view else {})}
    return client.get(_url("compare_versions", a.document_id), query, **headers)


def test_history_lists_every_version_with_who_added_it_and_its_changes(client, bob, hse):
    client.force_login(bob)
    response = client.get(_url("document_versions", hse.pmi_id))
    html = response.content.decode()
    assert response.status_code == 200
    assert len(re.findall(r'<tr id="v-\d+"', html)) == 8
    renamed = hse.version("ПМИ_2019-05-04_aa30d6d.docx")
    first = hse.version("ПМИ_2019-05-03_cc60019.docx")
    row = html.split(f'id="v-{renamed.pk}"')[1].split("</tr>")[0]
    assert "2019-05-04 aa30d6d" in row and "2019-05-04" in row and "cli" in row and "ready" in row
    summary = services.compare(first, renamed).summary
    assert summary.as_text().startswith("2 sections changed; +")
    assert summary.as_text() in row and "Preamble; 1.1 Наименование" in row
    assert f"?a={first.pk}&amp;b={renamed.pk}" in row
    assert "first version" in html.split(f'id="v-{first.pk}"')[1].split("</tr>")[0]
    # Summaries are computed once and kept.
    assert VersionChange.objects.filter(new__document_id=hse.pmi_id).count() == 7
    assert "Remove</a>" not in html  # staff buttons are for staff


def test_history_says_no_text_changes_for_the_formatting_only_tz_version(client, bob, hse):
    client.force_login(bob)
    html = client.get(_url("document_versions", hse.tz_id)).content.decode()
    version = hse.version("TZ_2019-05-15_ec34822.docx")
    row = html.split(f'id="v-{version.pk}"')[1].split("</tr>")[0]
    assert "No text changes" in row


def test_comparison_side_by_side_shows_the_renaming_with_deep_links(client, bob, hse):
    client.force_login(bob)
    response = _compare(client, hse, "ПМИ_2019-05-03_cc60019.docx", "ПМИ_2019-05-04_aa30d6d.docx")
    html = response.content.decode()
    assert response.status_code == 200
    assert "HX-Request" in response["Vary"]
    assert 'id="sec-1-1"' in html and 'href="#sec-1-1"' in html
    assert 'class="diff-row sbs st-changed"' in html
    assert "<ins>Приложение активности и уведомления ВШЭ</ins>" in html
    assert re.search(r'<tr id="row-(\d+)" class="row-changed">', html)
    assert 'href="#row-' in html
    assert "2 sections changed" in html


def test_htmx_switch_to_inline_returns_only_the_diff_fragment(client, bob, hse):
    client.force_login(bob)
    response = _compare(
        client,
        hse,
        "ПМИ_2019-05-07_8ef4ea7.docx",
        "ПМИ_2019-05-14_3cba122.docx",
        view="inline",
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert response.status_code == 200 and "HX-Request" in response["Vary"]
    assert html.lstrip().startswith('<div id="diff" class="diff mode-inline">')
    assert "<html" not in html and 'class="diff-row inline st-changed"' in html
    assert 'id="sec-1-2"' in html and 'id="sec-old-6-3-1"' in html
    assert "вспомогательный инструмент для организации мероприятий" in html


def test_comparison_of_formatting_only_versions_says_no_text_changes(client, bob, hse):
    client.force_login(bob)
    html = _compare(
        client, hse, "TZ_2019-05-15_8bb41a2.docx", "TZ_2019-05-15_ec34822.docx"
    ).content.decode()
    assert "<h2>No text changes</h2>" in html
    assert 'class="diff-section st-changed"' not in html


def test_comparison_puts_the_older_version_first_and_defaults_to_the_last_two(client, bob, hse):
    client.force_login(bob)
    forward = _compare(client, hse, "ПМИ_2019-05-03_cc60019.docx", "ПМИ_2019-05-04_aa30d6d.docx")
    backward = _compare(client, hse, "ПМИ_2019-05-04_aa30d6d.docx", "ПМИ_2019-05-03_cc60019.docx")
    assert (
        forward.context["old"]
        == backward.context["old"]
        == hse.version("ПМИ_2019-05-03_cc60019.docx")
    )
    default = client.get(_url("compare_versions", hse.pmi_id))
    assert default.context["new"] == hse.version("ПМИ_2019-05-20_8661a18.docx")
    assert default.context["old"] == hse.version("ПМИ_2019-05-15_13d5bd9.docx")


def test_versions_page_lists_documents_with_versions_and_links_the_last_two(client, bob, hse):
    client.force_login(bob)
    html = client.get(_url("versions")).content.decode()
    assert 'href="/versions/" aria-current="page"' in html  # the navigation names the page
    newest = hse.version("ПМИ_2019-05-20_8661a18.docx")
    previous = hse.version("ПМИ_2019-05-15_13d5bd9.docx")
    assert f"/documents/{hse.pmi_id}/versions/" in html
    assert f"/documents/{hse.pmi_id}/compare/?a={previous.pk}&amp;b={newest.pk}" in html
    assert f"/documents/{hse.tz_id}/versions/" in html


def test_readers_outside_a_private_source_see_nothing(client, bob, eve, hse):
    source = Source.objects.get(pk=hse.source_id)
    Source.objects.filter(pk=source.pk).update(is_public=False)
    source.readers.add(bob)
    client.force_login(eve)
    assert client.get(_url("document_versions", hse.pmi_id)).status_code == 404
    assert (
        _compare(
            client, hse, "ПМИ_2019-05-03_cc60019.docx", "ПМИ_2019-05-04_aa30d6d.docx"
        ).status_code
        == 404
    )
    assert f"/documents/{hse.pmi_id}/" not in client.get(_url("versions")).content.decode()
    client.force_login(bob)
    assert client.get(_url("document_versions", hse.pmi_id)).status_code == 200


def test_a_version_of_another_document_cannot_be_compared(client, bob, hse):
    client.force_login(bob)
    pmi = hse.version("ПМИ_2019-05-03_cc60019.docx")
    tz = hse.version("TZ_2019-05-04_e735602.docx")
    response = client.get(_url("compare_versions", hse.pmi_id), {"a": pmi.pk, "b": tz.pk})
    assert response.status_code == 404


def test_reader_cannot_edit_move_or_remove_versions(client, bob, hse):
    client.force_login(bob)
    version = hse.version("ПМИ_2019-05-14_30e82c5.docx")
    pk = hse.pmi_id
    assert client.get(_url("edit_version", pk, version.pk)).status_code == 403
    assert client.post(_url("edit_version", pk, version.pk), {"label": "x"}).status_code == 403
    assert (
        client.post(_url("move_version", pk, version.pk), {"direction": "older"}).status_code == 403
    )
    assert client.get(_url("remove_version", pk, version.pk)).status_code == 403
    assert (
        client.post(_url("remove_version", pk, version.pk), {"confirm": "yes"}).status_code == 403
    )
    version.refresh_from_db()
    assert version.label == "2019-05-14 30e82c5" and version.number == 6
    assert not VersionEvent.objects.exists()


def test_staff_edits_a_label_and_date_and_it_is_logged(client, alice, hse):
    client.force_login(alice)
    version = hse.version("ПМИ_2019-05-14_30e82c5.docx")
    url = _url("edit_version", hse.pmi_id, version.pk)
    assert (
        "The date must look like"
        in client.post(url, {"label": "x", "label_date": "14 May"}).content.decode()
    )
    response = client.post(url, {"label": "  v2.3  final ", "label_date": "2019-05-16"})
    assert response.status_code == 302
    version.refresh_from_db()
    assert (version.label, str(version.label_date), version.number) == (
        "v2.3 final",
        "2019-05-16",
        6,
    )
    event = VersionEvent.objects.get()
    assert event.action == "relabel" and event.user == alice
    assert event.detail["before"] == {"label": "2019-05-14 30e82c5", "label_date": "2019-05-14"}


def _order(document_id: int) -> list[str]:
    return list(
        DocumentVersion.objects.filter(document_id=document_id)
        .order_by("number")
        .values_list("filename", flat=True)
    )


def test_staff_moves_a_version_and_the_newest_ready_one_becomes_searchable(client, alice, hse):
    client.force_login(alice)
    before = _order(hse.pmi_id)
    latest = hse.version("ПМИ_2019-05-20_8661a18.docx")
    response = client.post(_url("move_version", hse.pmi_id, latest.pk), {"direction": "older"})
    assert response.status_code == 302
    after = _order(hse.pmi_id)
    assert after == [*before[:6], before[7], before[6]]
    numbers = list(
        DocumentVersion.objects.filter(document_id=hse.pmi_id).values_list("number", flat=True)
    )
    assert sorted(numbers) == list(range(1, 9))
    now_newest = hse.version("ПМИ_2019-05-15_13d5bd9.docx")
    assert Document.objects.get(pk=hse.pmi_id).current_version == now_newest
    searchable = set(
        Chunk.objects.filter(document_id=hse.pmi_id, searchable=True).values_list(
            "version_id", flat=True
        )
    )
    assert searchable == {now_newest.pk}
    client.post(_url("move_version", hse.pmi_id, latest.pk), {"position": "8"})
    assert _order(hse.pmi_id) == before
    assert [e.detail["to"] for e in VersionEvent.objects.order_by("pk")] == [7, 8]


def _token(html: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)[1]


def test_removal_asks_for_confirmation_needs_csrf_and_is_logged(
    alice, hse, django_capture_on_commit_callbacks
):
    termstats.rebuild()  # a consistent baseline, whatever earlier modules left behind
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    latest = hse.version("ПМИ_2019-05-20_8661a18.docx")
    url = _url("remove_version", hse.pmi_id, latest.pk)
    page = client.get(url)
    assert page.status_code == 200 and 'name="confirm"' in page.content.decode()
    assert client.post(url, {"confirm": "yes"}).status_code == 403  # no CSRF token
    token = _token(page.content.decode())
    unconfirmed = client.post(url, {"csrfmiddlewaretoken": token})
    assert unconfirmed.status_code == 400 and DocumentVersion.objects.filter(pk=latest.pk).exists()
    with django_capture_on_commit_callbacks() as callbacks:
        done = client.post(url, {"csrfmiddlewaretoken": token, "confirm": "yes"})
    assert done.status_code == 302
    assert not DocumentVersion.objects.filter(pk=latest.pk).exists()
    assert len(callbacks) == 1  # the file's deletion waits for the commit
    event = VersionEvent.objects.get()
    assert (event.action, event.user, event.detail["filename"], event.detail["file_kept"]) == (
        "remove",
        alice,
        "ПМИ_2019-05-20_8661a18.docx",
        False,
    )
    newest = hse.version("ПМИ_2019-05-15_13d5bd9.docx")
    assert Document.objects.get(pk=hse.pmi_id).current_version == newest
    searchable = Chunk.objects.filter(searchable=True)
    assert set(searchable.filter(document_id=hse.pmi_id).values_list("version_id", flat=True)) == {
        newest.pk
    }
    # The BM25 statistics lost the removed chunks and gained the newly searchable ones.
    counted = searchable.exclude(block_type="row")  # row units are not counted
    assert sum(CorpusStat.objects.values_list("chunks", flat=True)) == counted.count()
    fields = ("source_id", "lexeme", "df")
    stats = set(TermStat.objects.filter(df__gt=0).values_list(*fields))
    termstats.rebuild()
    assert stats == set(TermStat.objects.filter(df__gt=0).values_list(*fields))


def test_removing_keeps_a_file_another_version_shares_and_deletes_an_unshared_one(
    alice, django_capture_on_commit_callbacks
):
    from knowledge.versions.actions import VersionActionError, remove_version

    source = get_or_create_source("Removal")
    first = register_file(source, "notes.txt", b"first text", enqueue=False).version
    second = register_file(source, "notes.txt", b"second text", enqueue=False).version
    twin = register_file(source, "copy.txt", b"second text", enqueue=False).version
    assert twin.file.name == second.file.name  # stored once per sha256
    with django_capture_on_commit_callbacks(execute=True):
        kept = remove_version(second, user=alice)
    assert kept.file_kept and default_storage.exists(twin.file.name)
    with pytest.raises(VersionActionError, match="only version"):
        remove_version(first, user=alice)
    third = register_file(source, "notes.txt", b"third text", enqueue=False).version
    with django_capture_on_commit_callbacks(execute=True):
        gone = remove_version(third, user=alice)
    assert not gone.file_kept and not default_storage.exists(third.file.name)
    assert default_storage.exists(first.file.name)


def test_history_defers_summaries_past_its_budget_to_htmx_cells(client, bob, hse):
    from knowledge.versions import history

    VersionChange.objects.all().delete()
    pmi = Document.objects.get(pk=hse.pmi_id)
    rows = history.history(pmi, inline=2)
    assert [r.deferred for r in rows] == [False, False, True, True, True, True, True, False]
    assert VersionChange.objects.count() == 2  # the two newest, computed while rendering
    client.force_login(bob)
    renamed = hse.version("ПМИ_2019-05-04_aa30d6d.docx")
    url = _url("version_change", hse.pmi_id, renamed.pk)
    response = client.get(url, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert "2 sections changed" in html and "Compare with #1" in html
    assert VersionChange.objects.filter(new=renamed).exists()
    first = hse.version("ПМИ_2019-05-03_cc60019.docx")
    assert (
        "first version" in client.get(_url("version_change", hse.pmi_id, first.pk)).content.decode()
    )


def test_comparison_with_a_version_not_indexed_says_so(client, bob, hse):
    failed = hse.version("ПМИ_2019-05-20_8661a18.docx")
    DocumentVersion.objects.filter(pk=failed.pk).update(status="failed", parsed=None)
    client.force_login(bob)
    response = _compare(client, hse, "ПМИ_2019-05-15_13d5bd9.docx", "ПМИ_2019-05-20_8661a18.docx")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Version 2019-05-20 8661a18 is not indexed yet" in html
    assert 'id="diff"' not in html


def test_changed_sections_list_shows_a_heading_with_a_quote_escaped_once(client, bob):
    from bs4 import BeautifulSoup

    from knowledge.ingest.pipeline import ingest_version

    source = get_or_create_source("Quotes")
    old, new = (
        register_file(source, "terms.md", text.encode(), enqueue=False).version
        for text in (
            "# Terms\n\n## GitHub's Rights & Yours\n\nWe may remove content.\n",
            "# Terms\n\n## GitHub's Rights & Yours\n\nWe may remove or hide content.\n",
        )
    )
    for version in (old, new):
        assert ingest_version(version.pk).status == "ready"
    client.force_login(bob)
    html = client.get(
        _url("compare_versions", old.document_id), {"a": old.pk, "b": new.pk}
    ).content.decode()
    nav = BeautifulSoup(html, "html.parser").select_one("nav.diff-nav")
    assert [a.get_text() for a in nav.select("a")] == ["1.1 GitHub's Rights & Yours"]
