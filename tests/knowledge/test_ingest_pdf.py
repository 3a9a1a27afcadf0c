"""The 20 SEC 10-Q filings (PDF) through the real ingest (acceptance 3 of the ingestion issue).

Registration, the PDF parser, the chunker and the store are the real ones; the vectors come from
the small trigram embedder, because what is checked here is pages and tables, and the bundled
model would add a quarter of an hour of embedding for nothing this test looks at.
"""

from __future__ import annotations

from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import register_file
from knowledge.models import Source
from knowledge.parsing.base import ParsedDocument
from tests.knowledge.conftest import SEC_PDFS
from tests.knowledge.embedders import TrigramEmbedder
from tests.knowledge.tables import assert_tables_whole, tables_in_chunk


def test_every_chunk_of_the_sec_filings_has_its_page_and_tables_are_markdown(db):
    filings = sorted(SEC_PDFS.glob("*.pdf"))
    assert len(filings) == 20
    source = Source.objects.create(name="SEC 10-Q")
    embedder = TrigramEmbedder()
    table_chunks = {}
    for pdf in filings:
        version = register_file(source, pdf.name, pdf.read_bytes(), enqueue=False).version
        result = ingest_version(version.pk, embedder=embedder)
        assert result.status == "ready", (pdf.name, result.error)
        version.refresh_from_db()
        parsed = ParsedDocument.from_dict(version.parsed)
        assert version.page_count > 1
        chunks = list(
            version.chunks.order_by("position").values(
                "text", "page", "block_start", "block_end", "block_type"
            )
        )
        assert chunks
        for chunk in chunks:
            # Its page, and the page its first block was read from.
            assert chunk["page"] is not None, (pdf.name, chunk["text"][:80])
            assert 1 <= chunk["page"] <= version.page_count
            assert chunk["page"] == parsed.blocks[chunk["block_start"]].page
        tables = [c for c in chunks if c["block_type"] in ("table", "test_case")]
        for chunk in tables:
            assert tables_in_chunk(chunk["text"]), (pdf.name, chunk["text"][:200])
        assert_tables_whole(parsed, chunks)
        table_chunks[pdf.name] = len(tables)
    assert all(table_chunks.values()), table_chunks  # every filing has Markdown tables
