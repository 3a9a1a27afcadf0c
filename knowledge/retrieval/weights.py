"""The ranking's weights and thresholds: one typed, immutable object, read once per process
from the environment (the ``KB_SEARCH_*``, ``KB_RERANK_*``, ``KB_CLARIFY_*`` variables of
``deploy/.env.example``; a bad value stops the process at start, ``knowledge.apps``).

Each weight has one comment naming the benchmark and the figure it was set from:
``retrieval_sec.py`` (SEC 10-Q: the right filing in the top 5 / a reference figure in the top
10), ``retrieval_kb.py`` (kb_dev document Recall@1 / @5), ``retrieval.py`` (XQuAD MRR),
``refusal.py`` (answered / refused shares), ``answers.py``, ``retrieval_scale.py`` (all in
``benchmarks/``), with the commit or ``benchmarks/RESULTS.md`` entry that measured it; "set by
hand" where no benchmark is recorded. A group made in code takes the configured value of every
field it does not name: ``Hits(k=5)`` is the configured cap and spread with five results.
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

    # retrieval_sec.py: 40 a list filing / figure 95.9 / 49.6 %, 30: 96.9 / 45.9 % (RESULTS.md).
    candidates: int = setting("KB_SEARCH_CANDIDATES", 40, minimum=5, maximum=500)
    # retrieval_scale.py, 100,000 chunks: HNSW recall@10 0.987 at 400 (0.92 at 100; 418f532).
    ef_search: int = setting("KB_HNSW_EF_SEARCH", 400, minimum=10, maximum=1000)
    # retrieval_sec.py: 1000 / 150 cost 1.5 points of figures in the top 10 (RESULTS.md, load).
    lexical_budget: int = setting("KB_LEXICAL_CANDIDATE_BUDGET", 2000, minimum=100)
    # retrieval_scale.py: keeps 0.995 of the full-BM25 top 10 (418f532); 0 scores every one.
    lexical_prefilter: int = setting("KB_LEXICAL_PREFILTER", 300, minimum=0)
    # retrieval_kb.py: with the document evidence, kb_dev R@1 0.600 -> 0.629 (aae56d3).
    synonym_weight: float = setting("KB_SEARCH_SYNONYM_WEIGHT", 0.25)


@dataclass(frozen=True)
class Fusion:
    """How the lists' scores become one ranking score (``knowledge.retrieval.fusion``)."""

    # retrieval.py: XQuAD MRR ru calibrated 0.957 vs RRF 0.908 (RESULTS.md 11-30).
    method: str = setting("KB_SEARCH_FUSION", "calibrated", choices=("calibrated", "rrf"))
    # retrieval.py: XQuAD MRR 0.957 ru / 0.967 en at 0.5 (BM25 0.929, dense 0.824; RESULTS.md).
    dense_weight: float = setting("KB_SEARCH_DENSE_WEIGHT", 0.5)
    # Set by hand, no benchmark recorded (the usual RRF constant; RRF is not the default).
    rrf_k: int = setting("KB_RRF_K", 60, minimum=1)
    # retrieval_kb.py: kb_dev calibrated R@1 0.600 -> 0.629 (aae56d3).
    document_weight: float = setting("KB_SEARCH_DOCUMENT_WEIGHT", 0.1)
    # retrieval_sec.py: the right filing in the top 5 0.923 -> 0.969 (0e0729a).
    name_weight: float = setting("KB_SEARCH_NAME_WEIGHT", 0.05)
    # retrieval_sec.py: figure in the top 10 36.1 -> 42.9 % (01430df); 1.5: filing 94.9 %.
    label_weight: float = setting("KB_SEARCH_LABEL_WEIGHT", 1.0)
    # retrieval_sec.py: set with the label weight, figure 36.1 -> 42.9 % (01430df); not swept.
    label_documents: int = setting("KB_SEARCH_LABEL_DOCUMENTS", 8, minimum=1)
    # retrieval_sec.py: set with the label weight, figure 36.1 -> 42.9 % (01430df); not swept.
    label_candidates: int = setting("KB_SEARCH_LABEL_CANDIDATES", 12, minimum=0)
    # The ranking score's share for the chunk's best unit in e5's space (its meaning score,
    # ``Meaning``), for a question that names nothing the knowledge base knows (no name
    # evidence: ``fusion.fused_score``); 0: the second vectors rank nothing (the answer check
    # and the quotes still read them). benchmarks/experiments/first_stage.py (RESULTS.md
    # 12-07), kb_dev + kb_dev2 document R@1 / R@5 and SEC filing@5 / figure@10, offline:
    # 0 0.713 / 0.887, SEC 0.969 / 0.511; 0.1 0.719 / 0.906, SEC unchanged; 0.2 0.719 / 0.906
    # (two questions lost, four gained); ungated 0.1 0.731 / 0.906 but SEC 0.938 / 0.451.
    meaning_weight: float = setting("KB_SEARCH_MEANING_WEIGHT", 0.1)


