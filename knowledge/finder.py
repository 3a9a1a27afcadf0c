"""Which document a question names, among documents: the one finder the version answers and the
search share. It is given how the question names documents (the reading's ``DocumentNames``:
``knowledge.question.documents``, which also says which candidate fits), and reads the
documents' names from the database: titles, paths, aliases, the openings of current versions."""

from __future__ import annotations

import json
from collections import OrderedDict
from threading import Lock

from django.db import connection
from django.db.models import CharField, Func, Q, QuerySet, Value
from django.db.models.functions import Concat, Lower

from knowledge.models import Document
from knowledge.question import documents as naming

OPENING_BLOCKS = 30
OPENING_CHARS = 4000


def find_document(
    names: naming.DocumentNames, documents: QuerySet[Document], *, outright: bool = False
) -> Document | None:
    """The one document a question names among ``documents`` (the live ones of them); None
    when none fits clearly (or two fit equally well). Both ways start from an alias staff gave
    a document (used as a word of the question) and from how the reading found the question
    names documents (``names``: ``Question.documents``, read once per turn).

    A question about versions needs a document: the best fit of the question's words to each
    document's title, path and the opening of its current version (a title page or an
    introduction), GOST abbreviations counting as their words ("ПМИ" = "программа и методика
    испытаний"): "Что изменилось в программе и методике испытаний…" names the ПМИ.
    ``outright`` (the search narrowing to one document): only a document named outright, by
    an alias or a type abbreviation ("по ТЗ", "в ПЗ", "по техзаданию"), the best by its title
    among those of that type; a question that only talks about a topic names none.
    """
    documents = documents.live()
    if outright:
        return _named_outright(names, documents)
    rows = list(
        documents.filter(Q(current_version__isnull=False) | Q(versions__isnull=False))
        .distinct()
        .values("pk", "title", "path", "aliases", "current_version_id", "current_version__ready_at")
    )
    aliased = naming.aliased(names, [(r["pk"], r["aliases"]) for r in rows])
    if aliased is not None:
        return Document.objects.filter(pk=aliased).first()
    key = naming.best_candidate(names, _name_candidates(rows))
    return Document.objects.filter(pk=key).first() if key is not None else None


_candidates: OrderedDict[tuple, naming.Candidate] = OrderedDict()
_candidates_lock = Lock()
CANDIDATES_CACHED = 100_000


def _name_candidates(rows: list[dict]) -> list[naming.Candidate]:
    """The documents as ``naming`` compares them, cached in this process by what they are made
    of (title, path, aliases, current version and its ingest time): the openings of every
    current version and their stems took a second or more per question over a few hundred
    documents; now only new or re-ingested ones are read."""
    keys = [
        (
            r["pk"],
            r["title"],
            r["path"],
            r["aliases"],
            r["current_version_id"],
            r["current_version__ready_at"],
        )
        for r in rows
    ]
    with _candidates_lock:
        known = {key: _candidates[key] for key in keys if key in _candidates}
    missing = [key for key in keys if key not in known]
    openings = _openings([key[4] for key in missing if key[4]])
    for key in missing:
        pk, title, path, aliases, version_id, _ready = key
        candidate = naming.Candidate(pk, f"{title} {path} {aliases}", openings.get(version_id, ""))
        candidate.names()  # the stems, computed once
        known[key] = candidate
    with _candidates_lock:
        for key in missing:
            _candidates[key] = known[key]
        while len(_candidates) > CANDIDATES_CACHED:
            _candidates.popitem(last=False)
    return [known[key] for key in keys]


def _named_outright(names: naming.DocumentNames, documents: QuerySet[Document]) -> Document | None:
    """``find_document`` of a document named outright (see there)."""
    rows = documents.exclude(aliases="").values_list("pk", "aliases")
    aliased = naming.aliased(names, rows)
    if aliased is not None:
        return Document.objects.filter(pk=aliased).first()
    if not names.outright:
        return None
    current = documents.filter(current_version__isnull=False)
    patterns = naming.name_patterns(names)
    if patterns is not None:
        name = Func(
            Lower(Concat("title", Value(" "), "path", Value(" "), "aliases")),
            Value("ё"),
            Value("е"),
            function="translate",
            output_field=CharField(),
        )
        matching = Q()
        for pattern in patterns:
            matching |= Q(name_text__contains=pattern)
        current = current.alias(name_text=name).filter(matching)
    candidates = [
        naming.Candidate(pk, f"{title} {path} {aliases}", "")
        for pk, title, path, aliases in current.values_list("pk", "title", "path", "aliases")
    ]
    named = naming.named_by_abbreviation(names, candidates)
    if len(named) == 1:
        return Document.objects.filter(pk=named[0].key).first()
    key = naming.best_candidate(names, named) if named else None
    return Document.objects.filter(pk=key).first() if key is not None else None


def _openings(version_ids: list[int]) -> dict[int, str]:
    """The text of the first blocks of each version, read inside PostgreSQL (not whole
    documents)."""
    if not version_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, jsonb_path_query_array(parsed, %s) FROM knowledge_documentversion "
            "WHERE id = ANY(%s) AND parsed IS NOT NULL",
            [f"$.blocks[0 to {OPENING_BLOCKS - 1}].text", version_ids],
        )
        rows = cursor.fetchall()
    # Django reads jsonb as text (its JSONField decodes it); this raw query does the same.
    texts = {pk: json.loads(raw) if isinstance(raw, str) else raw for pk, raw in rows}
    return {
        pk: " ".join(t for t in (found or []) if isinstance(t, str))[:OPENING_CHARS]
        for pk, found in texts.items()
    }
