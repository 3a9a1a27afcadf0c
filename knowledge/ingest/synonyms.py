"""A document's synonyms kept as it becomes searchable: the pairs its text names
(``knowledge.synonyms.read_pairs``) replace the ones it had, in both directions."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from knowledge.models import Synonym
from knowledge.synonyms import key, read_pairs


def collect_synonyms(document_id: int, texts: Iterable[str]) -> int:
    """Replace the synonyms read from this document; returns how many pairs it has."""
    pairs: set[tuple[str, str]] = set()
    for text in texts:
        pairs |= read_pairs(text)
    rows = [Synonym(term=key(a), equivalent=b, document_id=document_id) for a, b in pairs]
    rows += [Synonym(term=key(b), equivalent=a, document_id=document_id) for a, b in pairs]
    with transaction.atomic():
        Synonym.objects.filter(document_id=document_id).delete()
        Synonym.objects.bulk_create(rows, ignore_conflicts=True)
    return len(pairs)
