"""The store stage of the ingest: a version's chunks replaced in one transaction, and which
chunks search sees.

Every chunk row is inserted complete (vectors, full-text column, searchable flag) and never
updated right after: an UPDATE in PostgreSQL writes a new row and a new entry in every index on
it, the HNSW graph included, so filling the full-text column and then the searchable flag after
the insert cost three extra HNSW insertions per chunk, besides the round trips. The full-text
vectors are computed by PostgreSQL (its stemmers) in one query before the transaction.

BM25 statistics (``knowledge.termstats``) change in the same transaction as the searchable
flags, and always while the rows they count still exist.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import PurePosixPath

from django.db import connection, transaction
from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone
from pgvector import SparseVector

from knowledge import documentstats, termstats
from knowledge.chunking import LABELLED_KINDS, ChunkDraft
from knowledge.embedding import Embedder
from knowledge.ingest.names import title_from_path
from knowledge.ingest.synonyms import collect_synonyms
from knowledge.models import Chunk, Document, DocumentVersion
from knowledge.parsing.base import ParsedDocument
from knowledge.roles import read_role
from knowledge.tables import row_labels
from knowledge.text.identifiers import lexical_text
from knowledge.vector_index import ensure_vector_index

Status = DocumentVersion.Status
_INDEXED: set[tuple[str, int]] = set()  # models whose HNSW index this process has ensured


class ClaimLost(Exception):
    """Another run took this version over; this run's work is discarded."""


def search_vectors(
    title: str, language: str, drafts: Sequence[ChunkDraft]
) -> list[tuple[str, int]]:
    """(tsvector text, lexeme count) per draft: heading path weight A, title B, body D, each
    read with its identifiers' parts (``knowledge.text.identifiers``)."""
    if not drafts:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT v::text, length(v) FROM (
                SELECT n, setweight(to_tsvector(%s::regconfig, h), 'A')
                    || setweight(to_tsvector(%s::regconfig, %s), 'B')
                    || setweight(to_tsvector(%s::regconfig, t), 'D') AS v
                FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS u(h, t, n)
            ) AS s ORDER BY n
            """,
            [
                language,
                language,
                lexical_text(title),
                language,
                [lexical_text(" ".join(d.heading_path)) for d in drafts],
                [lexical_text(d.text) for d in drafts],
            ],
        )
        return cursor.fetchall()


def label_lexemes(language: str, texts: Sequence[str]) -> list[list[list[str]]]:
    """For each text, the lexemes of each of its table rows' labels (``knowledge.tables.
    row_labels``) under ``language``: what ``knowledge.retrieval.labels`` compares with a
    question. Labels without a lexeme (a stop word alone) are left out. In a document that is
    not English, a label without Cyrillic letters is a name ("Items", "FavItems", "Link") and is
    read whole (the ``simple`` configuration): stemmed, "Items" would match a question about
    the class "Item"."""
    labelled = [(i, label) for i, text in enumerate(texts) for label in row_labels(text)]
    found: list[list[list[str]]] = [[] for _ in texts]
    if not labelled:
        return found
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tsvector_to_array(to_tsvector((CASE WHEN %s <> 'english' "
            "AND l !~ '[А-Яа-яЁё]' THEN 'simple' ELSE %s END)::regconfig, l)) "
            "FROM unnest(%s::text[]) WITH ORDINALITY AS u(l, n) ORDER BY n",
            [language, language, [label for _, label in labelled]],
        )
        for (i, _), (lexemes,) in zip(labelled, cursor.fetchall(), strict=True):
            if lexemes:
                found[i].append(sorted(lexemes))
    return found


def label_meta(labels: list[list[str]]) -> dict:
    """What a table chunk's ``meta`` keeps of its row labels: each label's lexemes
    (``labels``) and all of them once (``label_words``, which a JSON containment test reads
    without unpacking the labels)."""
    return {"labels": labels, "label_words": sorted({x for label in labels for x in label})}


def _ensure_index(embedder: Embedder) -> None:
    # CREATE INDEX IF NOT EXISTS takes a table lock even when the index exists: once per process.
    key = (embedder.model_id, embedder.dimensions)
    if key not in _INDEXED:
        ensure_vector_index(*key)
        # Remembered once committed: an index created inside a transaction that rolls back
        # (a test's) is gone, and this process must create it again.
        transaction.on_commit(lambda: _INDEXED.add(key))


def forget_index(model_id: str) -> None:
    """The model's index was dropped: ensure it again before storing with that model."""
    for key in [k for k in _INDEXED if k[0] == model_id]:
        _INDEXED.discard(key)