@dataclass(frozen=True)
class Meaning:
    """How the cosines of e5 (the second vectors: each unit of a chunk) are read. A cosine is
    put on a 0-1 scale between ``floor`` (a sentence unrelated to the question) and ``ceiling``
    (one that answers it): the meaning score the ranking and the answer check read."""

    # meaning.py: XQuAD ru+en, the median best unit of another article (RESULTS.md 12-03).
    floor: float = setting("KB_MEANING_FLOOR", 0.813)
    # meaning.py: XQuAD ru+en, the median best unit of the question's own passage (12-03).
    ceiling: float = setting("KB_MEANING_CEILING", 0.882)
    # meaning.py --kb: one step under the lowest of kb_dev's answerable questions (0.855) on
    # the demo knowledge base; refuses 52 % of the unanswerable questions that pass the
    # search's minimum score (XQuAD's equal error: 0.8375; RESULTS.md 12-03). The answer check
    # refuses when no unit of the best sources reaches it (0: off).
    refuse_below: float = setting("KB_MEANING_REFUSE_BELOW", 0.85)


@dataclass(frozen=True)
class Prf:
    """Query expansion from the first results (``knowledge.retrieval.prf``), off by default."""

    # retrieval.py: with 2, XQuAD MRR 0.955 -> 0.943 ru, 0.968 -> 0.956 en: off (RESULTS.md 12-01).
    documents: int = setting("KB_SEARCH_PRF_DOCS", 0, minimum=0, maximum=10)
    # retrieval_kb.py: 10 words at 0.25, kb_dev final R@1 0.629 -> 0.671 (d58fba9).
    terms: int = setting("KB_SEARCH_PRF_TERMS", 10, minimum=1, maximum=50)
    # retrieval_kb.py: 10 words at 0.25, kb_dev final R@1 0.629 -> 0.671 (d58fba9).
    weight: float = setting("KB_SEARCH_PRF_WEIGHT", 0.25)
    # Set by hand, no benchmark recorded (keeps XQuAD's word-for-word questions out; d58fba9).
    below: float = setting("KB_SEARCH_PRF_BELOW", 0.3)


@dataclass(frozen=True)
class Hits:
    """What a search returns (``fusion.select``), from which source tier."""

    # retrieval_kb.py: 8 instead of 6, kb_dev final R@5 0.771 -> 0.800 (9ebac56).
    k: int = setting("KB_SEARCH_RESULTS", 8, minimum=1, maximum=50)
    # retrieval_sec.py: with the spread, figure in the top 10 42.9 -> 48.1 % (3bc8809).
    per_document: int = setting("KB_SEARCH_PER_DOCUMENT", 6, minimum=1)
    # retrieval_sec.py: with the cap, figure in the top 10 42.9 -> 48.1 % (3bc8809).
    spread: int = setting("KB_SEARCH_SPREAD", 5, minimum=0, maximum=50)
    # Set by hand, no benchmark recorded (a behaviour: the first source tier with hits; 234aa19).
    cascade: bool = setting("KB_SEARCH_CASCADE", True)


@dataclass(frozen=True)
class Gate:
    """The minimum score: the honest refusal's gate, and the floor of the other hits."""

    # refusal.py: 96.8 % of XQuAD answered, 96.9 % out-of-domain refused (1b7c858).
    min_score: float = setting("KB_SEARCH_MIN_SCORE", 0.19)
    # refusal.py: out-of-domain refused stays >= 95 % (a3734ae; 97.3 / 95.3 %, RESULTS.md 12-01).
    min_score_known: float = setting("KB_SEARCH_MIN_SCORE_KNOWN", 0.16)
    # Set by hand, no benchmark recorded (with the minimum above, a3734ae).
    known_share: float = setting("KB_SEARCH_KNOWN_SHARE", 0.9)
    # retrieval_kb.py: kb_dev final R@5 0.771 -> 0.800; answers.py gold 80.0 -> 82.9 % (9ebac56).
    follower_share: float = setting("KB_SEARCH_FOLLOWER_SHARE", 0.8)


@dataclass(frozen=True)
class Rerank:
    """The cross-encoder's step, when one is configured (``KB_RERANKER``)."""

    # Set by hand, no benchmark recorded (no reranker runs on the benchmark machine).
    candidates: int = setting("KB_RERANK_CANDIDATES", 20, minimum=1)
    # Set by hand, no benchmark recorded (no reranker runs on the benchmark machine).
    min_score: float = setting("KB_RERANK_MIN_SCORE", 0.2)


@dataclass(frozen=True)
class Clarify:
    """When an answer asks back instead (``chat.assess.policy``): documents about different things
    score alike for a short question."""

    # Set by hand, no benchmark recorded (37b902a).
    ratio: float = setting("KB_CLARIFY_RATIO", 0.85)
    # Set by hand, no benchmark recorded (37b902a).
    max_words: int = setting("KB_CLARIFY_MAX_WORDS", 8, minimum=0)
    # Set by hand, no benchmark recorded (37b902a).
    max_similarity: float = setting("KB_CLARIFY_MAX_SIMILARITY", 0.55)


GROUPS = {
    "retrieval": Retrieval,
    "fusion": Fusion,
    "meaning": Meaning,
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
    meaning: Meaning
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
