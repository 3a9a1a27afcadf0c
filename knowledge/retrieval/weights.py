"""The ranking's weights and thresholds: one typed, immutable object, read once per process
from the environment (the ``KB_SEARCH_*``, ``KB_RERANK_*``, ``KB_CLARIFY_*`` variables of
``deploy/.env.example``; a bad value stops the process at start, ``knowledge.apps``).

Each weight says which benchmark and which figure it was set from: ``retrieval_sec.py`` (SEC
10-Q: the right filing in the top 5 / a reference figure in the top 10), ``retrieval_kb.py``
(kb_dev document Recall@1 / @5), ``retrieval.py`` (XQuAD MRR), ``refusal.py`` (answered /
refused shares), ``answers.py``, ``retrieval_scale.py`` (all in ``benchmarks/``), and the
commit that measured it. A group made in code takes the configured value of every field it
does not name: ``Hits(k=5)`` is the configured cap and spread with five results.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from portal.env import env_bool, env_choice, env_float, env_int


def setting(
    variable: str,
    default: Any,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    choices: tuple[str, ...] = (),
) -> Any:
    """A weight read from ``variable`` (``default`` when it is not set)."""
    return field(
        default_factory=lambda: _configured(variable),
        metadata={
            "variable": variable,
            "default": default,
            "minimum": minimum,
            "maximum": maximum,
            "choices": choices,
        },
    )


@dataclass(frozen=True)
class Retrieval:
    """What the dense and lexical lists bring to the fusion."""

    # retrieval_sec.py: 40 per list 95.9 / 49.6 % against 30: 96.9 / 45.9 % (b98e5e4), one
    # retrieval at 100,000 chunks p95 86 ms (retrieval_scale.py); 60 gave 48.1 % for 108 ms.
    candidates: int = setting("KB_SEARCH_CANDIDATES", 40, minimum=5, maximum=500)
    # retrieval_scale.py, 100,000 chunks: HNSW recall@10 0.987 at 400 (0.92 at 100, 0.97 at
    # 200; 418f532).
    ef_search: int = setting("KB_HNSW_EF_SEARCH", 400, minimum=10, maximum=1000)
    # retrieval_scale.py: the prefiltered lexical list keeps 0.995 of the full-BM25 top 10
    # (418f532); 1000 / 150 saved a third of BM25's time but cost retrieval_sec.py 1.5 points
    # of figures in the top 10 (dbc756f).
    lexical_budget: int = setting("KB_LEXICAL_CANDIDATE_BUDGET", 2000, minimum=100)
    # The same measurement as the budget; 0 scores every candidate.
    lexical_prefilter: int = setting("KB_LEXICAL_PREFILTER", 300, minimum=0)
    # Share of idf of the corpus's synonyms (0: none): introduced with the document evidence
    # (aae56d3, kb_dev R@1 0.600 -> 0.629 for both), not measured alone.
    synonym_weight: float = setting("KB_SEARCH_SYNONYM_WEIGHT", 0.25)


@dataclass(frozen=True)
class Fusion:
    """How the lists' scores become one ranking score (``knowledge.retrieval.ranking``)."""

    # retrieval.py: XQuAD MRR calibrated 0.957 ru / 0.967 en against RRF 0.908 (README).
    method: str = setting("KB_SEARCH_FUSION", "calibrated", choices=("calibrated", "rrf"))
    # retrieval.py: XQuAD MRR 0.957 ru / 0.967 en at 0.5 (BM25 alone 0.929, dense 0.824); the
    # script takes other weights as arguments, no other weight is recorded as better.
    dense_weight: float = setting("KB_SEARCH_DENSE_WEIGHT", 0.5)
    # retrieval.py: the usual constant of RRF (XQuAD MRR 0.908 ru with it); RRF is not the default.
    rrf_k: int = setting("KB_RRF_K", 60, minimum=1)
    # retrieval_kb.py: kb_dev fusion R@1 0.600 -> 0.629 (aae56d3).
    document_weight: float = setting("KB_SEARCH_DOCUMENT_WEIGHT", 0.1)
    # retrieval_sec.py: the right filing in the top 5 0.923 -> 0.969 (0e0729a).
    name_weight: float = setting("KB_SEARCH_NAME_WEIGHT", 0.05)
    # retrieval_sec.py: figure in the top 10 36.1 -> 42.9 % (01430df); 1.5 gave the final
    # filing 94.9 %, 2.0 93.8 % (README).
    label_weight: float = setting("KB_SEARCH_LABEL_WEIGHT", 1.0)
    # Set with the label weight (01430df, the same figure); not swept alone.
    label_documents: int = setting("KB_SEARCH_LABEL_DOCUMENTS", 8, minimum=1)
    # Set with the label weight (01430df, the same figure); not swept alone.
    label_candidates: int = setting("KB_SEARCH_LABEL_CANDIDATES", 12, minimum=0)


@dataclass(frozen=True)
class Prf:
    """Query expansion from the first results (``knowledge.retrieval.prf``), off by default."""

    # retrieval_kb.py with 2: kb_dev final R@1 0.671 -> 0.700, but retrieval.py XQuAD MRR
    # 0.955 -> 0.943 ru and 0.968 -> 0.956 en: 0, off (README).
    documents: int = setting("KB_SEARCH_PRF_DOCS", 0, minimum=0, maximum=10)
    # retrieval_kb.py: kb_dev final R@1 0.629 -> 0.671 with 10 words at 0.25 (d58fba9).
    terms: int = setting("KB_SEARCH_PRF_TERMS", 10, minimum=1, maximum=50)
    # The same measurement as the terms (d58fba9).
    weight: float = setting("KB_SEARCH_PRF_WEIGHT", 0.25)
    # Set with the PRF pass (d58fba9) so XQuAD's questions, which repeat their passage's
    # words, are left alone; not swept.
    below: float = setting("KB_SEARCH_PRF_BELOW", 0.3)


