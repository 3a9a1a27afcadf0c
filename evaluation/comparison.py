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
    def hidden(self) -> bool:
        """Either run's answer touches a source the viewer may not read (``with_access``)."""
        return any(getattr(r, "hidden", False) for r in (self.a, self.b))

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


def compare_runs(a: EvalRun, b: EvalRun, *, viewer=None) -> dict[str, list[Pair]]:
    """verdict -> the questions with that verdict (``same`` left out), in the first run's order,
    each list sorted by group; with ``viewer``, each result marked ``hidden`` when it touches a
    source they may not read (the pages show such a pair without its text)."""

    def results(run: EvalRun):
        return run.results.with_access(viewer) if viewer is not None else run.results.all()

    first = {r.case_id: r for r in results(a)}
    second = {r.case_id: r for r in results(b)}
    ids = list(first) + [i for i in second if i not in first]
    found: dict[str, list[Pair]] = {v: [] for v in ORDER}
    for case_id in ids:
        ra, rb = first.get(case_id), second.get(case_id)
        some = ra or rb
        pair = Pair(case_id, some.group, some.question, ra, rb)
        if pair.verdict != "same":
            found[pair.verdict].append(pair)
    return {v: sorted(rows, key=lambda p: p.group) for v, rows in found.items()}
