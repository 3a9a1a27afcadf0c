"""Identifiers PostgreSQL's parser reads as one token or drops ("Item.cs", "<Item>") are indexed
with their parts too, in the chunks' and the documents' full-text vectors."""

from __future__ import annotations

import pytest
from django.db import connection

from knowledge.ingest.pipeline import ingest_version
from knowledge.ingest.registration import register_file
from knowledge.models import Chunk, Document, Source
from knowledge.retrieval.hybrid import SearchOptions, search
from knowledge.text.identifiers import lexical_text


def test_dotted_names_and_type_parameters_are_followed_by_their_parts():
    assert lexical_text("класса Item.cs") == "класса Item.cs Item cs"
    assert lexical_text(r"Views\ItemDetailPage.xaml.cs") == (
        r"Views\ItemDetailPage.xaml.cs ItemDetailPage xaml cs"
    )
    assert "Item" in lexical_text("ObservableCollection<Item>").split()
    assert {"string", "Item"} <= set(lexical_text("Dictionary<string, Item>").split())


def test_abbreviations_numbers_and_comparisons_stay_as_they_are():
    for text in ("U.S. dollars, e.g. here", "версия 2.3.1", "a < b > c", "без точек вовсе"):
        assert lexical_text(text) == text


def _lexemes(text: str) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT tsvector_to_array(to_tsvector('russian', %s))", [text])
        return set(cursor.fetchone()[0])


@pytest.mark.django_db
def test_postgres_alone_would_not_find_the_parts():
    # What the rule is for: without it "Item" is no lexeme of either text.
    assert "item" not in _lexemes("класса Item.cs") | _lexemes("ObservableCollection<Item>")
    assert "item" in _lexemes(lexical_text("класса Item.cs"))


SPEC = """# Пояснительная записка

## Классы

Таблица 5.2 Описание полей, методов и свойств класса Item.cs: поле Header хранит заголовок
мероприятия, поле Link хранит ссылку.

## Представления

Список мероприятий хранится в поле Events типа `ObservableCollection<Event>`, избранное отдельно.
"""


@pytest.mark.django_db
def test_a_class_named_without_its_file_extension_is_found_and_counted_in_the_document():
    source = Source.objects.create(name="Specs")
    version = register_file(source, "pz.md", SPEC.encode(), enqueue=False).version
    assert ingest_version(version.pk).status == "ready"
    # "Item" is a word of no chunk's text as PostgreSQL reads it, only a part of "Item.cs".
    hits = search("Item", options=SearchOptions(lists=("lexical",), min_score=-1.0)).hits
    assert hits and "Item.cs" in Chunk.objects.get(pk=hits[0].chunk_id).text
    document = Document.objects.get(source=source)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT lexeme, tf FROM knowledge_documentterm WHERE document_id = %s", [document.pk]
        )
        terms = dict(cursor.fetchall())
    assert {"item", "item.cs", "event"} <= set(terms)
    # The document's terms are its chunks' body words: the same counts as its text read whole
    # (identifiers' parts aside), so document-level BM25 did not change for other words.
    whole = _term_counts(lexical_text(" ".join(c.text for c in _chunks(document))))
    assert terms == _merged(whole, _term_counts(document.title))


def _chunks(document):
    chunks = Chunk.objects.filter(document=document, searchable=True).exclude(block_type="row")
    return chunks.order_by("position")


def _term_counts(text: str) -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1) "
            "FROM unnest(to_tsvector('russian', %s)) u",
            [text],
        )
        return dict(cursor.fetchall())


def _merged(*counts: dict[str, int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for count in counts:
        for lexeme, n in count.items():
            out[lexeme] = out.get(lexeme, 0) + n
    return out
