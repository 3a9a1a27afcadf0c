"""A version's sections as the scenarios compare them: requirements and test units.

Reads the parsed blocks stored on the version (``DocumentVersion.parsed``), recovers the
document's own numbering (``scenarios.numbering``), and links every section to the document
viewer at that version and block, the way citations link.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.db import connection
from django.urls import reverse

from knowledge.models import Chunk, Document, DocumentVersion
from knowledge.retrieval import chunk_url
from knowledge.roles import opening
from scenarios import numbering, statements
from scenarios.numbering import Section
from scenarios.parts import REQUIREMENTS_PART, TEST_PART

NOT_REQUIRED = re.compile(
    r"не\s+предъявля|не\s+предусмотрен|not\s+applicable|no\s+requirements?", re.IGNORECASE
)


@dataclass
class Statement:
    """One requirement: a statement of a section (its list item, or the section as a whole)."""

    id: str  # "4.1.1" or "4.1.1-2" (the second statement of 4.1.1)
    section: Section
    item: int | None  # 1-based number among the section's statements; None: the only one
    lead: str  # the lead-in the item follows ("Для водителя")
    text: str
    form: str = "part"  # how it states a requirement (``scenarios.statements``)

    @property
    def body(self) -> str:
        """The statement with its lead-in: what its terms are counted on."""
        return f"{self.lead}: {self.text}" if self.lead else self.text

    @property
    def full_text(self) -> str:
        """With the section's title: what the search is asked."""
        return f"{self.section.title}. {self.body}"

    @property
    def not_required(self) -> bool:
        return bool(NOT_REQUIRED.search(self.text))


@dataclass
class VersionSections:
    """A version and its sections, with the links into the viewer."""

    document: Document
    version: DocumentVersion
    sections: list[Section]
    chunk_blocks: dict[int, int] = field(default_factory=dict)  # chunk id -> its first block
    chunk_ends: dict[int, int] = field(default_factory=dict)  # chunk id -> its last block
    opening: str = ""  # the title page: the text before the first heading

    def url(self, section: Section) -> str:
        """As citations link: the viewer at this version, scrolled to the section's first chunk
        and highlighting it; the version's page when no chunk holds the section."""
        for chunk_id, start in sorted(self.chunk_blocks.items(), key=lambda item: item[1]):
            if start <= section.last_block and self.chunk_ends[chunk_id] >= section.first_block:
                return chunk_url(self.document.pk, self.version.pk, chunk_id)
        return f"{reverse('document', args=[self.document.pk])}?version={self.version.pk}"

    def section_of_chunk(self, chunk_id: int) -> Section | None:
        block = self.chunk_blocks.get(chunk_id)
        return None if block is None else numbering.section_of(self.sections, block)

    def describe(self, section: Section) -> dict[str, object]:
        """The section as a source: document, version, section, link."""
        return {
            "document": self.document.title,
            "document_id": self.document.pk,
            "version": self.version.display_label,
            "version_id": self.version.pk,
            "section": section.number,
            "title": section.title,
            "url": self.url(section),
        }


def ready_version(document: Document) -> DocumentVersion | None:
    """The newest ready version of the document: the one search reads."""
    return document.versions.filter(status=DocumentVersion.Status.READY).order_by("-number").first()


def load(document: Document) -> VersionSections | None:
    """The sections of the document's newest ready version (None when it has none)."""
    version = ready_version(document)
    if version is None or not version.parsed:
        return None
    blocks = version.parsed.get("blocks", [])
    # Row units are search aids over their table's chunks: they are never linked to.
    chunks = list(
        Chunk.objects.filter(version=version)
        .exclude(block_type=Chunk.BlockType.ROW)
        .values_list("pk", "block_start", "block_end")
    )
    return VersionSections(
        document,
        version,
        numbering.sections(blocks),
        {pk: start for pk, start, _ in chunks},
        {pk: end for pk, _, end in chunks},
        opening(blocks),
    )


def test_units(loaded: VersionSections) -> list[Section]:
    """The sections that check things: those under a methods or test part (their own title or a
    parent's says so); every section with a body when the document has no such part."""
    with_body = [s for s in loaded.sections if s.lines]
    inside = [s for s in with_body if any(TEST_PART.search(t) for t in s.path)]
    return inside or with_body


def requirements(loaded: VersionSections) -> list[Statement]:
    """The requirement statements of a requirements document (``scenarios.statements``): every
    statement of its parts titled as requirements ("Требования ...", "... requirements"), and
    elsewhere those whose form states one (an obligation, a list of functions, an acceptance
    criterion, a limit, a purpose, a user story); every statement when no part is titled so."""
    numbered = [s for s in loaded.sections if s.number]
    parts = {s.number for s in numbered if s.level == 1 and REQUIREMENTS_PART.search(s.title)}
    found: list[Statement] = []
    for section in numbered:
        titled = not parts or section.number.split(".")[0] in parts
        kept = []
        for lead, text in numbering.items(section.lines):
            how = statements.form(lead, text, in_requirements_part=titled)
            if how:
                kept.append((lead, text, how))
        if len(kept) == 1:
            lead, text, how = kept[0]
            found.append(Statement(section.number, section, None, lead, text, how))
            continue
        for n, (lead, text, how) in enumerate(kept, start=1):
            found.append(Statement(f"{section.number}-{n}", section, n, lead, text, how))
    return found


def lexemes(texts: list[str], config: str) -> list[set[str]]:
    """The full-text lexemes of each text (the stems the search itself indexes), in one query."""
    if not texts:
        return []
    config = config if config in ("russian", "english", "simple") else "simple"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.n, tsvector_to_array(to_tsvector(%s::regconfig, t.body)) "
            "FROM unnest(%s::text[]) WITH ORDINALITY AS t(body, n)",
            [config, texts],
        )
        rows = dict(cursor.fetchall())
    return [set(rows.get(n) or []) for n in range(1, len(texts) + 1)]
