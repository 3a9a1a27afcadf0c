"""A folder on the server as a source: the same sync service as git, listed whole each time."""

from __future__ import annotations

import io
import json

from django.core.management import call_command

from knowledge.models import Document, DocumentVersion, Source


def sync(name: str) -> dict:
    out = io.StringIO()
    call_command("source", "sync", name, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_folder_source_follows_new_changed_and_deleted_files(db, tmp_path):
    folder = tmp_path / "handbook"
    (folder / "team").mkdir(parents=True)
    (folder / "onboarding.md").write_text("# Onboarding\n\nNew testers pair with a mentor.\n")
    (folder / "team" / "oncall.md").write_text("# On-call\n\nThe on-call tester watches alerts.\n")
    call_command(
        "source", "add", "Handbook", "--kind", "folder", f"--url={folder}", stdout=io.StringIO()
    )
    first = sync("Handbook")
    assert sorted(first["added"]) == ["onboarding.md", "team/oncall.md"] and first["ready"] == 2
    assert Source.objects.get(name="Handbook").kind == "folder"

    assert sync("Handbook")["summary"].startswith("Up to date")  # nothing moved: nothing read

    (folder / "onboarding.md").write_text(
        "# Onboarding\n\nNew testers pair with a mentor for a month.\n"
    )
    (folder / "team" / "oncall.md").unlink()
    second = sync("Handbook")
    assert second["changed"] == ["onboarding.md"] and second["removed"] == ["team/oncall.md"]
    assert second["new_versions"] == 1
    assert Document.objects.get(path="team/oncall.md").removed_at is not None
    assert DocumentVersion.objects.filter(document__path="onboarding.md").count() == 2


def test_a_missing_folder_is_a_plain_error(db, tmp_path):
    call_command(
        "source", "add", "Gone", "--kind", "folder", f"--url={tmp_path}/gone", stdout=io.StringIO()
    )
    from knowledge.sources.sync import sync_source

    outcome = sync_source(Source.objects.get(name="Gone").pk)
    assert outcome.status == "failed"
    assert outcome.error == f"The folder {tmp_path}/gone does not exist or cannot be read."
