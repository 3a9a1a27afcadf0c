"""Version-aware answers: "what changed between the versions of 4 and 14 May?" is answered
from the computed diff, citing both versions and linking to the comparison page; a question
naming one older version is answered from that version."""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowledge.models import Document, DocumentVersion
from knowledge.retrieval.router import _VERSION_LABEL, read_dates
from knowledge.versions.services import (
    Comparison,
    NotComparable,
    changes_as_text,
    compare,
    find_document,
    latest_two,
    resolve_versions,
)

_CHANGE = re.compile(
    r"(изменил|изменени|разниц|отлич|нового|поменял|добавил|удалил|сравн|changed|changes|"
    r"difference|differ|compare|what'?s new|what is new|added|removed)",
    re.IGNORECASE,
)
_RELATIVE = [
    (re.compile(r"\b(предыдущ\w*|прошл\w*|previous|prior)\b", re.I), "previous"),
    (
        re.compile(
            r"\b(последн\w*|текущ\w*|актуальн\w*|свеж\w*|latest|last|current|newest)\b", re.I
        ),
        "latest",
    ),
    (re.compile(r"\b(перв\w* верси\w*|first version|original)\b", re.I), "first"),
]


@dataclass
class VersionIntent:
    document: Document
    comparison: Comparison | None = None  # a "what changed" question
    version: DocumentVersion | None = None  # one named (older) version to answer from


def version_references(question: str) -> list[str]:
    """Version references in the order they appear: dates, labels, relative words."""
    found: list[tuple[int, str]] = []
    for day in read_dates(question):
        found.append((question.find(str(day.day)), day.isoformat()))
    for match in _VERSION_LABEL.finditer(question):
        found.append((match.start(), f"v{match.group(1)}"))
    for pattern, word in _RELATIVE:
        for match in pattern.finditer(question):
            found.append((match.start(), word))
    return [ref for _, ref in sorted(found, key=lambda item: item[0])]


def detect(question: str, user) -> VersionIntent | None:
    """A version question about a document the user may read, or None."""
    references = version_references(question)
    wants_changes = bool(_CHANGE.search(question))
    if not references and not wants_changes:
        return None
    document = find_document(question, user)
    if document is None:
        return None
    versions = resolve_versions(document, references) if references else []
    try:
        if wants_changes:
            pair = _pair(document, versions)
            return VersionIntent(document, comparison=compare(*pair)) if pair else None
    except NotComparable:
        return None
    if len(versions) == 1 and versions[0].pk != document.current_version_id:
        return VersionIntent(document, version=versions[0])
    return None


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


def diff_text(comparison: Comparison) -> str:
    return changes_as_text(comparison, max_chars=6000)


def diff_sources(comparison: Comparison) -> list:
    """The numbered sources of a diff answer: the comparison, then both versions."""
    from django.urls import reverse

    from chat.prompting import PromptSource

    document = comparison.document
    text = diff_text(comparison)
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
            quote=f"Версия {version.display_label}",
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
            heading="Сравнение версий",
            section="",
            url=comparison.url,
            text=text,
            quote=first_lines[:280],
            score=1.0,
        ),
        version_source(2, old),
        version_source(3, new),
    ]
