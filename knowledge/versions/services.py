"""Version services: comparisons (cached), their plain-text form for answers, version references
resolved, and "did this section change in the latest version".

The chat pipeline calls these; the version pages use them too. Only ready versions (those with a
parsed document) can be compared.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from functools import cached_property
from threading import Lock
from urllib.parse import urlencode

from django.urls import reverse

from knowledge.models import Document, DocumentVersion, VersionChange
from knowledge.parsing.base import ParsedDocument
from knowledge.question import refs, resolving
from knowledge.versions.diff import DocumentDiff, SectionDiff, compare_documents
from knowledge.versions.excerpts import changes_text
from knowledge.versions.render import ComparisonView, render_comparison
from knowledge.versions.sections import normalise_title
from knowledge.versions.summary import ChangeSummary

ENGINE = 1  # bump when the diff engine's output changes: cached summaries are recomputed
CACHE_SIZE = 16
Status = DocumentVersion.Status


class NotComparable(ValueError):
    """The two versions cannot be compared (another document, or a version not parsed yet)."""


@dataclass
class Comparison:
    """Two versions of one document and the diff between them (old -> new)."""

    old: DocumentVersion
    new: DocumentVersion
    diff: DocumentDiff

    @property
    def document(self) -> Document:
        return self.new.document

    @property
    def summary(self) -> ChangeSummary:
        return self.diff.summary

    @property
    def url(self) -> str:
        """The comparison page (a relative URL)."""
        return compare_url(self.old, self.new)

    @cached_property
    def view(self) -> ComparisonView:
        return render_comparison(self.diff)

    def section(self, path: str | Sequence[str]) -> SectionDiff | None:
        """The compared section a number ("2.1"), title or heading path names (new side first)."""
        return find_section(self.diff, path)


_cache: OrderedDict[tuple, Comparison] = OrderedDict()
_cache_lock = Lock()


def compare_url(old: DocumentVersion, new: DocumentVersion) -> str:
    query = urlencode({"a": old.pk, "b": new.pk})
    return f"{reverse('compare_versions', args=[new.document_id])}?{query}"


def compare(old: DocumentVersion, new: DocumentVersion) -> Comparison:
    """Compare two ready versions of one document, ``old`` -> ``new`` (in the order given).

    Cached in this process by the two versions and their ingest times (a re-ingested version
    is compared afresh); a computed change summary is also stored (``VersionChange``) for the
    history page. Raises ``NotComparable`` for versions of two documents or a version that is
    not ready.
    """
    if old.document_id != new.document_id:
        raise NotComparable("The two versions belong to different documents")
    for version in (old, new):
        if version.status != Status.READY:
            raise NotComparable(f"Version {version.display_label} is not indexed yet")
    key = (old.pk, new.pk, old.ready_at, new.ready_at, ENGINE)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None:
            _cache.move_to_end(key)
            return cached
    parsed_old, parsed_new = _parsed(old), _parsed(new)
    comparison = Comparison(old, new, compare_documents(parsed_old, parsed_new))
    _store_summary(old, new, comparison.summary)
    with _cache_lock:
        _cache[key] = comparison
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return comparison


def _parsed(version: DocumentVersion) -> ParsedDocument:
    data = version.parsed
    if data is None and version.pk:
        data = DocumentVersion.objects.values_list("parsed", flat=True).get(pk=version.pk)
    if not data:
        raise NotComparable(f"Version {version.display_label} is not indexed yet")
    return ParsedDocument.from_dict(data)


def _store_summary(old: DocumentVersion, new: DocumentVersion, summary: ChangeSummary) -> None:
    VersionChange.objects.update_or_create(
        old=old, new=new, defaults={"engine": ENGINE, "summary": summary.to_dict()}
    )


def stored_summary(old: DocumentVersion, new: DocumentVersion) -> ChangeSummary | None:
    """The stored change summary old -> new when it is still fresh (same engine, computed after
    both versions were last ingested), else None."""
    stored = VersionChange.objects.filter(old=old, new=new, engine=ENGINE).first()
    newest_ingest = max(filter(None, [old.ready_at, new.ready_at]), default=None)
    if stored is not None and (newest_ingest is None or stored.computed_at >= newest_ingest):
        return ChangeSummary.from_dict(stored.summary)
    return None


def summary_between(old: DocumentVersion, new: DocumentVersion) -> ChangeSummary | None:
    """The change summary old -> new from the cache table, computed on first use; None when
    either version is not ready."""
    if old.status != Status.READY or new.status != Status.READY:
        return None
    stored = stored_summary(old, new)
    if stored is not None:
        return stored
    try:
        summary = compare(old, new).summary
    except NotComparable:
        return None
    _store_summary(old, new, summary)  # the comparison may have come from this process's cache
    return summary


def changes_as_text(comparison: Comparison, max_chars: int = 6000, language: str = "en") -> str:
    """The comparison as plain text (Markdown): a heading line naming the document, both
    versions and the totals, then one item per changed section (added, removed, changed,
    moved, renamed) with short before/after excerpts of its first changes and table rows.

    Fits in ``max_chars`` (later sections are counted, not listed, when it would not). Usable
    as a source fenced into an LLM prompt and, as it is, as an extractive answer. A comparison
    without text changes says "No text changes".
    """
    return changes_text(
        comparison.diff,
        document=comparison.document.title,
        old_label=_version_name(comparison.old),
        new_label=_version_name(comparison.new),
        url=comparison.url,
        max_chars=max_chars,
        language=language,
    )


def _version_name(version: DocumentVersion) -> str:
    return f"{version.display_label} (#{version.number})"


def resolve_versions(
    document: Document, labels_or_dates: Iterable[str | date]
) -> list[DocumentVersion]:
    """The ready versions of ``document`` that the references name, in the order given.

    A reference is a label ("v2.3", "2021-03-17 5e1f0a9", or a tag of it: "5e1f0a9"), a
    version number ("#3"), a date (a ``date``, "2021-03-17", "17.03.2021", "17 марта 2021",
    "6 March 2021", or "17 марта" without a year), or a relative word: "latest"/"последняя"/
    "current", "previous"/"предыдущая" (the version before the other version named, else
    before the latest), "next"/"следующая" (the one after the other version named),
    "first"/"первая". Dates can tie: of two versions dated 2021-03-17 the
    later in the document's order wins; a date no version carries names the version in force
    then (the latest dated on or before it). References that name nothing are left out, and
    a version named twice is listed once.
    """
    versions = list(
        DocumentVersion.objects.filter(document=document, status=Status.READY)
        .defer("parsed")
        .order_by("number")
    )
    return resolving.resolve([refs.parse_ref(r) for r in labels_or_dates], versions)


def latest_two(document: Document) -> tuple[DocumentVersion, DocumentVersion] | None:
    """The newest ready version and the ready version before it, or None with fewer than two."""
    versions = list(
        DocumentVersion.objects.filter(document=document, status=Status.READY)
        .defer("parsed")
        .order_by("-number")[:2]
    )
    return (versions[1], versions[0]) if len(versions) == 2 else None


def section_changed_in_latest(document: Document, section_path: str | Sequence[str]) -> bool:
    """Did this section change in the newest ready version, against the ready version before it?

    ``section_path`` is a section number ("2.1"), a heading title, or a heading path (a list of
    titles, root first), as the newest version numbers and names it. True when the section was
    added, renamed, moved or changed in any block; False when unchanged, unknown, or when the
    document has only one ready version.
    """
    pair = latest_two(document)
    if pair is None:
        return False
    section = compare(*pair).section(section_path)
    return section is not None and (section.status != "same" or section.moved)


def find_section(diff: DocumentDiff, path: str | Sequence[str]) -> SectionDiff | None:
    """The section a number, a title or a heading path names; the new side is looked at first.

    An empty number or path (what a chunk before the first heading carries) names the preamble.
    """
    if not path or (isinstance(path, str) and not path.strip()):
        return _first(diff, lambda s: s.is_preamble)
    if isinstance(path, str):
        wanted = path.strip()
        if wanted and all(part.isdigit() for part in wanted.rstrip(".").split(".")):
            number = wanted.rstrip(".")
            return _first(diff, lambda s: s.number == number)
        titles: tuple[str, ...] = (normalise_title(wanted),)
    else:
        titles = tuple(normalise_title(p) for p in path if p)
    if not titles:
        return None
    return _first(diff, lambda s: s.key_path[-len(titles) :] == titles) or _first(
        diff, lambda s: s.key_title == titles[-1]
    )


def _first(diff: DocumentDiff, test) -> SectionDiff | None:
    for side in ("new", "old"):
        for section in diff.sections:
            candidate = getattr(section, side)
            if candidate is not None and test(candidate):
                return section
    return None
