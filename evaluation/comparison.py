"""Two runs compared question by question (by case id): which got worse, which better."""

from __future__ import annotations

from dataclasses import dataclass

from evaluation.models import EvalResult, EvalRun


@dataclass(frozen=True)
class Pair:
    case_id: str
    group: str
    question: str
    a: EvalResult | None
    b: EvalResult | None

    @property
    def verdict(self) -> str:
        """worse / better (ok lost or gained), changed (same verdict, another outcome, first
        source or pair), same; only-a / only-b for questions one run lacks."""
        if self.a is None:
            return "only-b"
        if self.b is None:
            return "only-a"
        if self.a.ok != self.b.ok:
            return "better" if self.b.ok else "worse"
        if (self.a.outcome, self.a.gold_rank, self.a.pair) != (
            self.b.outcome,
            self.b.gold_rank,
            self.b.pair,
        ):
            return "changed"
        return "same"


ORDER = ("worse", "better", "changed", "only-a", "only-b")


def compare_runs(a: EvalRun, b: EvalRun) -> dict[str, list[Pair]]:
    """verdict -> the questions with that verdict (``same`` left out), in the first run's order,
    each list sorted by group."""
    first = {r.case_id: r for r in a.results.all()}
    second = {r.case_id: r for r in b.results.all()}
    ids = list(first) + [i for i in second if i not in first]
    found: dict[str, list[Pair]] = {v: [] for v in ORDER}
    for case_id in ids:
        ra, rb = first.get(case_id), second.get(case_id)
        some = ra or rb
        pair = Pair(case_id, some.group, some.question, ra, rb)
        if pair.verdict != "same":
            found[pair.verdict].append(pair)
    return {v: sorted(rows, key=lambda p: p.group) for v, rows in found.items()}
