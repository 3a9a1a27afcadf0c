"""Content gaps: the refused questions of a period grouped into topics (empty or nonsense
questions and prohibited requests are counted apart, see ``feedback.tagging``).

The distinct refused questions (case and surrounding blanks ignored), most asked first, are
embedded with the portal's own embedder (``knowledge.embedding.get_embedder``: offline, the
same model as the search) and clustered by ``feedback.clustering``. Each distinct text is
embedded once per model and its vector kept in ``QuestionVector``, so a page view embeds only
the questions refused since the last one.
"""

from __future__ import annotations

import hashlib

import numpy as np
from django.db.models import Aggregate, CharField, Count, QuerySet
from django.db.models.functions import Lower, Trim

from feedback.clustering import Topic, group_questions
from feedback.models import QuestionVector

MAX_QUESTIONS = 200  # the most asked distinct refused questions that are clustered
# Refusals that are not content gaps: empty or nonsense questions, and prohibited requests
# refused before any search (feedback.tagging, chat.moderation).
NOT_GAPS = ("noise", "moderated")


class MostCommon(Aggregate):
    """PostgreSQL's ``mode() WITHIN GROUP (ORDER BY expr)``: the most frequent value."""

    function = "mode"
    template = "%(function)s() WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = CharField()


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def refused_questions(messages: QuerySet, limit: int | None = MAX_QUESTIONS) -> list[dict]:
    """Distinct refused questions of ``messages`` (noise and prohibited requests left out),
    most asked first: {"text" (folded case and blanks), "question" (its most common
    spelling), "asked"}."""
    return list(
        messages.filter(outcome="refusal")
        .exclude(topic_kind__in=NOT_GAPS)
        .annotate(text=Lower(Trim("question")))
        .values("text")
        .annotate(asked=Count("pk"), question=MostCommon("question"))
        .order_by("-asked", "text")[:limit]
    )


def question_vectors(texts: list[str], embedder=None) -> np.ndarray:
    """Vectors of ``texts`` (normalised), from the store or embedded now and stored."""
    from knowledge.embedding import get_embedder

    embedder = embedder or get_embedder()
    hashes = [text_hash(t) for t in texts]
    stored = {
        text_hash: np.frombuffer(bytes(dense), dtype=np.float32)
        for text_hash, dense in QuestionVector.objects.filter(
            model_id=embedder.model_id, text_hash__in=hashes
        ).values_list("text_hash", "dense")
    }
    missing = [i for i, h in enumerate(hashes) if h not in stored]
    if missing:
        dense = embedder.embed_documents([texts[i] for i in missing]).dense
        # Two page views may embed the same new question at once; either row will do.
        QuestionVector.objects.bulk_create(
            [
                QuestionVector(
                    model_id=embedder.model_id,
                    text_hash=hashes[i],
                    dense=np.asarray(vector, dtype=np.float32).tobytes(),
                )
                for i, vector in zip(missing, dense, strict=True)
            ],
            ignore_conflicts=True,
        )
        stored.update({hashes[i]: v for i, v in zip(missing, dense, strict=True)})
    if not hashes:
        return np.zeros((0, getattr(embedder, "dimensions", 1)), dtype=np.float32)
    return np.vstack([stored[h] for h in hashes])


def content_gaps(messages: QuerySet, embedder=None) -> list[Topic]:
    """Topics of the questions refused among ``messages``, the most asked first."""
    rows = refused_questions(messages)
    if not rows:
        return []
    vectors = question_vectors([r["text"] for r in rows], embedder)
    return group_questions(
        [r["question"].strip() for r in rows], [r["asked"] for r in rows], vectors
    )
