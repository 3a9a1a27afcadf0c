"""A wiki kept in git, synced by ``manage.py source``: a real repository in a temporary folder,
committed to between syncs; the pages go through the real registration, ingest and search."""

from __future__ import annotations

import pytest
from django.core.management.base import CommandError

from knowledge.models import Document, DocumentVersion, Source
from knowledge.sources.sync import sync_source
from tests.knowledge.sources.conftest import (
    CONFORMANCE,
    EXCEPTIONS,
    PAGES,
    SHIFT_LEFT,
    SOAK,
    ZBP,
    WikiRepo,
    add_source,
    found_paths,
    sync,
)


def test_git_wiki_follows_edits_and_deletions_and_ingests_only_what_changed(
    db, client, alice, wiki
):
    first_commit = wiki.git("rev-parse", "HEAD")
    add_source("Team wiki", str(wiki.path), "--base-url", "https://wiki.example.com/blob/main/")
    first = sync("Team wiki")
    source = Source.objects.get(name="Team wiki")
    assert first["status"] == "ok"
    assert sorted(first["added"]) == sorted(PAGES)
    assert first["new_versions"] == first["ingested"] == first["ready"] == 4
    assert source.connector == "git" and source.kind == "wiki"
    assert source.sync_cursor == first_commit
    assert source.last_sync_status == "ok" and source.last_synced_at is not None
    assert (
        source.last_sync_result == f"Documents 4 added; 4 new versions (commit {first_commit[:7]})."
    )
    assert found_paths("сдвиг тестирования влево на ранние этапы SDLC", source.pk)[0] == SHIFT_LEFT
    zbp = Document.objects.get(source=source, path=ZBP)
    assert zbp.versions.get().label == f"2024-03-01 {first_commit[:7]}"
    client.force_login(alice)
    page = client.get(f"/documents/{zbp.pk}/").content.decode()
    assert f"https://wiki.example.com/blob/main/{ZBP}" in page  # the page's link: base URL + path

    # One page edited, another deleted, one commit.
    wiki.append(ZBP, EXCEPTIONS)
    (wiki.path / SHIFT_LEFT).unlink()
    second_commit = wiki.commit("Exceptions to the ZBP; shift-left page retired", day="2024-03-05")
    ingests_before = dict(DocumentVersion.objects.values_list("pk", "attempts"))
    second = sync("Team wiki")
    assert second["changed"] == [ZBP] and second["added"] == []
    assert second["removed"] == [SHIFT_LEFT]
    assert second["unchanged"] == 0  # the unchanged pages were not even read: not in the diff
    assert second["new_versions"] == second["ingested"] == second["ready"] == 1
    # Nothing but the new version was ingested again.
    assert (
        dict(DocumentVersion.objects.filter(pk__in=ingests_before).values_list("pk", "attempts"))
        == ingests_before
    )
    assert SHIFT_LEFT not in found_paths("сдвиг тестирования влево на ранние этапы SDLC", source.pk)
    assert Document.objects.get(source=source, path=SHIFT_LEFT).removed_at is not None
    assert found_paths("журнал техдолга косметические дефекты архивные модули", source.pk)[0] == ZBP
    labels = list(zbp.versions.order_by("number").values_list("label", flat=True))
    assert labels == [f"2024-03-01 {first_commit[:7]}", f"2024-03-05 {second_commit[:7]}"]

    compare = client.get(f"/documents/{zbp.pk}/compare/").content.decode()
    assert "Исключения" in compare and "журнал техдолга" in compare
    assert f"2024-03-05 {second_commit[:7]}" in compare

    # Nothing new: nothing changes, nothing is ingested.
    versions = DocumentVersion.objects.count()
    third = sync("Team wiki")
    assert third["status"] == "ok" and third["new_versions"] == third["ingested"] == 0
    assert third["added"] == third["changed"] == third["removed"] == []
    assert DocumentVersion.objects.count() == versions
    assert (
        Source.objects.get(pk=source.pk).last_sync_result
        == f"Up to date (commit {second_commit[:7]})."
    )


def test_a_renamed_page_keeps_its_document_and_versions(db, wiki):
    add_source("Wiki", str(wiki.path))
    sync("Wiki")
    soak = Document.objects.get(path=SOAK)
    (wiki.path / "performance").mkdir()
    wiki.git("mv", SOAK, "performance/soak.md")
    wiki.commit("Soak testing moves to performance/", day="2024-03-02")
    renamed = sync("Wiki")
    assert renamed["renamed"] == [{"from": SOAK, "to": "performance/soak.md"}]
    assert renamed["new_versions"] == 0 and renamed["removed"] == []  # same bytes, same document
    soak.refresh_from_db()
    assert soak.path == "performance/soak.md" and soak.removed_at is None
    assert soak.versions.count() == 1
    assert (
        found_paths("выносливость стабильность длительная нагрузка soak", soak.source_id)[0]
        == "performance/soak.md"
    )


