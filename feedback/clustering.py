"""Grouping refused questions into topics (content gaps), offline: no Django, numpy only.

Average-linkage agglomerative clustering on cosine similarity of the questions' embeddings,
merging the two closest groups while they are at least ``threshold`` similar. Each topic is
labelled by its most central question (the highest mean similarity to the rest of its group,
weighted by how often each was asked) and its most telling words (frequent in the group, rare
across all refused questions; Russian words grouped by a crude 6-letter prefix stem).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

DEFAULT_THRESHOLD = 0.5
_WORD = re.compile(r"[^\W\d_]{3,}")
_STOP = """
    как что где когда какой какая какое какие каких каким почему зачем кто чем чего сколько
    можно нужно надо ли это этот эта эти для при или если есть нет там тут так же уже еще ещё
    все всё всех они она оно его её них мне меня нас вас вам вы мы ты был была были будет
    через после перед между под над про без из-за чтобы который которая которые
    расскажи расскажите подскажи подскажите скажи объясни покажи найди дай
    the what how where when which why who whom does did can could should would will with
    for and are was were from about into that this these those there have has had you your
    our not any some tell show explain please
"""
STOP_WORDS = frozenset(_STOP.split())


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
    return [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


def _stem(word: str) -> str:
    return word[:6]


def document_frequencies(questions: list[str]) -> Counter[str]:
    """In how many of ``questions`` each word stem occurs."""
    return Counter(stem for q in questions for stem in {_stem(w) for w in words_of(q)})


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
            stem = _stem(word)
            forms.setdefault(stem, Counter())[word] += 1
            if stem not in seen:
                in_group[stem] += 1
                seen.add(stem)
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
