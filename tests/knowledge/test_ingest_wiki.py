"""The whole QA Bible wiki through the real ingest (acceptance 2 of the ingestion issue).

The wiki is ingested once per session (``qa_bible``, the session's demo knowledge base); these
tests only read what the ingest stored and compare it with the raw Markdown files.
"""

from __future__ import annotations

import re

import pytest

from knowledge.models import Chunk, Document, DocumentVersion
from knowledge.parsing.base import ParsedDocument
from tests.knowledge.conftest import WIKI
from tests.knowledge.tables import assert_tables_whole, count_pipe_tables

_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}\s+\S")


@pytest.fixture(scope="module")
def raw_pages() -> dict[str, str]:
    return {
        p.relative_to(WIKI).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(WIKI.rglob("*.md"))
    }


def versions_by_path(source) -> dict[str, DocumentVersion]:
    return {
        v.document.path: v
        for v in DocumentVersion.objects.filter(document__source=source).select_related("document")
    }


def test_every_wiki_page_becomes_one_ready_document(db, qa_bible, raw_pages):
    assert len(raw_pages) == 238
    documents = Document.objects.filter(source=qa_bible)
    assert sorted(documents.values_list("path", flat=True)) == sorted(raw_pages)
    versions = versions_by_path(qa_bible)
    assert len(versions) == 238  # one version per page
    problems = {p: (v.status, v.error) for p, v in versions.items() if v.status != "ready"}
    assert problems == {}
    for document in documents:
        assert document.current_version_id == versions[document.path].pk
        assert document.title.strip()
        assert versions[document.path].chunk_count == document.current_version.chunks.count() > 0


def test_every_wiki_chunk_has_text_and_its_heading_path(db, qa_bible, raw_pages):
    chunks = list(Chunk.objects.filter(source=qa_bible).select_related("version", "document"))
    assert chunks
    without_path = set()
    for chunk in chunks:
        assert chunk.text.strip() and chunk.token_count > 0
        assert chunk.searchable
        parsed = ParsedDocument.from_dict(chunk.version.parsed)
        headings = {b.section: b for b in parsed.blocks if b.kind == "heading"}
        if chunk.heading_path:
            assert chunk.heading_path == headings[chunk.section].heading_path
        else:
            without_path.add(chunk.document.path)
    # Only pages with no heading at all have chunks without a heading path.
    no_headings = {
        path
        for path, text in raw_pages.items()
        if not any(_ATX_HEADING.match(line) for line in text.splitlines())
    }
    assert without_path == no_headings
    assert no_headings == {"CODE_OF_CONDUCT.md", "CONTRIBUTING.md"}


def test_every_wiki_pipe_table_is_intact_in_its_chunks(db, qa_bible, raw_pages):
    versions = versions_by_path(qa_bible)
    raw_counts = {path: count_pipe_tables(text) for path, text in raw_pages.items()}
    # Counted from the raw files: 72 pipe tables in 40 pages. (The corpus README and the issue
    # say 79; no reading of the files gives that: code blocks and "| - | - |" rows excluded,
    # markdown-it also finds 72.)
    assert sum(len(c) for c in raw_counts.values()) == 72
    assert sum(1 for c in raw_counts.values() if c) == 40

    checked = 0
    for path, version in versions.items():
        parsed = ParsedDocument.from_dict(version.parsed)
        tables = [b for b in parsed.blocks if b.kind in ("table", "test_case") and b.table]
        # The same tables, with the same number of body rows, as in the raw page.
        assert [len(b.table.rows) for b in tables] == raw_counts[path], path
        chunks = list(
            version.chunks.order_by("position").values(
                "text", "block_start", "block_end", "block_type"
            )
        )
        checked += assert_tables_whole(parsed, chunks)
    assert checked == 72
