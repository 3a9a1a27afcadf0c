"""Versions and documents named in a question ("в версии 2.3", "от 6 марта 2021", "по ТЗ")
-> a version or document filter."""

from __future__ import annotations

from dataclasses import replace

from django.db.models import Q

from knowledge.finder import find_document
from knowledge.models import Document, DocumentVersion
from knowledge.question.documents import DocumentNames
from knowledge.retrieval.router import Routed
from knowledge.retrieval.types import Filters


def named_versions(routed: Routed, visible_source_ids: list[int] | None) -> list[DocumentVersion]:
    """Ready versions whose label or date the question names (any document the user may read)."""
    if not routed.dates and not routed.version_labels:
        return []
    match = Q()
    for day in routed.dates:
        match |= Q(label_date=day)
    for label in routed.version_labels:
        # "2.3" names "v2.3"; a commit sha names the version labelled "<date> <sha>".
        match |= Q(label__iexact=f"v{label}") | Q(label__iexact=label)
        match |= Q(label__iendswith=f" {label}")
    versions = DocumentVersion.objects.filter(match, status=DocumentVersion.Status.READY)
    if visible_source_ids is not None:
        versions = versions.filter(document__source_id__in=visible_source_ids)
    return list(versions.select_related("document").order_by("document_id", "number"))


def resolve_version_filter(
    routed: Routed, filters: Filters, visible_source_ids: list[int] | None
) -> Filters:
    """One named version (or date) restricts the search to it; two or more are a comparison,
    which the answer layer handles from the diff, so the search is left alone."""
    if filters.version_ids:
        return filters
    named = len(routed.dates) + len(routed.version_labels)
    if named != 1:
        return filters
    versions = named_versions(routed, visible_source_ids)
    if not versions:
        return filters
    # Two versions of one document can share a date: the later one is "the version of" that day.
    latest_per_document: dict[int, DocumentVersion] = {}
    for version in versions:
        latest_per_document[version.document_id] = version
    return replace(filters, version_ids=[v.pk for v in latest_per_document.values()])


def resolve_document_filter(
    names: DocumentNames, filters: Filters, visible_source_ids: list[int] | None
) -> tuple[Filters, bool]:
    """A question that names one document outright ("по техзаданию", "в ПЗ", an alias staff
    gave the document; ``names``: how its reading found it names documents) is searched in that document, among the sources the search may see;
    returns the filters and whether a document was named. Filters that already name a
    document or a version are left alone."""
    if filters.document_ids or filters.version_ids:
        return filters, False
    documents = Document.objects.all()
    if visible_source_ids is not None:
        documents = documents.filter(source_id__in=visible_source_ids)
    if filters.source_ids:
        documents = documents.filter(source_id__in=filters.source_ids)
    document = find_document(names, documents, outright=True)
    if document is None:
        return filters, False
    return replace(filters, document_ids=[document.pk]), True
