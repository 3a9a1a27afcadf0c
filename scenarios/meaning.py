"""The change and the documents in e5's space: which sentence of a requirement or a test says
what a statement of the change says, in its own words.

- **The documents' side** is what the portal already keeps: the second vectors of every
  sentence, list item and table row of every chunk (``knowledge.ingest.second``), read once per
  set of versions and matched to the requirement statements and test sections by their text (a
  statement is one unit or several: its sentences; a test section, all of its lines). A
  statement no chunk holds as a unit (a paragraph styled as a heading is in a chunk's heading
  path, not its text) is read here once, as the second vectors are read.
- **The change's side**: its statements (sentences and list items, cut as the units are), each
  embedded with e5's query side when the map is built (one call per statement, kept per text),
  with the phrase an abbreviation stands for written beside it when a document defines it
  (``scenarios.abbreviations``: e5 knows "система быстрых платежей" better than "СБП").

A **tie** is a change statement and the document's sentence closest to it, with their
closeness (the cosine). e5's cosines sit in a narrow band that moves with a text's length and
style, so each change statement is read against its own background: its ``lift`` over a unit
is how far the closeness stands above the median of its closeness to every unit of the product,
over the span to its best one (1: the closest sentence of all the documents). A tie counts
when its closeness is at least ``MIN_CLOSENESS`` and its lift at least ``MIN_LIFT``. Each
statement's closest sentence that names a requirement by itself (a requirement's, a test
method's; not a restated requirement's or the test environment's) is kept too (``closest``):
what the statement names when none of its words does (``scenarios.relevance``). Without second
vectors (turned off, not made yet, the embeddings server down) there are no ties and the map
reads words alone.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from knowledge.embedding import SECOND_MODEL_ID, EmbeddingUnavailable, get_second_embedder
from knowledge.ingest.second import stored_vectors
from knowledge.models import Chunk, ChunkVector
from knowledge.units import CUTTING, quotable, split_sentences, units
from scenarios.abbreviations import Abbreviation
from scenarios.corpus import Corpus
from scenarios.terms import said

MIN_CLOSENESS = 0.84  # cosine: below it e5 says little of two sentences
MIN_LIFT = 0.5  # of the span from the change statement's median closeness to its best one
MAX_STATEMENTS = 12  # of a change: its first ones (a long description is cut, not slowed)
_CACHED = 8
_cache: OrderedDict[tuple, Space] = OrderedDict()
_lock = threading.Lock()
_TRAILING = re.compile(r"[\s.;:,]+$")
_MARKER = re.compile(r"^\s*(?:[-–—•*]|\d{1,3}[.)])\s+")  # a list item's, not shown in a tie


def key(text: str) -> str:
    """How a sentence of a section and a unit of a chunk are found to be the same."""
    return _TRAILING.sub("", " ".join(text.split())).casefold()


@dataclass(frozen=True)
class Tie:
    """A change statement and the document's sentence closest to it."""

    change: str
    sentence: str
    closeness: float  # cosine in e5's space
    lift: float  # 0-1: over the change statement's background (see the module doc)


@dataclass
class Space:
    """The product's requirement statements and test sections in e5's space: every unit's
    vector (rows of ``vectors``), who it belongs to and its text."""

    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    owners: list[tuple[str, int]] = field(default_factory=list)  # ("requirement"|"test", index)
    texts: list[str] = field(default_factory=list)
    # Rows that name a requirement by themselves: a requirement's sentence, a test method's (a
    # restated requirement or the test environment says nothing of its own).
    naming: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def __bool__(self) -> bool:
        return bool(self.owners)


@dataclass
class Meanings:
    """The ties of a change: each requirement statement's and test section's best one."""

    statements: list[str] = field(default_factory=list)
    requirements: dict[int, Tie] = field(default_factory=dict)
    tests: dict[int, Tie] = field(default_factory=dict)
    # statement -> its closest requirement statement or test method ("requirement" | "test",
    # index, the tie): what it names, when no word of it does
    closest: dict[str, tuple[str, int, Tie]] = field(default_factory=dict)


def _unit_vectors(version_ids: list[int]) -> dict[str, np.ndarray]:
    """Each unit of these versions' chunks (sentence, item, row) by its text: its vector."""
    chunks = list(
        Chunk.objects.filter(version_id__in=version_ids, searchable=True)
        .exclude(block_type=Chunk.BlockType.ROW)
        .values_list("pk", "text")
    )
    stored = stored_vectors([pk for pk, _ in chunks])
    found: dict[str, np.ndarray] = {}
    for pk, text in chunks:
        vectors = stored.get(pk)
        if vectors is None:
            continue
        for unit, vector in zip(units(text), vectors, strict=False):
            if quotable(unit) and vector.any():
                found.setdefault(key(unit.row if unit.table else unit.text), vector)
    return found


def _sentences(lines: list[str]) -> list[str]:
    return [
        s for line in lines for s in ([line] if line.startswith("|") else split_sentences(line))
    ]


