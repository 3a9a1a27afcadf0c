"""Evidence for an answer: the answerability check on the sources, and the check of a
generated answer's figures and names against the sources it cites."""

from __future__ import annotations

import re

from chat.answer.citations import cited_numbers
from chat.assess.answerability import Answerability, check
from knowledge.question import Question
from knowledge.retrieval import chunk_frequencies, common_names
from knowledge.text.named import named_things

EVIDENCE_SOURCES = 3  # the best sources the answer is built from
MEANING_SOURCES = 8  # the sources whose units the meaning gate reads
# A named thing this share of the chunks holds is common ("Google", "Android"): a paraphrase
# may use it for what the page calls otherwise, so the evidence need not hold it.
COMMON_SHARE = 0.005
_SENTENCE = re.compile(r"(?<=[.!?…])\s+(?=[A-ZА-ЯЁ«\"(\[*])|\n+")
_FIGURE = re.compile(r"\d+(?:[.,:]\d+)*")
MARK = " ⚠"


def assess(question: Question, sources, result) -> Answerability:
    """The answerability check of the question's reading on the best sources (see
    chat.assess.answerability), with the knowledge base's vocabulary as the user may read it."""
    evidence = [s.text for s in sources[:EVIDENCE_SOURCES]]
    best = result.hits[0].score if result.hits else None
    words = [t.lemma for t in question.key_terms]
    vocabulary, _ = chunk_frequencies(words, result.visible_source_ids)
    return check(
        question,
        evidence,
        vocabulary=vocabulary,
        best_score=best,
        common=common_names(question.named, result.visible_source_ids, share=COMMON_SHARE),
        scoped=bool(result.filters.document_ids),
        meaning=closest(sources[:MEANING_SOURCES]),
    )


def closest(sources) -> float | None:
    """The best cosine of any unit of these sources to the question in e5's space (None when
    none has its second vectors)."""
    found = [max(s.meaning) for s in sources if s.meaning]
    return max(found) if found else None


def words_in_no_document(question: Question, result) -> tuple[list[str], str]:
    """The question's words no chunk the user may read holds, and its focus if it is one."""
    words = [t.lemma for t in question.key_terms]
    vocabulary, _ = chunk_frequencies(words, result.visible_source_ids) if words else ({}, 0)
    unknown = [w for w in words if not vocabulary.get(w)]
    focus = question.focus.lemma if question.focus.lemma in unknown else ""
    return unknown, focus


def mark_unsupported(answer: str, sources, language: str) -> tuple[str, list[str]]:
    """Mark each sentence stating a figure or a name that the sources it cites (all sources,
    when it cites none) do not contain; returns the marked answer and those sentences."""
    texts = {s.number: (s.text + "\n" + s.chunk_text).casefold() for s in sources}
    everything = "\n".join(texts.values())
    unsupported: list[str] = []
    parts = []
    for sentence in _split(answer):
        numbers = cited_numbers(sentence)
        pool = "\n".join(texts[n] for n in numbers if n in texts) or everything
        claims = _claims(sentence)
        if claims and not all(claim.casefold() in pool for claim in claims):
            unsupported.append(sentence.strip())
            sentence = sentence.rstrip() + MARK + (sentence[len(sentence.rstrip()) :])
        parts.append(sentence)
    return "".join(parts), unsupported


def _split(answer: str) -> list[str]:
    """Sentences with their trailing separators, so joining them gives the answer back."""
    pieces, last = [], 0
    for match in _SENTENCE.finditer(answer):
        pieces.append(answer[last : match.end()])
        last = match.end()
    pieces.append(answer[last:])
    return [p for p in pieces if p]


def _claims(sentence: str) -> list[str]:
    """The figures and named things a sentence states (citation numbers left out)."""
    bare = re.sub(r"\[\d+\]", " ", sentence)
    figures = [f for f in _FIGURE.findall(bare) if len(f.strip(".,:")) > 0]
    names = [n for n in named_things(bare) if not n.isdigit() and len(n) > 2]
    return [f.strip(".,:") for f in figures] + names
