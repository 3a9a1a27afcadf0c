"""The ingest pipeline on real documents: structure, tables, versions, idempotency.

Files go in through ``manage.py ingest`` (the same registration service and ingest service as the
upload button) or through ``register_file`` + ``ingest_version`` where a test needs one version
under its control. Variations of the corpus files are built at run time.
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import docx
import pytest
from django.db import connection

from knowledge import termstats
from knowledge.chunking import Chunker, ChunkingConfig
from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import register_file
from knowledge.models import Chunk, CorpusStat, Document, DocumentVersion, Source, TermStat
from knowledge.parsing.base import ParsedDocument
from knowledge.parsing.registry import parse_document
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.types import Filters
from knowledge.retrieval.weights import Hits
from tests.knowledge.conftest import PMI, ingest
from tests.knowledge.tables import assert_tables_whole

CHUNK_FIELDS = ("position", "text", "heading_path", "section", "sections", "block_type")


def pmi_version(**options) -> DocumentVersion:
    summary = ingest(PMI, source="HSE specs", **options)
    (row,) = summary["documents"]
    assert row["status"] == "ready", row
    return DocumentVersion.objects.get(pk=row["version_id"])


def parsed_of(version: DocumentVersion) -> ParsedDocument:
    return ParsedDocument.from_dict(version.parsed)


def chunk_rows(version: DocumentVersion) -> list[tuple]:
    return list(version.chunks.order_by("position").values_list(*CHUNK_FIELDS))


def expected_chunks(data: bytes, filename: str, settings) -> list[tuple]:
    """What the chunker makes of these bytes, computed here without the database."""
    config = ChunkingConfig(
        max_tokens=settings.CHUNK_MAX_TOKENS,
        min_tokens=settings.CHUNK_MIN_TOKENS,
        overlap=settings.CHUNK_OVERLAP,
    )
    drafts = Chunker(config).chunk(parse_document(data, filename))
    return [
        (i, d.text, d.heading_path, d.section, d.sections, d.block_type)
        for i, d in enumerate(drafts)
    ]


def tree_numbers(levels: list[int]) -> list[str]:
    """Section numbers of headings from their levels alone (a level skipped counts as 1)."""
    counters: list[int] = []
    numbers = []
    for level in levels:
        del counters[level:]
        counters += [1] * (level - len(counters) - 1) + [0] * (level > len(counters))
        counters[level - 1] += 1
        numbers.append(".".join(map(str, counters)))
    return numbers


def as_dicts(version: DocumentVersion) -> list[dict]:
    return list(
        version.chunks.order_by("position").values("text", "block_start", "block_end", "block_type")
    )


# --- acceptance 1: the test programme (ПМИ) -------------------------------------------------------


def test_pmi_chunk_sections_follow_the_heading_tree(db):
    version = pmi_version()
    parsed = parsed_of(version)
    headings = [b for b in parsed.blocks if b.kind == "heading"]
    assert Counter(h.level for h in headings) == {1: 9, 2: 16, 3: 10}
    assert [h.section for h in headings] == tree_numbers([h.level for h in headings])
    by_section = {h.section: h for h in headings}

    chunks = list(version.chunks.order_by("position"))
    assert len(chunks) == version.chunk_count > 0
    for chunk in chunks:
        assert chunk.section == "" or chunk.section in by_section, chunk.section
        assert set(chunk.sections) <= by_section.keys()
        if chunk.section:
            assert chunk.heading_path == by_section[chunk.section].heading_path
            assert chunk.sections[0] == chunk.section
    order = list(by_section)
    firsts = [order.index(c.section) for c in chunks if c.section]
    assert firsts == sorted(firsts)  # chunks follow the document's order
    # Every block with content lands in a chunk that names the block's section.
    for index, block in enumerate(parsed.blocks):
        if block.kind == "heading" or not block.text.strip() or not block.section:
            continue
        assert any(
            c.block_start <= index <= c.block_end and block.section in c.sections for c in chunks
        ), (index, block.section, block.text[:80])
    # All nine chapters are reached by some chunk (directly or through a subsection).
    assert {s.split(".")[0] for c in chunks for s in c.sections} == {str(n) for n in range(1, 10)}


@pytest.mark.parametrize("max_tokens", [800, 120])
def test_pmi_tables_come_out_whole_with_their_header_rows(db, settings, max_tokens):
    settings.CHUNK_MAX_TOKENS = max_tokens
    settings.CHUNK_MIN_TOKENS = min(settings.CHUNK_MIN_TOKENS, max_tokens // 2)
    version = pmi_version()
    parsed = parsed_of(version)
    assert sum(1 for b in parsed.blocks if b.kind in ("table", "test_case")) == 4
    assert assert_tables_whole(parsed, as_dicts(version)) == 4
    table_chunks = version.chunks.filter(block_type__in=["table", "test_case"])
    if max_tokens == 120:
        # A small budget must split the longer tables by rows, each piece with its header.
        assert table_chunks.count() > 4


# --- acceptance 4: same bytes, changed bytes --------------------------------------------------------


def test_reingesting_same_bytes_creates_no_version_and_no_chunk(db):
    first = pmi_version()
    chunk_ids = set(first.chunks.values_list("pk", flat=True))
    again = ingest(PMI, source="HSE specs")
    assert again["new_versions"] == 0 and again["unchanged"] == 1
    assert again["documents"][0]["version_id"] == first.pk
    assert DocumentVersion.objects.filter(document=first.document).count() == 1
    assert set(Chunk.objects.filter(document=first.document).values_list("pk", flat=True)) == (
        chunk_ids
    )


def edited_pmi(tmp_path: Path, sentence: str) -> Path:
    document = docx.Document(str(PMI))
    document.add_paragraph(sentence)
    path = tmp_path / PMI.name
    document.save(str(path))
    return path


def test_changed_bytes_make_a_new_version_and_only_it_is_searched(db, tmp_path):
    path = tmp_path / PMI.name
    path.write_bytes(PMI.read_bytes())
    old = ingest(path, source="HSE specs")["documents"][0]
    edited_pmi(tmp_path, "Испытания проводятся на полигоне Кукушкино под наблюдением комиссии.")
    new = ingest(path, source="HSE specs")["documents"][0]

    assert new["created"] and new["version"] == 2 and new["status"] == "ready"
    document = Document.objects.get(pk=new["document_id"])
    old_version = DocumentVersion.objects.get(pk=old["version_id"])
    assert old_version.status == "ready" and old_version.chunks.count() > 0  # kept
    assert not old_version.chunks.filter(searchable=True).exists()
    assert document.current_version_id == new["version_id"]
    assert set(
        Chunk.objects.filter(document=document, searchable=True).values_list("version", flat=True)
    ) == {new["version_id"]}

    options = SearchOptions(hits=Hits(k=20, per_document=20, cascade=False), min_score=-1.0)
    only_here = Filters(document_ids=[document.pk])
    for query in ("полигон Кукушкино", "порядок проведения испытаний", "требования к интерфейсу"):
        hits = search(query, filters=only_here, options=options).hits
        assert hits, query
        versions = set(
            Chunk.objects.filter(pk__in=[h.chunk_id for h in hits]).values_list(
                "version", flat=True
            )
        )
        assert versions == {new["version_id"]}, query


def test_a_version_file_named_after_its_date_does_not_rename_the_document(db):
    source = Source.objects.create(name="Notes")
    path = "Release notes.txt"
    for name, text in (
        ("notes_2019-05-04_aa30d6d.txt", "Release one ships the login page."),
        ("notes_2019-05-14_3cba122.txt", "Release two ships the search page."),
    ):
        version = register_file(source, path, text.encode(), filename=name, enqueue=False).version
        assert ingest_version(version.pk).status == "ready"
    document = Document.objects.get(source=source)
    assert document.title == "Release notes"
    # An older version reingested later leaves the title and the current version alone.
    first = document.versions.order_by("number").first()
    ingest_version(first.pk, force=True)
    document.refresh_from_db()
    assert document.title == "Release notes" and document.current_version.number == 2


# --- acceptance 5: the same version ingested twice ------------------------------------------------


def test_ingest_run_twice_one_after_the_other_gives_the_same_chunks(db, settings):
    source = Source.objects.create(name="Specs")
    data = PMI.read_bytes()
    version = register_file(source, PMI.name, data, enqueue=False).version
    assert ingest_version(version.pk).status == "ready"
    first = chunk_rows(version)
    first_ids = set(version.chunks.values_list("pk", flat=True))

    assert ingest_version(version.pk).status == "skipped"  # done already: nothing to claim
    assert set(version.chunks.values_list("pk", flat=True)) == first_ids

    assert ingest_version(version.pk, force=True).status == "ready"  # the reindex button
    assert chunk_rows(version) == first == expected_chunks(data, PMI.name, settings)
    assert version.chunks.count() == len(first)  # replaced, not added to


@pytest.mark.parametrize("force", [False, True], ids=["pending", "reindex"])
def test_two_threads_ingesting_one_version_store_one_chunk_set(transactional_db, settings, force):
    source = Source.objects.create(name="Specs")
    data = PMI.read_bytes()
    version = register_file(source, PMI.name, data, enqueue=False).version
    if force:
        ingest_version(version.pk)
    barrier = threading.Barrier(2)
    results, errors = [], []

    def run() -> None:
        try:
            barrier.wait()
            results.append(ingest_version(version.pk, force=force).status)
        except Exception as exc:  # pragma: no cover - reported by the assert below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    assert not errors
    assert "ready" in results and set(results) <= {"ready", "skipped"}
    version.refresh_from_db()
    assert version.status == "ready" and version.claim_token == ""
    assert chunk_rows(version) == expected_chunks(data, PMI.name, settings)
    assert version.chunk_count == version.chunks.count()
    assert version.chunks.filter(searchable=True).count() == version.chunk_count


def test_parsed_document_of_a_version_is_what_the_viewer_shows(db, client, alice):
    version = pmi_version()
    client.force_login(alice)
    html = client.get(f"/documents/{version.document_id}/").content.decode()
    assert "ТРЕБОВАНИЯ К ПРОГРАММЕ" in html
    assert html.count("<table") >= 4


# --- BM25 statistics follow what is searchable ------------------------------------------------------


def bm25_statistics() -> tuple[dict[str, int], list[tuple]]:
    terms = {
        (source, lexeme): df
        for source, lexeme, df in TermStat.objects.filter(df__gt=0).values_list(
            "source_id", "lexeme", "df"
        )
    }
    corpus = list(CorpusStat.objects.values_list("source_id", "chunks", "total_length"))
    return terms, corpus


def test_reindex_and_new_versions_keep_the_bm25_statistics_exact(db, tmp_path):
    path = tmp_path / PMI.name
    path.write_bytes(PMI.read_bytes())
    first = ingest(path, source="HSE specs")["documents"][0]
    after_first = bm25_statistics()
    # Row units are searched but not counted (knowledge.termstats).
    counted_chunks = Chunk.objects.filter(searchable=True).exclude(block_type="row").count()
    assert after_first[1][0][1] == counted_chunks

    ingest_version(first["version_id"], force=True)  # the reindex button, on the same bytes
    assert bm25_statistics() == after_first

    edited_pmi(tmp_path, "Испытания проводятся на полигоне Кукушкино под наблюдением комиссии.")
    ingest(path, source="HSE specs")
    counted = bm25_statistics()
    termstats.rebuild()  # from scratch, over the searchable chunks
    assert counted == bm25_statistics()


def test_stored_full_text_column_is_computed_from_the_chunk_itself(db):
    from knowledge.text.identifiers import lexical_text

    version = pmi_version()
    rows = version.chunks.values_list("pk", "language", "heading_path", "document__title", "text")
    wrong = []
    with connection.cursor() as cursor:
        for pk, language, heading_path, title, text in rows:
            # Each part read with its identifiers' parts ("Item.cs Item cs").
            cursor.execute(
                """
                SELECT c.search_vector IS NOT DISTINCT FROM (
                           setweight(to_tsvector(%s::regconfig, %s), 'A')
                           || setweight(to_tsvector(%s::regconfig, %s), 'B')
                           || setweight(to_tsvector(%s::regconfig, %s), 'D'))
                       AND c.lexeme_count = length(c.search_vector) AND c.lexeme_count > 0
                FROM knowledge_chunk c WHERE c.id = %s
                """,
                [
                    language,
                    lexical_text(" ".join(heading_path)),
                    language,
                    lexical_text(title),
                    language,
                    lexical_text(text),
                    pk,
                ],
            )
            if not cursor.fetchone()[0]:
                wrong.append(pk)
    assert len(rows) == version.chunk_count and not wrong
    assert version.chunks.first().language == "russian"
