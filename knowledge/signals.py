"""A document deleted outright keeps the BM25 statistics in step (connected when the app is ready)."""

from __future__ import annotations

from django.db.models.signals import pre_delete
from django.dispatch import receiver

from knowledge import documentstats, termstats
from knowledge.models import Chunk, Document


@receiver(pre_delete, sender=Document, dispatch_uid="documentstats")
def _document_deleted(sender, instance: Document, **kwargs) -> None:
    """A document deleted outright (admin, its source's deletion) leaves the BM25 statistics
    while its term rows and searchable chunks still exist: the document-level ones and the
    chunk-level ones (``knowledge.termstats``)."""
    documentstats.subtract([instance.pk])
    searchable = Chunk.objects.filter(document_id=instance.pk, searchable=True)
    termstats.apply_flip([], list(searchable.values_list("pk", flat=True)))
