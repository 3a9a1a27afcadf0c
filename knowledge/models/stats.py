"""The term statistics BM25 reads, kept per source in the transaction that makes chunks
searchable or not: a lexeme's document frequency and the corpus's size and length, over
chunks and over whole documents (document-level BM25's inverted index too)."""

from __future__ import annotations

from django.db import models

from knowledge.models.documents import Document
from knowledge.models.sources import Source


class DocumentTerm(models.Model):
    """How often a lexeme occurs in a document's searchable text: the inverted index of
    document-level BM25 (``knowledge.retrieval.documents``), kept by ``store``."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    lexeme = models.TextField()
    tf = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["lexeme", "document"], name="documentterm_unique")
        ]
        indexes = [models.Index(fields=["document"], name="documentterm_document")]

    def __str__(self) -> str:
        return f"{self.lexeme} x{self.tf}"


class DocumentTermStat(models.Model):
    """How many of one source's searchable documents hold a lexeme: the document frequency of
    document-level BM25, kept with ``knowledge_documentterm`` (``knowledge.documentstats``) so
    that a search reads it in one index lookup instead of counting documents. Per source, like
    ``TermStat``: a search sums the sources its user may read only."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="+")
    lexeme = models.TextField()
    df = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["lexeme", "source"], name="documenttermstat_unique")
        ]

    def __str__(self) -> str:
        return f"{self.lexeme}: {self.df}"


class DocumentCorpusStat(models.Model):
    """One source's searchable documents (those with a full-text vector): their number and
    summed length (document-level BM25's N and avgdl)."""

    source = models.OneToOneField(
        Source, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    documents = models.BigIntegerField(default=0)
    total_length = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.documents} documents"


class TermStat(models.Model):
    """Document frequency of a lexeme over one source's searchable chunks (BM25's IDF).

    PostgreSQL's full-text ranking has no IDF; this table keeps it, updated in the same
    transaction that makes chunks searchable or not (``knowledge.termstats``). Kept per source
    so that a search sums the sources its user may read only: a private document's words must
    not move anyone else's scores.
    """

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="+")
    lexeme = models.TextField()
    df = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["lexeme", "source"], name="termstat_unique_lexeme")
        ]

    def __str__(self) -> str:
        return f"{self.lexeme}: {self.df}"


class CorpusStat(models.Model):
    """One source's searchable chunks: their number and summed length (BM25's avgdl)."""

    source = models.OneToOneField(
        Source, primary_key=True, on_delete=models.CASCADE, related_name="+"
    )
    chunks = models.BigIntegerField(default=0)
    total_length = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.source_id}: {self.chunks} chunks"
