"""Grouping refused questions into topics (content gaps), offline: no Django, numpy only.
(The lemmas come from ``knowledge.text.matching``, pymorphy3, which needs no database.)

Average-linkage agglomerative clustering on cosine similarity of the questions' embeddings,
merging the two closest groups while they are at least ``threshold`` similar. Each topic is
labelled by its most central question (the highest mean similarity to the rest of its group,
weighted by how often each was asked) and its most telling words (frequent in the group, rare
across all refused questions; words read as their lemmas, ``knowledge.text.matching``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from knowledge.text import matching
from knowledge.text.words import is_stop

DEFAULT_THRESHOLD = 0.5
_WORD = re.compile(r"[^\W\d_]{3,}")


@dataclass
class Topic:
    label: str  # the most central question
    words: list[str]
    questions: list[tuple[str, int]] = field(default_factory=list)  # most asked first
    asked: int = 0  # how many refused questions fell into the topic


def cluster(vectors: np.ndarray, threshold: float = DEFAULT_THRESHOLD) -> list[list[int]]:
    """Indices of ``vectors`` (rows, L2-normalised) grouped by average-linkage clustering."""
    n = len(vectors)
    if n == 0:
        return []
    sim = np.asarray(vectors, dtype=np.float64) @ np.asarray(vectors, dtype=np.float64).T
    np.fill_diagonal(sim, -np.inf)
    sizes = np.ones(n)
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    while len(members) > 1:
        flat = int(np.argmax(sim))
        i, j = divmod(flat, n)
        if sim[i, j] < threshold:
            break
        # Average linkage (UPGMA): the merged group's similarity to any other is the
        # size-weighted mean of its two parts' similarities.
        merged = (sizes[i] * sim[i] + sizes[j] * sim[j]) / (sizes[i] + sizes[j])
        sim[i, :], sim[:, i] = merged, merged
        sim[i, i] = -np.inf
        sim[j, :], sim[:, j] = -np.inf, -np.inf
        sizes[i] += sizes[j]
        members[i].extend(members.pop(j))
    return list(members.values())


def words_of(text: str) -> list[str]:
    """The content words of a question as lemmas (function and question words left out)."""
    lemmas = (matching.lemma(w) for w in _WORD.findall(text))
    return [w for w in lemmas if not is_stop(w)]


def document_frequencies(questions: list[str]) -> Counter[str]:
    """In how many of ``questions`` each word stem occurs."""
    return Counter(word for q in questions for word in set(words_of(q)))


def top_words(
    group: list[str], all_questions: list[str], limit: int = 4, *, frequencies=None
) -> list[str]:
    """Words frequent in ``group`` and rare in ``all_questions`` (tf-idf over questions)."""
    frequencies = frequencies if frequencies is not None else document_frequencies(all_questions)
    in_group: Counter[str] = Counter()
    forms: dict[str, Counter[str]] = {}
    for question in group:
        seen = set()
        for word in words_of(question):
            forms.setdefault(word, Counter())[word] += 1
            if word not in seen:
                in_group[word] += 1
                seen.add(word)
    total = len(all_questions)
    scored = sorted(
        in_group,
        key=lambda s: (-in_group[s] * math.log((total + 1) / (frequencies[s] + 1) + 1), s),
    )
    return [forms[s].most_common(1)[0][0] for s in scored[:limit]]


def central(indices: list[int], vectors: np.ndarray, counts: list[int]) -> int:
    """The member most similar, on average, to the group (weighted by how often each was asked)."""
    if len(indices) == 1:
        return indices[0]
    group = vectors[indices]
    weights = np.asarray([counts[i] for i in indices], dtype=np.float64)
    centroid = (group * weights[:, None]).sum(axis=0)
    return indices[int(np.argmax(group @ centroid))]


def group_questions(
    questions: list[str],
    counts: list[int],
    vectors: np.ndarray,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    limit: int = 12,
) -> list[Topic]:
    """Topics of ``questions`` (distinct texts, each asked ``counts[i]`` times), biggest first."""
    vectors = np.asarray(vectors, dtype=np.float64)
    groups = sorted(
        cluster(vectors, threshold),
        key=lambda g: (-sum(counts[i] for i in g), -len(g), min(questions[i] for i in g)),
    )[:limit]
    frequencies = document_frequencies(questions)  # once, for the labels of every topic
    topics = []
    for indices in groups:
        ordered = sorted(indices, key=lambda i: (-counts[i], questions[i]))
        topics.append(
            Topic(
                label=questions[central(indices, vectors, counts)],
                words=top_words(
                    [questions[i] for i in indices], questions, frequencies=frequencies
                ),
                questions=[(questions[i], counts[i]) for i in ordered],
                asked=sum(counts[i] for i in indices),
            )
        )
    return topics
