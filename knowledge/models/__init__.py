"""Sources, documents, versions and chunks: the knowledge base.

Source -> Document (stable identity: a path or external id inside the source) -> DocumentVersion
(the bytes of one upload, deduplicated by sha256, with status and progress) -> Chunk (a piece
of the parsed text with its heading path, section number, block type and vectors). Only the
newest ready version of each document is searched (``Chunk.searchable``) unless a question or
filter names another version.

Split by domain, one module each: ``sources``, ``documents`` (documents, their versions, the
change summaries and staff actions on them, synonyms), ``chunks`` and ``stats`` (what BM25
reads); every model is imported from here.
"""

from __future__ import annotations

from knowledge.models.chunks import Chunk, ChunkVector
from knowledge.models.documents import (
    Document,
    DocumentVersion,
    Synonym,
    VersionChange,
    VersionEvent,
)
from knowledge.models.sources import Source, redact_url
from knowledge.models.stats import (
    CorpusStat,
    DocumentCorpusStat,
    DocumentTerm,
    DocumentTermStat,
    TermStat,
)

__all__ = [
    "Chunk", "ChunkVector", "CorpusStat", "Document", "DocumentCorpusStat", "DocumentTerm",
    "DocumentTermStat", "DocumentVersion", "Source", "Synonym", "TermStat", "VersionChange",
    "VersionEvent", "redact_url",
]  # fmt: skip
