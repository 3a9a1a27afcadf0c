"""Version-aware answers: "what changed between the versions of 6 and 17 March?" is answered
from the computed diff, citing both versions and linking to the comparison page; a question
naming one older version is answered from that version."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.urls import reverse

from chat.answer import wording
from chat.answer.prompting import PromptSource
from knowledge.finder import find_document
from knowledge.models import Document, DocumentVersion
from knowledge.question import Question, mentions, refs, resolving
from knowledge.versions.services import (
    Comparison,
    NotComparable,
    changes_as_text,
    compare,
    latest_two,
)


@dataclass
class VersionIntent:
    document: Document
    comparison: Comparison | None = None  # a "what changed" question
    version: DocumentVersion | None = None  # one named (older) version to answer from
    missing: list[str] = field(default_factory=list)  # references that name no version
    several: list[str] = field(default_factory=list)  # references that name several equally
    available: list[DocumentVersion] = field(default_factory=list)
    candidates: list[DocumentVersion] = field(default_factory=list)  # what they could mean


def detect(reading: Question, user) -> VersionIntent | None:
    """A version question (its reading) about a document the user may read, or None.

    Only the versions the question names are ever compared: a reference that names no
    version of the document, or several equally, gives an intent with ``missing`` or
    ``several`` (answered with the versions it could mean as tiles), never a diff of two
    other versions.
    """
    found = list(reading.versions)
    # Two versions named ("between the 2022-02-08 and the 2022-02-21 versions") ask what
    # changed from one to the other, whatever verb the question uses.
    wants_changes = reading.asks_changes or len({m.ref for m in found}) >= 2
    if not found and not wants_changes:
        return None
    document = _document(reading, found, user)
    if document is None:
        return None
    versions = _ready_versions(document)
    resolved = resolving.resolve_each([m.ref for m in found], versions, exact=wants_changes)
    unresolved = [(m, r) for m, r in zip(found, resolved, strict=True) if r.version is None]
    if unresolved and (wants_changes or reading.names_version):
        return _unresolved(document, versions, unresolved)
    if unresolved:  # a date that is a time, not a version ("on 1 March 2018"): left out
        found = [m for m, r in zip(found, resolved, strict=True) if r.version is not None]
        resolved = resolving.resolve_each([m.ref for m in found], versions, exact=wants_changes)
    chosen = list(dict.fromkeys(r.version for r in resolved if r.version is not None))
    try:
        if wants_changes:
            pair = _pair(document, chosen)
            return VersionIntent(document, comparison=compare(*pair)) if pair else None
    except NotComparable:
        return None
    if len(chosen) == 1 and chosen[0].pk != document.current_version_id:
        return VersionIntent(document, version=chosen[0])
    return None


def _unresolved(document: Document, versions: list[DocumentVersion], unresolved) -> VersionIntent:
    candidates = [v for _, r in unresolved for v in r.candidates]
    return VersionIntent(
        document,
        missing=[m.text or _describe(m.ref) for m, r in unresolved if not r.several],
        several=[m.text or _describe(m.ref) for m, r in unresolved if r.several],
        available=versions,
        candidates=list(dict.fromkeys(candidates)),
    )


def _ready_versions(document: Document) -> list[DocumentVersion]:
    return list(
        DocumentVersion.objects.filter(document=document, status=DocumentVersion.Status.READY)
        .defer("parsed")
        .order_by("number")
    )


def _document(reading: Question, found: list[mentions.Mention], user) -> Document | None:
    """The document asked about: the one the question names; but when the versions it names
    (shas, labels, days) are all versions of one other document, and none of the named one's,
    that other document ("the conditions of the licence between 8 November 2022 and ...")."""
    named = find_document(reading.documents, Document.objects.visible_to(user))
    absolute = [m.ref for m in found if m.ref.label or m.ref.day]
    if not absolute:
        return named
    if named is not None and any(_carries(v, absolute) for v in _ready_versions(named)):
        return named
    return _document_of_refs(absolute, user) or named


def _carries(version: DocumentVersion, wanted: list[refs.VersionRef]) -> bool:
    return any(
        (ref.label and refs.label_matches(version.label, ref.label))
        or (ref.day is not None and version.label_date == ref.day)
        for ref in wanted
    )


def _document_of_refs(wanted: list[refs.VersionRef], user) -> Document | None:
    """The one document whose versions carry every sha, label and day named, if only one does."""
    documents = Document.objects.visible_to(user).live()
    carried: dict[int, set[int]] = {}
    rows = DocumentVersion.objects.filter(
        document__in=documents, status=DocumentVersion.Status.READY
    ).only("label", "label_date", "document_id")
    for version in rows:
        for index, ref in enumerate(wanted):
            if _carries(version, [ref]):
                carried.setdefault(version.document_id, set()).add(index)
    candidates = [pk for pk, hit in carried.items() if len(hit) == len(wanted)]
    return Document.objects.get(pk=candidates[0]) if len(candidates) == 1 else None


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


def resolution(comparison: Comparison, language: str = "en") -> str:
    """ "Сравниваю вторую версию от 09.11.2021 (5c0ffee) и …": which two versions a diff answer
    compares, named by their day and place in it, so a reader sees which pair was taken."""
    versions = _ready_versions(comparison.document)

    def named(version: DocumentVersion) -> tuple[resolving.Place, str]:
        return resolving.place(version, versions), version.display_label

    return wording.compared(language, named(comparison.old), named(comparison.new))


def diff_text(comparison: Comparison, language: str = "en") -> str:
    return changes_as_text(comparison, max_chars=6000, language=language)


def diff_sources(comparison: Comparison, language: str = "en") -> list:
    """The numbered sources of a diff answer: the comparison, then both versions."""
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
            quote=wording.say("version", language, label=version.display_label),
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
            heading=wording.say("comparison", language),
            section="",
            url=comparison.url,
            text=text,
            quote=first_lines[:280],
            score=1.0,
        ),
        version_source(2, old),
        version_source(3, new),
    ]
