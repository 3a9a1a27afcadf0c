"""Chunks: the pieces of a version's parsed text that search reads, with their heading path,
section number, block type, first vectors and full-text vector, and their second vectors (one
per sentence, list item or table row)."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from pgvector.django import SparseVectorField, VectorField

from knowledge.models.documents import Document, DocumentVersion
from knowledge.models.sources import Source
from knowledge.querysets import ChunkQuerySet


class Chunk(models.Model):
    class BlockType(models.TextChoices):
        TEXT = "text", _("Text")
        TABLE = "table", _("Table")
        TEST_CASE = "test_case", _("Test case")
        LIST = "list", _("List")
        CODE = "code", _("Code")
        ROW = "row", _("Table rows (searched for their table)")

    version = models.ForeignKey(DocumentVersion, on_delete=models.CASCADE, related_name="chunks")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()
    text = models.TextField()
    heading_path = ArrayField(models.CharField(max_length=500), default=list, blank=True)
    section = models.CharField(max_length=50, blank=True)
    sections = ArrayField(models.CharField(max_length=50), default=list, blank=True)
    block_type = models.CharField(max_length=20, choices=BlockType.choices, default=BlockType.TEXT)
    block_start = models.PositiveIntegerField(default=0)
    block_end = models.PositiveIntegerField(default=0)
    page = models.PositiveIntegerField(null=True, blank=True)
    sheet = models.CharField(max_length=200, blank=True)
    row_start = models.PositiveIntegerField(null=True, blank=True)
    row_end = models.PositiveIntegerField(null=True, blank=True)
    meta = models.JSONField(default=dict, blank=True)
    token_count = models.PositiveIntegerField(default=0)
    language = models.CharField(max_length=20, default="simple")
    # No fixed dimension: each embedding model gets its own partial HNSW index on an
    # expression cast to its dimension (see knowledge.vector_index).
    embedding = VectorField(null=True, blank=True)
    sparse = SparseVectorField(null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True)
    # SHA-1 of the text the model embedded: a later version's unchanged chunk reuses the vector.
    embed_key = models.CharField(max_length=40, blank=True)
    search_vector = SearchVectorField(null=True, editable=False)
    lexeme_count = models.PositiveIntegerField(default=0)  # BM25 length: lexemes in search_vector
    searchable = models.BooleanField(default=False)

    objects = ChunkQuerySet.as_manager()

    class Meta:
        ordering = ["version", "position"]
        constraints = [
            models.UniqueConstraint(fields=["version", "position"], name="chunk_unique_position")
        ]
        indexes = [
            GinIndex(fields=["search_vector"], name="chunk_search_vector"),
            models.Index(fields=["document", "searchable"], name="chunk_document_searchable"),
            models.Index(
                fields=["source", "block_type"],
                name="chunk_searchable_source",
                condition=Q(searchable=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.version} #{self.position}"

    @property
    def heading(self) -> str:
        return " › ".join(self.heading_path)


class ChunkVector(models.Model):
    """A chunk's second vectors: multilingual-e5-small's reading of each of its units (its
    sentences, list items and table rows: ``knowledge.units``), made by a follow-up task once
    the version is searchable on its words and first vector (``knowledge.ingest.second``).

    Search reads them for its candidates (how close the chunk's best sentence is to the
    question), the answer check for whether anything found is close enough to answer, and the
    extractive answer for the sentence to quote. ``units_key`` says which cutting of the text
    they belong to: vectors of another cutting are not read. They live beside the chunk, not
    in its row: adding them later rewrites none of the chunk's indexes.
    """

    chunk = models.OneToOneField(
        Chunk, primary_key=True, on_delete=models.CASCADE, related_name="second_vector"
    )
    model_id = models.CharField(max_length=200)
    cutting = models.PositiveSmallIntegerField(default=1)  # knowledge.units.CUTTING
    units_key = models.CharField(max_length=40)  # SHA-1 of the units' texts, in order
    count = models.PositiveIntegerField(default=0)
    vectors = models.BinaryField()  # float16, count x dimensions, row-major

    def __str__(self) -> str:
        return f"{self.chunk_id} ({self.model_id}, {self.count} units)"
