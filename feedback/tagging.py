"""Topics on every dialog turn: what a question was about, for the journal's filters and the
analytics page's "topics over time".

**A document's topic** is where it sits in its source, which people already know:
"<source> › <section>", the section being the document's top folder, named by the title of
that folder's index page (``README.md``, ``index.md``, ``_index.md``) or else by the folder's
name: "QA Bible › Общее", "QA Bible › Тест дизайн". A document at the root of a
specifications or uploads source is a subject of its own ("HSE app specifications ›
Программа и методика испытаний"); any other root document (a wiki's home page, a ticket, a
checklist) has its source as its topic.

**A turn's topics** are those of the documents it cites (of all its sources when it cites
none; of a clarification's candidate documents), the most cited first, at most three. A
refused question has no documents: it gets the topic of the nearest cluster of earlier refused
questions (the mean cosine similarity of their embeddings at least the content gaps'
threshold, ``feedback.clustering``), or starts a cluster named by itself; ``manage.py topics
--recluster`` groups them all again with the content gaps' clustering. Empty or nonsense
questions (no letters, keyboard runs, repeated letters, only greetings) are the noise bucket,
and prohibited requests (``chat.moderation``) a bucket of their own: neither is a content gap.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict

import numpy as np
from django.db.models.functions import Lower, Trim

from chat.models import Message
from feedback.clustering import DEFAULT_THRESHOLD, group_questions
from feedback.gaps import question_vectors, refused_questions
from knowledge.embedding import EmbeddingModelMismatch, EmbeddingUnavailable
from knowledge.models import Document
from knowledge.text.words import SMALL_TALK

logger = logging.getLogger(__name__)

SEPARATOR = " › "
MAX_TOPICS = 3
MAX_LABEL = 120
MAX_NEIGHBOURS = 500  # the most recent refused questions a new refusal is compared with
BATCH = 500  # turns tagged at once by tag_untagged
MAX_CLUSTERED = 400  # distinct refused questions clustered at once (the rest join the nearest)
INDEX_PAGES = ("README.md", "readme.md", "index.md", "_index.md")
OWN_TOPIC_KINDS = frozenset({"specs", "uploads"})  # few, large documents: each its own subject

_WORD = re.compile(r"[^\W\d_]+")
_PLACEHOLDER = re.compile(r"\[[^\]]{1,20}\]")  # what redaction left: [e-mail], [phone]
_VOWELS = frozenset("аеёиоуыэюяaeiouy")
_CONSONANT_RUN = re.compile(r"[^аеёиоуыэюяaeiouy]{6,}")
_KEYBOARD_ROWS = (
    "qwertyuiop",
    "asdfghjkl",
    "zxcvbnm",
    "йцукенгшщзхъ",
    "фывапролджэ",
    "ячсмитьбю",
)


# --- documents -------------------------------------------------------------------------------


def topic_of(source: str, kind: str, path: str, title: str, folder_title: str = "") -> str:
    """The topic of one document (see the module's docstring); no database."""
    folder = path.split("/", 1)[0] if "/" in path.strip("/") else ""
    if folder:
        return f"{source}{SEPARATOR}{folder_title or folder}"[:200]
    if kind in OWN_TOPIC_KINDS and title and title.casefold() != source.casefold():
        return f"{source}{SEPARATOR}{title}"[:200]
    return source[:200]


def document_topics(document_ids) -> dict[int, str]:
    """The topic of each document, by primary key: two queries (the documents, the index
    pages of their folders)."""
    rows = list(
        Document.objects.filter(pk__in=set(document_ids)).values(
            "pk", "path", "title", "source_id", "source__name", "source__kind"
        )
    )
    folders = {
        (r["source_id"], r["path"].strip("/").split("/", 1)[0])
        for r in rows
        if "/" in r["path"].strip("/")
    }
    titles: dict[tuple[int, str], str] = {}
    if folders:
        index_paths = [f"{folder}/{page}" for _, folder in folders for page in INDEX_PAGES]
        for source_id, path, title in Document.objects.filter(
            source_id__in={s for s, _ in folders}, path__in=index_paths
        ).values_list("source_id", "path", "title"):
            titles.setdefault((source_id, path.split("/", 1)[0]), title)
    return {
        r["pk"]: topic_of(
            r["source__name"],
            r["source__kind"],
            r["path"].strip("/"),
            r["title"],
            titles.get((r["source_id"], r["path"].strip("/").split("/", 1)[0]), ""),
        )
        for r in rows
    }


def _answer_documents(message: Message) -> list[int]:
    """The documents a turn was answered from: those it cites, else all its sources, else a
    clarification's candidates; in the order it numbered them."""
    sources = sorted(message.sources.all(), key=lambda s: s.number)  # prefetched in batches
    cited = [s.document_id for s in sources if s.cited and s.document_id]
    ids = cited or [s.document_id for s in sources if s.document_id]
    if not ids:
        ids = [int(t["document_id"]) for t in message.tiles or [] if t.get("document_id")]
    return list(dict.fromkeys(ids))


# --- noise -----------------------------------------------------------------------------------


def _gibberish(word: str) -> bool:
    lowered = word.lower()
    if word.isupper() and len(word) >= 2:
        return False  # an acronym: SQL, API, ПМИ
    if len(lowered) <= 2 or len(set(lowered)) == 1:
        return True
    if not _VOWELS & set(lowered) or _CONSONANT_RUN.search(lowered):
        return True
    if len(lowered) >= 4 and any(lowered in row or lowered in row[::-1] for row in _KEYBOARD_ROWS):
        return True
    # a short run typed again and again: "абабаб", "хахаха", "ывлаоывлао"
    return len(lowered) >= 4 and any(
        lowered == (lowered[:k] * (len(lowered) // k + 1))[: len(lowered)]
        for k in range(1, len(lowered) // 2 + 1)
    )


def is_noise(question: str) -> bool:
    """An empty or nonsense question: no letters, or only greetings, fillers and
    gibberish-shaped words (keyboard runs, repeated letters, no vowel, six consonants in a
    row). Acronyms (SQL, ПМИ) are words."""
    words = _WORD.findall(_PLACEHOLDER.sub(" ", question or ""))
    return all(w.lower() in SMALL_TALK or _gibberish(w) for w in words)


# --- refused questions -----------------------------------------------------------------------


def fold(text: str) -> str:
    """A question as the content gaps count it (``Lower(Trim(question))``)."""
    return text.strip().lower()


def _label(question: str) -> str:
    text = " ".join(question.split())
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1].rstrip() + "…"


def gap_topic(question: str, *, exclude_pk: int | None = None) -> str:
    """The topic of a refused question: the nearest cluster of earlier refused questions (mean
    similarity at least the content gaps' threshold), else a new one named by the question."""
    earlier = (
        Message.objects.filter(topic_kind=Message.TopicKind.GAP)
        .exclude(topics=[])
        .exclude(pk=exclude_pk)
        .order_by("-created_at", "-pk")
        .values_list("question", "topics")[:MAX_NEIGHBOURS]
    )
    labels: dict[str, str] = {}
    for text, topics in earlier:
        labels.setdefault(fold(text), topics[0])
    if fold(question) in labels:
        return labels[fold(question)]  # asked before: the same cluster
    texts = list(labels)
    if not texts:
        return _label(question)
    try:
        vectors = question_vectors([fold(question), *texts])
    except (EmbeddingUnavailable, EmbeddingModelMismatch) as exc:
        # The refusal stands whatever happens here: named by itself until a regrouping.
        logger.warning("no vector for a refused question (%s); named by itself", exc)
        return _label(question)
    similarity = vectors[1:] @ vectors[0]
    by_label: dict[str, list[float]] = defaultdict(list)
    for text, value in zip(texts, similarity, strict=True):
        by_label[labels[text]].append(float(value))
    label, best = max(
        ((name, sum(values) / len(values)) for name, values in by_label.items()),
        key=lambda item: item[1],
    )
    return label if best >= DEFAULT_THRESHOLD else _label(question)


def recluster_gaps() -> int:
    """Group every refused question (not noise, not prohibited) again with the content gaps'
    clustering and name each turn by its group's most central question; returns the number of
    groups. The most asked ``MAX_CLUSTERED`` distinct questions are clustered, the rest join
    the nearest group (or stand alone below the threshold)."""
    gaps = Message.objects.filter(topic_kind=Message.TopicKind.GAP)
    rows = refused_questions(gaps, limit=None)
    if not rows:
        return 0
    vectors = question_vectors([r["text"] for r in rows])
    head = rows[:MAX_CLUSTERED]
    groups = group_questions(
        [r["question"].strip() for r in head],
        [r["asked"] for r in head],
        vectors[: len(head)],
        limit=len(head),
    )
    spelling = {r["question"].strip(): r["text"] for r in head}
    label_of: dict[str, str] = {}
    members: list[list[int]] = []
    position = {r["text"]: i for i, r in enumerate(head)}
    for group in groups:
        texts = [spelling[q] for q, _ in group.questions]
        members.append([position[t] for t in texts])
        label_of.update(dict.fromkeys(texts, _label(group.label)))
    for i, row in enumerate(rows[len(head) :], start=len(head)):
        means = [float(np.mean(vectors[idx] @ vectors[i])) for idx in members]
        best = int(np.argmax(means))
        label_of[row["text"]] = (
            label_of[head[members[best][0]]["text"]]
            if means[best] >= DEFAULT_THRESHOLD
            else _label(row["question"])
        )
    by_label: dict[str, list[str]] = defaultdict(list)
    for text, label in label_of.items():
        by_label[label].append(text)
    folded = gaps.annotate(folded=Lower(Trim("question")))
    for label, texts in by_label.items():
        folded.filter(folded__in=texts).update(topics=[label])
    return len(by_label)


# --- a turn ----------------------------------------------------------------------------------


def assign(message: Message, *, cluster: bool = True, known: dict[int, str] | None = None) -> None:
    """Set ``message.topics`` and ``topic_kind`` from what the turn was answered from (not
    saved). ``cluster=False`` leaves a refused question's cluster to ``recluster_gaps``;
    ``known`` is the documents' topics when a batch has read them already."""
    kinds = Message.TopicKind
    topics: list[str] = []
    if message.moderation:
        kind = kinds.MODERATED
    elif message.outcome == Message.Outcome.REFUSAL:
        if is_noise(message.question):
            kind = kinds.NOISE
        else:
            kind = kinds.GAP
            if cluster:
                topics = [gap_topic(message.question, exclude_pk=message.pk)]
    elif message.outcome == Message.Outcome.ERROR or not message.pk:
        kind = kinds.NONE
    else:
        documents = _answer_documents(message)
        found = known if known is not None else document_topics(documents)
        topics = list(dict.fromkeys(found[d] for d in documents if d in found))[:MAX_TOPICS]
        kind = kinds.DOCUMENTS if topics else kinds.NONE
    message.topics, message.topic_kind = topics, kind


def tag_untagged(*, recluster: bool = False) -> dict[str, int]:
    """Tag the finished turns without topics (those stored before topics existed), then group
    the refused ones; returns how many turns got each kind."""
    counts: dict[str, int] = defaultdict(int)
    untagged = list(
        Message.objects.filter(status=Message.Status.DONE, topic_kind=Message.TopicKind.NONE)
        .exclude(outcome=Message.Outcome.ERROR)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for start in range(0, len(untagged), BATCH):
        # A batch in a few queries: its turns with their sources, its documents' topics, one
        # bulk update.
        batch = list(
            Message.objects.filter(pk__in=untagged[start : start + BATCH]).prefetch_related(
                "sources"
            )
        )
        known = document_topics({d for m in batch for d in _answer_documents(m)})
        tagged = []
        for message in batch:
            assign(message, cluster=False, known=known)
            if message.topic_kind != Message.TopicKind.NONE:
                tagged.append(message)
                counts[message.topic_kind] += 1
        Message.objects.bulk_update(tagged, ["topics", "topic_kind"])
    if recluster or counts.get(Message.TopicKind.GAP):
        counts["clusters"] = recluster_gaps()
    return dict(counts)
