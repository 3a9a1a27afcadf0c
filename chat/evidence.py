"""Evidence for an answer: the answerability check on the sources, and the check of a
generated answer's figures and names against the sources it cites."""

from __future__ import annotations

import re

from chat.answerability import Answerability, check, focus_stems, named_things
from chat.citations import cited_numbers
from knowledge.retrieval import fusion
from knowledge.retrieval import sql as q

EVIDENCE_SOURCES = 3  # the best sources the answer is built from
# A named thing this share of the chunks holds is common ("Google", "Android"): a paraphrase
# may use it for what the page calls otherwise, so the evidence need not hold it.
COMMON_SHARE = 0.005
_SENTENCE = re.compile(r"(?<=[.!?…])\s+(?=[A-ZА-ЯЁ«\"(\[*])|\n+")
_FIGURE = re.compile(r"\d+(?:[.,:]\d+)*")
MARK = " ⚠"


def assess(question: str, sources, result) -> Answerability:
    """The answerability check of ``question`` on the best sources (see chat.answerability)."""
    evidence = [s.text for s in sources[:EVIDENCE_SOURCES]]
    best = result.hits[0].score if result.hits else None
    return check(
        question,
        evidence,
        focus=_focus(question, result.visible_source_ids),
        best_score=best,
        common=_common(question, result.visible_source_ids),
    )


def _common(question: str, visible_source_ids: list[int] | None = None) -> set[str]:
    """The named things of the question that many chunks hold (as whole words)."""
    names = [n for n in named_things(question) if " " not in n]
    if not names:
        return set()
    lexemes = _simple_lexemes(names)
    df, total, _ = q.term_stats(
        sorted({x for found in lexemes.values() for x in found}), visible_source_ids
    )
    floor = max(2, COMMON_SHARE * total)
    return {
        n.casefold()
        for n, found in lexemes.items()
        if found and max(df.get(x, 0) for x in found) >= floor
    }


def _simple_lexemes(names: list[str]) -> dict[str, list[str]]:
    """Each name's lexemes under the "simple" configuration, in one query for all names."""
    from django.db import connection

    found: dict[str, list[str]] = {n: [] for n in names}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT n.name, d.lexemes FROM unnest(%s::text[]) AS n(name), "
            "LATERAL ts_debug('simple', n.name) AS d WHERE d.lexemes IS NOT NULL",
            [names],
        )
        for name, lexemes in cursor.fetchall():
            found[name].extend(lexemes)
    return found


def _focus(question: str, visible_source_ids: list[int] | None = None) -> list[str]:
    """The question's content words the knowledge base knows, as stems, rarest first."""
    lexemes, words = q.query_terms(question, q.LANGUAGES)
    df, total, _ = q.term_stats(lexemes, visible_source_ids)
    pairs = []
    for variants in words:
        known = [v for v in variants if df.get(v) and v.isalpha()]
        if known:
            idf = max(fusion.bm25_idf(df[v], total) for v in known)
            pairs.append((min(known, key=len), idf))
    return focus_stems(pairs)


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
