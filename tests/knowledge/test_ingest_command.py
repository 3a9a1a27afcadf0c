"""``manage.py ingest``: files and folders in, what it did out (text or JSON), in-process."""

from __future__ import annotations

import shutil

import pytest
from django.core.management import CommandError, call_command

from knowledge.models import Chunk, Document, DocumentVersion
from tests.knowledge.conftest import PMI, PMI_VERSIONS, ingest

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "team-wiki"
    (root / "guides").mkdir(parents=True)
    (root / "guides" / "release.md").write_text(
        "# Release\n\n## Freeze\n\nThe branch freezes two days before the release.\n",
        encoding="utf-8",
    )
    (root / "notes.txt").write_text("Стенд обновляют по пятницам.\n", encoding="utf-8")
    (root / "diagram.docx").write_bytes(PNG)  # a damaged image with a document's name
    (root / "tool.exe").write_bytes(b"MZ\x90\x00")  # not a supported type: not a candidate
    (root / ".hidden.md").write_text("# Hidden\n\nNot for the knowledge base.\n")
    return root


def test_ingest_command_reports_what_it_did_as_json(db, folder):
    summary = ingest(folder, source="Team wiki")
    assert summary["source"]["name"] == "Team wiki"
    assert (summary["files"], summary["new_versions"], summary["ready"], summary["failed"]) == (
        3,
        3,
        2,
        1,
    )
    rows = {row["document"]: row for row in summary["documents"]}
    assert set(rows) == {"guides/release.md", "notes.txt", "diagram.docx"}
    assert rows["diagram.docx"]["status"] == "failed"
    assert rows["diagram.docx"]["error"] == (
        "The file is a damaged PNG image (it may be truncated); it cannot be read"
    )
    assert summary["chunks"] == Chunk.objects.filter(source_id=summary["source"]["id"]).count() > 0
    for name in ("guides/release.md", "notes.txt"):
        assert rows[name]["chunks"] > 0 and rows[name]["timings"]["embed_s"] >= 0

    again = ingest(folder, source="Team wiki")
    assert (again["new_versions"], again["unchanged"], again["chunks"]) == (0, 3, 0)
    assert DocumentVersion.objects.count() == 3


def test_ingest_command_force_reingests_unchanged_versions(db, folder):
    first = ingest(folder / "notes.txt", source="Notes")
    forced = ingest(folder / "notes.txt", source="Notes", force=True)
    row = forced["documents"][0]
    assert row["version_id"] == first["documents"][0]["version_id"]
    assert not row["created"] and not row["skipped"] and row["status"] == "ready"
    assert DocumentVersion.objects.get(pk=row["version_id"]).attempts == 2


def test_ingest_command_prints_a_summary_a_progress_bar_and_failures(db, folder, capsys):
    call_command("ingest", str(folder))
    out, err = capsys.readouterr()
    assert out.startswith("team-wiki: 3 files, 3 new versions, 0 unchanged, 2 ready, 1 failed")
    assert "diagram.docx: The file is a damaged PNG image" in out
    assert "100%" in err and "3/3" in err  # tqdm's bar, on stderr


def test_ingest_command_refuses_missing_paths_and_folders_without_documents(db, tmp_path):
    with pytest.raises(CommandError, match="no such file or folder"):
        call_command("ingest", str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "photo.gif").write_bytes(b"GIF89a")  # not a candidate
    with pytest.raises(CommandError, match="no supported files"):
        call_command("ingest", str(tmp_path / "empty"))


def test_ingest_command_refuses_files_over_the_size_limit_unread(db, tmp_path, settings):
    settings.MAX_UPLOAD_MB = 1
    big = tmp_path / "big.txt"
    big.write_bytes(b"word " * 500_000)  # 2.4 MB
    summary = ingest(big)
    (row,) = summary["documents"]
    assert row["status"] == "refused" and row["error"] == "The file is 2 MB; the limit is 1 MB"
    assert not Document.objects.exists()


def test_ingest_command_registers_a_version_series_in_order_txt_order(db, tmp_path):
    # Two versions of one day: ORDER.txt, not the file names, says which came first.
    names = ["ПМИ_2019-05-14_3cba122.docx", "ПМИ_2019-05-14_30e82c5.docx"]
    series = tmp_path / "series"
    series.mkdir()
    for name in names:
        shutil.copyfile(PMI_VERSIONS / name, series / name)
    (series / "ORDER.txt").write_text("# oldest first\n" + "\n".join(names) + "\n")
    summary = ingest(series, source="History", versions=True)
    assert summary["ready"] == 2
    document = Document.objects.get(path="ПМИ.docx")
    versions = list(document.versions.order_by("number"))
    assert [v.filename for v in versions] == names
    assert [v.label for v in versions] == ["2019-05-14 3cba122", "2019-05-14 30e82c5"]
    assert document.current_version == versions[-1]
    assert set(
        Chunk.objects.filter(document=document, searchable=True).values_list("version", flat=True)
    ) == {versions[-1].pk}


def test_ingest_command_takes_single_files_into_a_named_source(db):
    summary = ingest(PMI, source="Specs")
    (row,) = summary["documents"]
    assert row["document"] == PMI.name and row["status"] == "ready"
    assert Document.objects.get(pk=row["document_id"]).source.name == "Specs"


def chunks_by_path(source_name: str) -> dict[str, list[str]]:
    chunks: dict[str, list[str]] = {}
    for path, text in (
        Chunk.objects.filter(source__name=source_name, searchable=True)
        .order_by("document__path", "position")
        .values_list("document__path", "text")
    ):
        chunks.setdefault(path, []).append(text)
    return chunks


def test_ingest_command_with_two_jobs_stores_what_one_job_stores(
    transactional_db, folder, tmp_path
):
    one = ingest(folder, source="One job")
    two = ingest(folder, source="Two jobs", jobs=2)
    assert [r["document"] for r in two["documents"]] == [r["document"] for r in one["documents"]]
    assert [r["status"] for r in two["documents"]] == [r["status"] for r in one["documents"]]
    assert chunks_by_path("Two jobs") == chunks_by_path("One job") != {}

    # A version series: numbered in ORDER.txt order even if the newer one finishes first.
    names = ["ПМИ_2019-05-14_3cba122.docx", "ПМИ_2019-05-14_30e82c5.docx"]
    series = tmp_path / "series"
    series.mkdir()
    for name in names:
        shutil.copyfile(PMI_VERSIONS / name, series / name)
    (series / "ORDER.txt").write_text("\n".join(names) + "\n")
    ingest(series, source="History", versions=True, jobs=2)
    document = Document.objects.get(source__name="History")
    newest = document.versions.get(filename=names[-1])
    assert (newest.number, newest.status) == (2, "ready")
    assert document.current_version == newest
    assert set(
        Chunk.objects.filter(document=document, searchable=True).values_list("version", flat=True)
    ) == {newest.pk}
