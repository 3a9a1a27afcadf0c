"""Version-aware answers: "what changed between the versions of 4 and 14 May?" is answered
from the computed diff, citing both versions and linking to the comparison page; a question
naming one older version is answered from that version."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from knowledge.models import Document, DocumentVersion
from knowledge.versions import mentions, refs
from knowledge.versions.services import (
    Comparison,
    NotComparable,
    changes_as_text,
    compare,
    find_document,
    latest_two,
)

_CHANGE = re.compile(
    r"(изменил|изменени|разниц|различ|отлич|нового|поменял|правк|добавил|удалил|сравн|"
    r"changed|changes|difference|differ|compare|what'?s new|what is new|added|removed)",
    re.IGNORECASE,
)


_NAMES_VERSION = re.compile(r"верси|редакц|коммит|version|revision|commit", re.IGNORECASE)


@dataclass
class VersionIntent:
    document: Document
    comparison: Comparison | None = None  # a "what changed" question
    version: DocumentVersion | None = None  # one named (older) version to answer from
    missing: list[str] = field(default_factory=list)  # references that name no version
    available: list[DocumentVersion] = field(default_factory=list)


def detect(question: str, user) -> VersionIntent | None:
    """A version question about a document the user may read, or None.

    Only the versions the question names are ever compared: a reference that names no
    version of the document gives an intent with ``missing`` (answered "no such version"
    with the versions that exist), never a diff of two other versions.
    """
    found = mentions.find_refs(question)
    wants_changes = bool(_CHANGE.search(question))
    if not found and not wants_changes:
        return None
    document = find_document(question, user) or _document_of_labels(found, user)
    if document is None:
        return None
    versions = _ready_versions(document)
    named = [refs.resolve([m.ref], versions) for m in found]
    missing = [m.text or _describe(m.ref) for m, hit in zip(found, named, strict=True) if not hit]
    if missing and (wants_changes or _NAMES_VERSION.search(question)):
        return VersionIntent(document, missing=missing, available=versions)
    found = [m for m, hit in zip(found, named, strict=True) if hit]
    chosen = refs.resolve([m.ref for m in found], versions) if found else []
    try:
        if wants_changes:
            pair = _pair(document, chosen)
            return VersionIntent(document, comparison=compare(*pair)) if pair else None
    except NotComparable:
        return None
    if len(chosen) == 1 and chosen[0].pk != document.current_version_id:
        return VersionIntent(document, version=chosen[0])
    return None


def _ready_versions(document: Document) -> list[DocumentVersion]:
    return list(
        DocumentVersion.objects.filter(document=document, status=DocumentVersion.Status.READY)
        .defer("parsed")
        .order_by("number")
    )


def _document_of_labels(found: list[mentions.Mention], user) -> Document | None:
    """The document whose versions carry the shas or labels named, when no title is named."""
    labels = [m.ref.label for m in found if m.ref.label]
    if not labels:
        return None
    documents = Document.objects.visible_to(user).live()
    candidates = {
        v.document_id
        for v in DocumentVersion.objects.filter(document__in=documents).only("label", "document_id")
        if any(refs.label_matches(v.label, wanted) for wanted in labels)
    }
    return Document.objects.get(pk=candidates.pop()) if len(candidates) == 1 else None


def _describe(ref: refs.VersionRef) -> str:
    if ref.day:
        return ref.day.isoformat()
    return ref.label or ref.relative or (f"#{ref.number}" if ref.number else "?")


def _pair(
    document: Document, versions: list[DocumentVersion]
) -> tuple[DocumentVersion, DocumentVersion] | None:
    if len(versions) >= 2:
        older, newer = sorted(versions[:2], key=lambda v: v.number)
        return older, newer
    if len(versions) == 1:
        earlier = (
            DocumentVersion.objects.filter(
                document=document,
                status=DocumentVersion.Status.READY,
                number__lt=versions[0].number,
            )
            .order_by("-number")
            .first()
        )
        return (earlier, versions[0]) if earlier else None
    return latest_two(document)


def diff_text(comparison: Comparison, language: str = "en") -> str:
    return changes_as_text(comparison, max_chars=6000, language=language)


def diff_sources(comparison: Comparison, language: str = "en") -> list:
    """The numbered sources of a diff answer: the comparison, then both versions."""
    from django.urls import reverse

    from chat.prompting import PromptSource

    document = comparison.document
    text = diff_text(comparison, language)
    viewer = reverse("document", args=[document.pk])
    old, new = comparison.old, comparison.new

    def version_source(number: int, version: DocumentVersion) -> PromptSource:
        return PromptSource(
            number=number,
            chunk_id=None,
            document_id=document.pk,
            version_id=version.pk,
            title=document.title,
            version_label=version.display_label,
            heading="",
            section="",
            url=f"{viewer}?version={version.pk}",
            text="",
            quote=("Версия " if language == "ru" else "Version ") + version.display_label,
            score=1.0,
        )

    first_lines = " ".join(text.splitlines()[:3])
    return [
        PromptSource(
            number=1,
            chunk_id=None,
            document_id=document.pk,
            version_id=new.pk,
            title=document.title,
            version_label=f"{old.display_label} → {new.display_label}",
            heading="Сравнение версий" if language == "ru" else "Comparison of versions",
            section="",
            url=comparison.url,
            text=text,
            quote=first_lines[:280],
            score=1.0,
        ),
        version_source(2, old),
        version_source(3, new),
    ]