def store_chunks(
    version: DocumentVersion,
    token: str,
    parsed: ParsedDocument,
    drafts: list[ChunkDraft],
    vectors: tuple[list, list, list],
    embedder: Embedder,
    timings: dict[str, float],
) -> None:
    """Replace the version's chunks and make it ready, in one transaction; ClaimLost if the
    version was taken over by another run meanwhile (nothing is written then)."""
    started = time.perf_counter()
    _ensure_index(embedder)
    document = version.document
    lexical = search_vectors(parsed.title or document.title, parsed.language, drafts)
    rows = _rows(version, parsed, drafts, vectors, lexical, embedder)
    role = read_role(
        title=document_title(parsed.title, version.filename, document),
        source_kind=document.source.kind,
        blocks=[block.to_dict() for block in parsed.blocks],
        fmt=parsed.metadata.get("format", ""),
    )
    with transaction.atomic():
        # The document first, then the version: the order every other writer locks them in
        # (registration, version moves and removals), so two of them cannot deadlock.
        newest_ready = DocumentVersion.objects.filter(
            document=OuterRef("pk"), status=Status.READY
        ).exclude(pk=version.pk)
        document = (
            Document.objects.select_for_update()
            .annotate(newest_ready=Subquery(newest_ready.order_by("-number").values("number")[:1]))
            .get(pk=version.document_id)
        )
        locked = (
            DocumentVersion.objects.select_for_update()
            .only("claim_token", "number", "document_id")
            .get(pk=version.pk)
        )
        if locked.claim_token != token:
            raise ClaimLost(version.pk)
        newest = document.newest_ready is None or locked.number > document.newest_ready
        live = newest and document.removed_at is None
        # Off first (their statistics while the rows exist): every searchable chunk of the
        # document when this version takes over, else only this version's own old chunks.
        # One query tells both that and whether this version has old chunks to replace.
        present = Chunk.objects.filter(
            Q(searchable=True) | Q(version_id=locked.pk), document_id=document.pk
        ).values_list("pk", "version_id", "searchable")
        off_ids, replacing = [], False
        for pk, version_id, searchable in present:
            replacing = replacing or version_id == locked.pk
            if searchable and (live or version_id == locked.pk):
                off_ids.append(pk)
        termstats.apply_flip([], off_ids)
        if off_ids and live:
            Chunk.objects.filter(pk__in=off_ids).exclude(version=locked).update(searchable=False)
        if replacing:  # a reindex: the version's old chunks go (a new version has none)
            Chunk.objects.filter(version=locked).delete()
        for row in rows:
            row.searchable = live
        created = Chunk.objects.bulk_create(rows, batch_size=500)
        if live:
            termstats.apply_flip([c.pk for c in created], [])
        now = timezone.now()
        timings["store_s"] = round(time.perf_counter() - started, 3)
        DocumentVersion.objects.filter(pk=locked.pk).update(
            status=Status.READY,
            progress=100,
            stage="",
            error="",
            ready_at=now,
            heartbeat_at=now,
            embedding_model=embedder.model_id,
            chunk_count=len(rows),
            claim_token="",
            claimed_by="",
            timings=timings,
        )
        fields = {"language": parsed.language, "updated_at": now}
        if newest:  # an older version re-ingested later does not rename the document
            fields["current_version"] = locked
            fields["title"] = document_title(parsed.title, version.filename, document)
            fields["detected_role"] = role
        Document.objects.filter(pk=document.pk).update(**fields)
        if live:
            refresh_document_vector(document.pk)
            headings = {" › ".join(d.heading_path) for d in drafts}
            collect_synonyms(document.pk, [parsed.title, *headings, *(d.text for d in drafts)])


def document_title(parsed_title: str, filename: str, document: Document) -> str:
    """The parsed title (document metadata, a Title paragraph, a first heading); when the parser
    fell back to the file name, the name of the document's path instead: a version's file is
    often named after its date or commit ("ПМИ_2021-03-23_9b07e3f.docx"), its path is not."""
    title = (parsed_title or "").strip()
    if not title or title in (PurePosixPath(filename).stem, title_from_path(filename)):
        title = title_from_path(document.path) if document.path else title
    return (title or document.title)[:500]


def _rows(version, parsed, drafts, vectors, lexical, embedder: Embedder) -> list[Chunk]:
    dense, sparse, keys = vectors
    document = version.document
    tables = [i for i, d in enumerate(drafts) if d.block_type in LABELLED_KINDS]
    labels = dict(
        zip(tables, label_lexemes(parsed.language, [drafts[i].text for i in tables]), strict=True)
    )
    return [
        Chunk(
            version_id=version.pk,
            document_id=document.pk,
            source_id=document.source_id,
            position=i,
            text=d.text,
            heading_path=d.heading_path,
            section=d.section,
            sections=d.sections,
            block_type=d.block_type,
            block_start=d.block_start,
            block_end=d.block_end,
            page=d.page,
            sheet=d.sheet,
            row_start=d.row_start,
            row_end=d.row_end,
            meta={**d.meta, **label_meta(labels[i])} if labels.get(i) else d.meta,
            token_count=d.token_count,
            language=parsed.language,
            embedding=dense[i],
            sparse=(
                SparseVector(sparse[i], embedder.sparse_dimensions)
                if sparse[i] and embedder.sparse_dimensions
                else None
            ),
            embedding_model=embedder.model_id,
            embed_key=keys[i],
            search_vector=lexical[i][0],
            lexeme_count=lexical[i][1],
        )
        for i, d in enumerate(drafts)
    ]


