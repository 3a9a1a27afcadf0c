"""The knowledge base's vocabulary: how many chunks hold a word, among the sources a user may
read. The words are lemmas of a question's reading; each is looked up as the lexemes
PostgreSQL's text-search configurations make of it, the same ones the chunks are indexed by."""

from __future__ import annotations

from collections.abc import Iterable

from knowledge.retrieval import sql as q
from knowledge.text import matching


def chunk_frequencies(
    words: Iterable[str], visible_source_ids: list[int] | None = None
) -> tuple[dict[str, int], int]:
    """Each word (a lemma) -> the number of searchable chunks holding one of its forms (0: no
    document uses it), and the number of searchable chunks."""
    words = [w for w in dict.fromkeys(words) if w.strip()]
    # One query for every word's forms (PostgreSQL reads each text under its configurations).
    parsed = q.query_terms_many([" ".join(matching.forms(w)) for w in words], q.LANGUAGES)
    variants = {
        w: sorted({x for found in terms[1] for x in found})
        for w, terms in zip(words, parsed, strict=True)
    }
    lexemes = sorted({x for found in variants.values() for x in found})
    df, total, _ = q.term_stats(lexemes, visible_source_ids) if lexemes else ({}, 0, 0.0)
    if not lexemes:
        _, total, _ = q.term_stats([], visible_source_ids)
    return {
        w: max((df.get(x, 0) for x in found), default=0) for w, found in variants.items()
    }, total


def common_names(
    names: Iterable[str], visible_source_ids: list[int] | None = None, *, share: float = 0.005
) -> set[str]:
    """The named things (one word each) that at least ``share`` of the chunks hold, lower-cased:
    "Google", "Android" in a knowledge base about mobile testing. A thing of several lexemes
    ("4.5:1": "4.5" and "1") is common only when each of them is."""
    names = [n for n in names if " " not in n]
    if not names:
        return set()
    lexemes = q.simple_lexemes(names)
    df, total, _ = q.term_stats(
        sorted({x for found in lexemes.values() for x in found}), visible_source_ids
    )
    floor = max(2, share * total)
    return {
        n.casefold()
        for n, found in lexemes.items()
        if found and min(df.get(x, 0) for x in found) >= floor
    }