def test_history_imports_the_last_commits_of_each_page_as_versions_oldest_first(db, tmp_path):
    repo = WikiRepo(tmp_path / "wiki")
    repo.copy(ZBP)
    repo.copy(CONFORMANCE)
    c1 = repo.commit("first", day="2024-01-10")
    repo.append(ZBP, "\nПервое уточнение политики.\n")
    c2 = repo.commit("second", day="2024-02-10")
    repo.append(CONFORMANCE, "\nУточнение про стандарты.\n")
    repo.commit("conformance only", day="2024-02-20")
    repo.append(ZBP, "\nВторое уточнение политики.\n")
    c4 = repo.commit("third", day="2024-03-10")
    add_source("Wiki", str(repo.path), "--history", "2")
    outcome = sync("Wiki")
    assert outcome["new_versions"] == 4  # two commits of each page
    zbp = Document.objects.get(path=ZBP)
    versions = list(zbp.versions.order_by("number").values_list("label", "label_date", "status"))
    assert [(label, str(day), status) for label, day, status in versions] == [
        (f"2024-02-10 {c2[:7]}", "2024-02-10", "ready"),
        (f"2024-03-10 {c4[:7]}", "2024-03-10", "ready"),
    ]
    assert c1[:7] not in str(versions)  # the third commit back is beyond --history 2
    assert zbp.current_version.label == f"2024-03-10 {c4[:7]}"


def test_a_reverted_page_is_current_again(db, wiki):
    add_source("Wiki", str(wiki.path))
    sync("Wiki")
    original = (wiki.path / ZBP).read_text(encoding="utf-8")
    wiki.append(ZBP, EXCEPTIONS)
    wiki.commit("edit", day="2024-03-02")
    sync("Wiki")
    (wiki.path / ZBP).write_text(original, encoding="utf-8")
    wiki.commit("revert", day="2024-03-03")
    reverted = sync("Wiki")
    assert reverted["changed"] == [ZBP] and reverted["new_versions"] == 0
    zbp = Document.objects.get(path=ZBP)
    assert zbp.current_version.sha256 == zbp.versions.order_by("-number").first().sha256
    assert "журнал техдолга" not in " ".join(
        zbp.current_version.chunks.values_list("text", flat=True)
    )


def test_only_the_folder_given_is_synced_and_other_files_are_skipped(db, wiki):
    wiki.copy(ZBP, to="docs/policy.md")
    (wiki.path / "docs" / "diagram.png").write_bytes(b"\x89PNG\r\n")
    (wiki.path / "docs" / ".hidden.md").write_text("# Hidden\n", encoding="utf-8")
    wiki.commit("docs folder", day="2024-03-02")
    add_source("Docs", str(wiki.path), "--path", "docs", "--base-url", "https://kb.example.com/")
    outcome = sync("Docs")
    assert outcome["added"] == ["policy.md"]
    assert list(Document.objects.values_list("path", flat=True)) == ["policy.md"]


# --- errors in plain words -----------------------------------------------------------------


def test_a_bad_url_gives_a_plain_error_and_indexes_nothing(db, tmp_path):
    add_source("Lost", str(tmp_path / "no-such-repo"))
    with pytest.raises(CommandError, match="There is no git repository at"):
        sync("Lost")
    source = Source.objects.get(name="Lost")
    assert source.last_sync_status == "failed"
    assert source.last_sync_error == f"There is no git repository at {tmp_path / 'no-such-repo'}."
    assert source.sync_cursor == "" and not Document.objects.exists()


def test_a_missing_branch_gives_a_plain_error(db, wiki):
    add_source("Wiki", str(wiki.path), "--branch", "release")
    outcome = sync_source(Source.objects.get(name="Wiki").pk)
    assert outcome.status == "failed"
    assert outcome.error == f'The branch "release" does not exist in {wiki.path}.'
    assert not Document.objects.exists()


def test_an_empty_folder_is_an_error_not_a_reason_to_remove_everything(db, wiki):
    add_source("Wiki", str(wiki.path), "--path", "nothing-here")
    outcome = sync_source(Source.objects.get(name="Wiki").pk)
    assert outcome.status == "failed"
    assert outcome.error.startswith(
        "No documents the portal can read under nothing-here/ at commit "
    )


def test_a_failed_sync_keeps_what_was_indexed_and_the_next_one_resumes(db, wiki):
    add_source("Wiki", str(wiki.path))
    sync("Wiki")
    source = Source.objects.get(name="Wiki")
    cursor = source.sync_cursor
    wiki.append(ZBP, EXCEPTIONS)
    wiki.commit("edit", day="2024-03-02")
    Source.objects.filter(pk=source.pk).update(branch="gone")
    failed = sync_source(source.pk, enqueue=False)
    assert failed.status == "failed" and failed.version_ids == []
    source.refresh_from_db()
    assert source.sync_cursor == cursor and source.last_sync_status == "failed"
    assert len(found_paths("политика отсутствия багов", source.pk)) == 4  # all still searchable
    Source.objects.filter(pk=source.pk).update(branch="main")
    resumed = sync("Wiki")
    assert resumed["changed"] == [ZBP] and resumed["ready"] == 1
    source.refresh_from_db()
    assert source.last_sync_status == "ok" and source.last_sync_error == ""


def test_add_refuses_bad_settings(db, wiki):
    with pytest.raises(CommandError, match="history_depth"):
        add_source("Wiki", str(wiki.path), "--history", "0")
    with pytest.raises(CommandError, match="cannot start with '-'"):
        add_source("Wiki", "--upload-pack=touch /tmp/x")
    add_source("Wiki", str(wiki.path))
    with pytest.raises(CommandError, match="exists"):
        add_source("wiki", str(wiki.path))
