"""Row-label evidence: a question naming a row of a table ("inventory levels") finds that table
among prose that repeats the question's words, in the document the question is about
(knowledge.retrieval.labels)."""

from __future__ import annotations

import pytest

from knowledge.models import Chunk
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.retrieval.labels import label_score
from knowledge.retrieval.weights import Fusion, Hits, weights
from tests.knowledge.retrieval.conftest import add_document, make_source

pytestmark = pytest.mark.django_db

PROSE = """# {company} quarterly report

## Supply chain

{company} manages its supply chain with long-term supply agreements. During the quarter
{company} extended supply agreements to secure inventory for the coming quarters; supply chain
constraints may change our inventory levels and may require {company} to hold more inventory.

## Risk factors

If demand changes, {company} may hold excess inventory or face inventory shortages; supply
chain disruptions could change inventory levels from quarter to quarter and harm {company}.
"""

BALANCE = """
## Condensed consolidated balance sheet

(In millions)

|  | July 30, 2023 | January 29, 2023 |
| --- | --- | --- |
| Cash and cash equivalents | $5,783 | $3,389 |
| Marketable securities | 10,240 | 9,907 |
| Accounts receivable, net | 7,066 | 3,827 |
| Inventories | {inventories} | 5,159 |
| Prepaid expenses and other current assets | 1,389 | 791 |
| Total current assets | 28,797 | 23,073 |
| Property and equipment, net | 3,799 | 3,807 |
| Goodwill | 4,430 | 4,372 |
"""

OTHER = """# {company} quarterly report

## Overview

{company} designs office furniture and sells it through dealers in twelve countries.
"""

QUESTION = (
    "How have Acme's inventory levels changed during the quarter, and what might this "
    "indicate about its supply chain?"
)


def _tables(weight: float) -> list[str]:
    """The texts of the tables among the first three hits (one document may fill them)."""
    options = SearchOptions(
        hits=Hits(k=3, per_document=3, spread=0, cascade=False),
        fusion=Fusion(label_weight=weight),
        min_score=-1.0,
    )
    hits = search(QUESTION, options=options).hits
    chunks = [Chunk.objects.get(pk=h.chunk_id) for h in hits]
    return [c.text for c in chunks if c.block_type == "table"]


def test_a_row_the_question_names_brings_its_table_among_the_prose(embedder):
    source = make_source("Filings")
    acme = PROSE.format(company="Acme") + BALANCE.format(inventories="4,319")
    add_document(source, "acme.md", acme, embedder)
    add_document(
        source,
        "zenith.md",
        OTHER.format(company="Zenith") + BALANCE.format(inventories="777"),
        embedder,
    )
    # Ingestion keeps each table's row labels as lexemes.
    table = Chunk.objects.get(block_type="table", text__contains="4,319")
    assert ["inventori"] in table.meta["labels"]
    assert "inventori" in table.meta["label_words"]
    # Without the evidence the prose, which repeats every word of the question, comes first
    # and the table is not among the first three hits; with it Acme's balance sheet is, and
    # Zenith's (the same row, in a document not about Acme) is not.
    assert _tables(0.0) == []
    tables = _tables(1.0)
    assert len(tables) == 1 and "| Inventories | 4,319 |" in tables[0]


def test_a_label_made_of_asked_words_counts_by_their_share_of_the_question():
    idf = {"inventori": 2.0, "level": 1.0, "total": 0.5, "acm": 4.0}
    asked, total = set(idf), sum(idf.values())
    assert label_score(["inventori"], asked, idf, total) == pytest.approx(2.0 / 7.5)
    # Half the label is not asked: half the evidence.
    assert label_score(["inventori", "raw"], asked, idf, total) == pytest.approx(0.5 * 2.0 / 7.5)
    # A common word alone counts little; a label sharing nothing counts nothing.
    assert label_score(["total"], asked, idf, total) == pytest.approx(0.5 / 7.5)
    assert label_score(["goodwil"], asked, idf, total) == 0.0


def test_migration_0018_gives_tables_ingested_before_it_the_labels_ingestion_stores(embedder):
    import importlib

    from django.apps import apps

    migration = importlib.import_module("knowledge.migrations.0018_table_row_labels")
    source = make_source("Filings")
    add_document(source, "acme.md", BALANCE.format(inventories="4,319"), embedder)
    stored = {c.pk: c.meta for c in Chunk.objects.filter(meta__has_key="labels")}
    assert {Chunk.objects.get(pk=pk).block_type for pk in stored} == {"table", "row"}
    for pk, meta in stored.items():
        bare = {k: v for k, v in meta.items() if k not in ("labels", "label_words")}
        Chunk.objects.filter(pk=pk).update(meta=bare)
    migration.label_tables(apps, None)
    assert {c.pk: c.meta for c in Chunk.objects.filter(meta__has_key="labels")} == stored


def test_a_latin_label_of_a_russian_table_is_a_name_read_whole():
    from knowledge.ingest.store import label_lexemes

    russian = "| Имя | Тип |\n| --- | --- |\n| Items | list |\n| Список мероприятий | x |"
    english = "|  | 2023 |\n| --- | --- |\n| Inventories | 4,319 |"
    # Stemmed, "Items" would be "item" and match a question about the class Item.
    assert label_lexemes("russian", [russian]) == [[["им"], ["items"], ["мероприят", "список"]]]
    assert label_lexemes("english", [english]) == [[["inventori"]]]


def test_a_named_row_under_the_follower_floor_stays_by_its_label_evidence(embedder):
    # The follower floor (a share of the minimum score) reads a chunk's own score, which a
    # table of figures keeps low however exactly the question names its row; its label
    # evidence counts there too (never for the minimum itself: test_fusion.py).
    source = make_source("Filings")
    acme = PROSE.format(company="Acme") + BALANCE.format(inventories="4,319")
    add_document(source, "acme.md", acme, embedder)
    options = SearchOptions(hits=Hits(k=4, per_document=4, spread=0, cascade=False))
    result = search(QUESTION, options=options)
    # Below the lower of the two minimums' floors, whichever applies to this question.
    gate = weights().gate
    floor = gate.follower_share * min(gate.min_score, gate.min_score_known)
    tables = [h for h in result.hits if Chunk.objects.get(pk=h.chunk_id).block_type == "table"]
    assert len(tables) == 1 and tables[0].score < floor and tables[0].label_evidence > 0
    # Its own score is the calibrated one: the evidence is in the fused score only.
    assert tables[0].score == tables[0].calibrated.score < tables[0].fused.score
    assert "| Inventories | 4,319 |" in Chunk.objects.get(pk=tables[0].chunk_id).text