def _space(corpus: Corpus) -> Space:
    versions = {r.loaded.version.pk for r in corpus.requirements}
    versions |= {t.loaded.version.pk for t in corpus.tests}
    by_text = _unit_vectors(sorted(versions))
    space, rows, missing = Space(), [], []
    owned = [("requirement", i, [r.statement.lead, r.statement.text])
             for i, r in enumerate(corpus.requirements)]  # fmt: skip
    owned += [("test", j, t.section.lines) for j, t in enumerate(corpus.tests)]
    for kind, index, lines in owned:
        for sentence in _sentences([line for line in lines if line]):
            vector = by_text.get(key(sentence))
            if vector is not None:
                rows.append(vector)
                space.owners.append((kind, index))
                space.texts.append(_MARKER.sub("", sentence))
            elif kind == "requirement":
                missing.append((kind, index, sentence))
    rows += _embedded(missing, space)
    if rows:
        space.vectors = np.vstack(rows).astype(np.float32)
    space.naming = np.array(
        [kind == "requirement" or corpus.tests[i].kind == "method" for kind, i in space.owners],
        dtype=bool,
    )
    return space


def _embedded(missing: list[tuple[str, int, str]], space: Space) -> list[np.ndarray]:
    """Vectors of the statements no chunk holds as a unit (a paragraph styled as a heading is
    in a chunk's heading path, not its text), made here, once per set of versions, as the
    second vectors are made (e5's passage side); none when e5 is off or unreachable."""
    embedder = get_second_embedder() if missing and space.owners else None
    if embedder is None:
        return []
    try:
        vectors = embedder.embed_documents([text for _, _, text in missing]).dense
    except EmbeddingUnavailable:
        return []
    for kind, index, text in missing:
        space.owners.append((kind, index))
        space.texts.append(text)
    return list(vectors)


def space_for(corpus: Corpus) -> Space:
    """The corpus's units in e5's space, kept per set of versions and of vectors made (they
    are made in the background after a version is ready: a map built before has fewer)."""
    versions = sorted({r.loaded.version.pk for r in corpus.requirements}
                      | {t.loaded.version.pk for t in corpus.tests})  # fmt: skip
    made = ChunkVector.objects.filter(
        chunk__version_id__in=versions, model_id=SECOND_MODEL_ID, cutting=CUTTING
    ).count()
    cache_key = (tuple(versions), made, id(corpus))
    with _lock:
        if cache_key in _cache:
            _cache.move_to_end(cache_key)
            return _cache[cache_key]
    built = _space(corpus)
    with _lock:
        _cache[cache_key] = built
        while len(_cache) > _CACHED:
            _cache.popitem(last=False)
    return built


def change_statements(description: str) -> list[str]:
    """The change's statements: its sentences and list items, as the documents' units are cut."""
    found = [u.embed_text for u in units(description) if quotable(u)]
    return list(dict.fromkeys(found))[:MAX_STATEMENTS]


def spelled_out(statement: str, abbreviations: list[Abbreviation]) -> str:
    """The statement with the phrase each abbreviation it says stands for written beside it."""
    added = [
        a.long
        for a in abbreviations
        if said(a.short, statement) and a.long.casefold() not in statement.casefold()
    ]
    return f"{statement} ({'; '.join(dict.fromkeys(added))})" if added else statement


@lru_cache(maxsize=2048)
def _query_vector(text: str) -> np.ndarray | None:
    embedder = get_second_embedder()
    if embedder is None:
        return None
    try:
        return embedder.embed_query(text).dense[0].astype(np.float32)
    except EmbeddingUnavailable:
        return None


def read(description: str, corpus: Corpus) -> Meanings:
    """The change's ties to the product's requirement statements and test sections."""
    space = space_for(corpus)
    statements = change_statements(description)
    meanings = Meanings(statements)
    if not space or not statements:
        return meanings
    for statement in statements:
        vector = _query_vector(spelled_out(statement, corpus.abbreviations))
        if vector is None:
            return Meanings(statements)
        _tie(meanings, space, statement, space.vectors @ vector)
    return meanings


def _tie(meanings: Meanings, space: Space, statement: str, cosines: np.ndarray) -> None:
    """Each owner's best unit for this change statement, kept when it is the best tie so far."""
    background, best = float(np.median(cosines)), float(cosines.max())
    span = best - background
    if span <= 0:
        return
    eligible = np.where(space.naming, cosines, -1.0)
    top = int(eligible.argmax())
    if eligible[top] >= MIN_CLOSENESS:
        kind, index = space.owners[top]
        lift = (float(eligible[top]) - background) / span
        tie = Tie(statement, space.texts[top], round(float(eligible[top]), 3), round(lift, 3))
        meanings.closest[statement] = (kind, index, tie)
    for row in np.flatnonzero(cosines >= MIN_CLOSENESS):
        closeness = float(cosines[row])
        lift = (closeness - background) / span
        if lift < MIN_LIFT:
            continue
        kind, index = space.owners[row]
        ties = meanings.requirements if kind == "requirement" else meanings.tests
        if index not in ties or ties[index].lift < lift:
            ties[index] = Tie(statement, space.texts[row], round(closeness, 3), round(lift, 3))