@dataclass(frozen=True)
class Hits:
    """What a search returns (``fusion.select``), from which source tier."""

    # retrieval_kb.py: 8 instead of 6 with the follower share, kb_dev final R@5 0.771 ->
    # 0.800; answers.py gold among the sources 80.0 -> 82.9 % (9ebac56).
    k: int = setting("KB_SEARCH_RESULTS", 8, minimum=1, maximum=50)
    # retrieval_sec.py: with the spread, figure in the top 10 42.9 -> 48.1 %, filing 96.9 %
    # kept, kb_dev unchanged (3bc8809; at most 2 per document before).
    per_document: int = setting("KB_SEARCH_PER_DOCUMENT", 6, minimum=1)
    # The same measurement as the cap per document (3bc8809).
    spread: int = setting("KB_SEARCH_SPREAD", 5, minimum=0, maximum=50)
    # The hits of the first source tier (priority) that has any (issue 14, 234aa19): a
    # behaviour, not a measured weight.
    cascade: bool = setting("KB_SEARCH_CASCADE", True)


@dataclass(frozen=True)
class Gate:
    """The minimum score: the honest refusal's gate, and the floor of the other hits."""

    # refusal.py: 96.8 % of the XQuAD questions answered, 96.9 % of out-of-domain ones
    # refused (1b7c858, d844443; today 97.3 / 95.3 %, README).
    min_score: float = setting("KB_SEARCH_MIN_SCORE", 0.19)
    # refusal.py: out-of-domain refused stays >= 95 % (a3734ae).
    min_score_known: float = setting("KB_SEARCH_MIN_SCORE_KNOWN", 0.16)
    # Set with the minimum above (a3734ae); not swept.
    known_share: float = setting("KB_SEARCH_KNOWN_SHARE", 0.9)
    # retrieval_kb.py: kb_dev final R@5 0.771 -> 0.800; answers.py trick 92 % and
    # out-of-domain 100 % unchanged (9ebac56).
    follower_share: float = setting("KB_SEARCH_FOLLOWER_SHARE", 0.8)


@dataclass(frozen=True)
class Rerank:
    """The cross-encoder's step, when one is configured (``KB_RERANKER``)."""

    # No reranker can be run here (no weights are downloaded): not measured by any benchmark.
    candidates: int = setting("KB_RERANK_CANDIDATES", 20, minimum=1)
    # The same: a cross-encoder's sigmoid scale, not measured; applies to every hit.
    min_score: float = setting("KB_RERANK_MIN_SCORE", 0.2)


@dataclass(frozen=True)
class Clarify:
    """When an answer asks back instead (``chat.policy``): documents about different things
    score alike for a short question."""

    # Set with the chat's tests (37b902a); answers.py counts the clarifications, no sweep.
    ratio: float = setting("KB_CLARIFY_RATIO", 0.85)
    # The same (37b902a).
    max_words: int = setting("KB_CLARIFY_MAX_WORDS", 8, minimum=0)
    # The same (37b902a).
    max_similarity: float = setting("KB_CLARIFY_MAX_SIMILARITY", 0.55)


GROUPS = {
    "retrieval": Retrieval,
    "fusion": Fusion,
    "prf": Prf,
    "hits": Hits,
    "gate": Gate,
    "rerank": Rerank,
    "clarify": Clarify,
}


@dataclass(frozen=True)
class Weights:
    """Every weight of the ranking, by stage."""

    retrieval: Retrieval
    fusion: Fusion
    prf: Prf
    hits: Hits
    gate: Gate
    rerank: Rerank
    clarify: Clarify

    @classmethod
    def from_environment(cls) -> Weights:
        return cls(**{name: _read(group) for name, group in GROUPS.items()})

    def by_variable(self) -> dict[str, Any]:
        """Each weight by its environment variable ("KB_SEARCH_MIN_SCORE": 0.19)."""
        return {
            f.metadata["variable"]: getattr(group, f.name)
            for group in (getattr(self, name) for name in GROUPS)
            for f in fields(group)
        }

    def changed(self, **groups: dict[str, Any]) -> Weights:
        """These weights with some fields of some groups changed:
        ``changed(gate={"min_score": 0.0})``."""
        return replace(
            self, **{name: replace(getattr(self, name), **c) for name, c in groups.items()}
        )


def _read(group: type) -> Any:
    return group(**{f.name: _value(f.metadata) for f in fields(group)})


def _value(meta: Any) -> Any:
    variable, default = meta["variable"], meta["default"]
    if isinstance(default, bool):
        return env_bool(variable, default)
    if isinstance(default, int):
        return env_int(variable, default, minimum=meta["minimum"], maximum=meta["maximum"])
    if isinstance(default, float):
        return env_float(variable, default)
    return env_choice(variable, default, meta["choices"])


# The weights in use and their values by variable (what a group made in code starts from).
_current: dict[str, Any] = {}


def weights() -> Weights:
    """The configured weights: read from the environment at the first call of the process."""
    if "weights" not in _current:
        configure(Weights.from_environment())
    return _current["weights"]


def configure(new: Weights) -> Weights:
    """Rank with ``new`` in this process from now on (tests, a benchmark's sweep)."""
    _current["weights"] = new
    _current["values"] = new.by_variable()
    return new


def _configured(variable: str) -> Any:
    weights()
    return _current["values"][variable]
