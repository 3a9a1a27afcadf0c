"""The lexical list's terms: the question's lexemes at their BM25 idf, the corpus's synonyms
at their share, and the ceiling a chunk's BM25 is calibrated by (``fusion.question_ceiling``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from knowledge.retrieval import fusion
from knowledge.retrieval import sql as q
from knowledge.retrieval.weights import Retrieval


@dataclass(frozen=True)
class Lexical:
    """What the lexical list was scored with: idf per lexeme (the question's own and its
    synonyms at their share), which lexemes the question asked itself, the synonyms, the
    ceiling of a chunk's BM25 for the question, the chunks' mean length, the share of the
    question's words the knowledge base uses, and the number of chunks holding each lexeme."""

    idf: dict[str, float] = field(default_factory=dict)
    own: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    ceiling: float = 0.0
    avg_length: float = 1.0
    known_share: float | None = None
    df: dict[str, int] = field(default_factory=dict)

    @property
    def terms(self) -> q.Terms:
        return q.Terms(self.idf, self.avg_length)

    def matching(self, text: str, retrieval: Retrieval) -> q.Matching:
        """The chunks the lexical list scores: those holding the rarest terms, within the
        budget, the quoted phrase of ``text`` if it has one, and the prefilter."""
        return q.Matching(
            candidate_lexemes(self.idf, self.df, retrieval.lexical_budget),
            phrase=text if '"' in text else "",
            prefilter=retrieval.lexical_prefilter,
        )


def lexical_terms(
    scope: q.Scope, text: str, synonyms: Sequence[str], synonym_weight: float
) -> Lexical:
    """The terms of ``text`` and of its ``synonyms`` (at ``synonym_weight`` of their idf),
    with statistics over the sources ``scope`` may read."""
    lexemes, words = q.query_terms(text, q.LANGUAGES)
    # The corpus's synonyms of the question's terms: searched for, at a lower weight, and
    # not part of the question's ceiling (the question did not ask for those words).
    extra = q.query_terms(" ".join(synonyms), q.LANGUAGES)[0] if synonyms else []
    extra = [x for x in extra if x not in lexemes]
    df, total, avg_length = q.term_stats([*lexemes, *extra], scope.visible_source_ids)
    known = sum(1 for w in words if any(df.get(x) for x in w)) / len(words) if words else None
    idf = {x: fusion.bm25_idf(df[x], total) for x in lexemes if df.get(x)}
    own = list(idf)
    for x in extra:
        if df.get(x):
            idf[x] = synonym_weight * fusion.bm25_idf(df[x], total)
    absent = fusion.bm25_idf(1, total)  # as rare as the rarest word the chunks have
    ceiling = (q.BM25_K1 + 1) * fusion.question_ceiling(words, idf, absent)
    return Lexical(idf, own, extra, ceiling, avg_length, known, df)


def candidate_lexemes(idf: Mapping[str, float], df: Mapping[str, int], budget: int) -> list[str]:
    """The rarest query terms whose postings add up to ``budget`` chunks (at least one term).

    Bounds the work of the lexical list: a chunk that matches only very common terms cannot
    outrank one matching a rare term, so it need not be scored.
    """
    chosen: list[str] = []
    used = 0
    for lexeme in sorted(idf, key=lambda x: df[x]):
        if chosen and used + df[lexeme] > budget:
            break
        chosen.append(lexeme)
        used += df[lexeme]
    return chosen
