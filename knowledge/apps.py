from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    verbose_name = _("Knowledge base")

    def ready(self) -> None:
        from django.db.models.signals import pre_delete

        from knowledge.models import Document
        from knowledge.retrieval.weights import weights

        pre_delete.connect(_document_deleted, sender=Document, dispatch_uid="documentstats")
        # The ranking's weights are read from the environment now, so that a bad value stops
        # the process at start with one line, as a bad setting does.
        weights()


def _document_deleted(sender, instance, **kwargs) -> None:
    """A document deleted outright (admin, its source's deletion) leaves the BM25 statistics
    while its term rows and searchable chunks still exist: the document-level ones and the
    chunk-level ones (``knowledge.termstats``)."""
    from knowledge import documentstats, termstats
    from knowledge.models import Chunk

    documentstats.subtract([instance.pk])
    searchable = Chunk.objects.filter(document_id=instance.pk, searchable=True)
    termstats.apply_flip([], list(searchable.values_list("pk", flat=True)))