def reusable_vectors(
    document_id: int, model_id: str, keys: list[str]
) -> dict[str, tuple[object, dict[int, float] | None]]:
    """Vectors already computed by ``model_id`` for these embedded texts in any version of the
    document: embed key -> (dense, sparse weights or None)."""
    found: dict[str, tuple[object, dict[int, float] | None]] = {}
    rows = (
        Chunk.objects.filter(document_id=document_id, embedding_model=model_id, embed_key__in=keys)
        .exclude(embedding=None)
        .values_list("embed_key", "embedding", "sparse")
    )
    for key, dense, sparse in rows.iterator():
        if key not in found:
            weights = None
            if sparse is not None:
                weights = dict(zip(sparse.indices(), sparse.values(), strict=True))
            found[key] = (dense, weights)
    return found


def refresh_searchable(document_id: int) -> None:
    """Make the newest ready version the only searchable one (call inside a transaction)."""
    document = Document.objects.select_for_update().get(pk=document_id)
    newest = (
        DocumentVersion.objects.filter(document_id=document_id, status=Status.READY)
        .order_by("-number")
        .only("pk")
        .first()
    )
    live = newest is not None and document.removed_at is None
    going_off = Chunk.objects.filter(document_id=document_id, searchable=True)
    if live:
        going_off = going_off.exclude(version=newest)
    off_ids = list(going_off.values_list("pk", flat=True))
    on_ids = (
        list(Chunk.objects.filter(version=newest, searchable=False).values_list("pk", flat=True))
        if live
        else []
    )
    # Statistics first, while the rows still say what they were.
    termstats.apply_flip(on_ids, off_ids)
    Chunk.objects.filter(pk__in=off_ids).update(searchable=False)
    Chunk.objects.filter(pk__in=on_ids).update(searchable=True)
    Document.objects.filter(pk=document_id).update(current_version=newest)
    refresh_document_vector(document_id)


DOCUMENT_TEXT_LIMIT = 1_000_000  # characters of a document's text in its full-text vector


def refresh_document_vector(document_id: int) -> None:
    """The document's full-text vector from its searchable chunks (none: no vector), for
    document-level BM25 (``knowledge.retrieval.documents``)."""
    refresh_document_vectors([document_id])


def refresh_document_vectors(document_ids: list[int] | None = None) -> None:
    """``refresh_document_vector`` for these documents (every document when None), in bulk:
    the full-text vector and the term counts. Row units repeat their table's rows: they are
    left out of the document's text. The document-level statistics follow in the same
    transaction (``knowledge.documentstats``): the documents' old rows are subtracted before
    they go, the new ones added after."""
    only, params = ("AND d2.id = ANY(%s)", [list(document_ids)]) if document_ids else ("", [])
    some, some_params = ("WHERE document_id = ANY(%s)", params) if document_ids else ("", [])
    if document_ids:
        documentstats.subtract(document_ids)
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM knowledge_documentterm {some}", some_params)
        cursor.execute(
            "UPDATE knowledge_document SET search_vector = NULL, lexeme_count = 0 "
            + ("WHERE id = ANY(%s)" if document_ids else ""),
            params,
        )
        # The body part (weight D) of each chunk's vector, in order, up to DOCUMENT_TEXT_LIMIT
        # characters of text: the words the chunks were indexed by (identifiers' parts
        # included), without parsing the document's text a second time.
        cursor.execute(
            f"""
            UPDATE knowledge_document d SET search_vector = s.v, lexeme_count = coalesce(length(s.v), 0)
            FROM (
                SELECT d2.id, setweight(to_tsvector(d2.language::regconfig, d2.title), 'A')
                       || kb_tsvector_agg(ts_filter(c.search_vector, '{{d}}') ORDER BY c.position) AS v
                FROM knowledge_document d2
                JOIN LATERAL (
                    SELECT c.search_vector, c.position,
                           sum(length(c.text)) OVER (ORDER BY c.position) - length(c.text) AS before
                    FROM knowledge_chunk c
                    WHERE c.document_id = d2.id AND c.searchable AND c.block_type <> 'row'
                          AND c.search_vector IS NOT NULL
                ) c ON c.before < %s
                WHERE true {only} GROUP BY d2.id, d2.language, d2.title
            ) s WHERE d.id = s.id
            """,
            [DOCUMENT_TEXT_LIMIT, *params],
        )
        cursor.execute(
            f"""
            INSERT INTO knowledge_documentterm (document_id, lexeme, tf)
            SELECT d2.id, u.lexeme, coalesce(array_length(u.positions, 1), 1)
            FROM knowledge_document d2, unnest(d2.search_vector) u
            WHERE d2.search_vector IS NOT NULL {only}
            """,
            params,
        )
    if document_ids:
        documentstats.add(document_ids)
    else:
        documentstats.rebuild()
