"""Deterministic figures of an evaluation run, with no LLM: pure functions of its results.

A result row is a mapping with ``group``, ``outcome`` (answered / partial / refused / clarified
/ error), ``gold_rank`` (rank of the first gold document among the answer's sources, documents
counted once), ``pair`` (version questions: exact / other / none), ``citations_valid`` and,
when judged, ``judge`` ({"grade", "faithful"}).

The headline figures are flat names (``answerable.answered``, ``version.other``...) so that two
runs, or a run and a committed baseline, compare name by name (``compare``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

OUTCOMES = ("answered", "partial", "refused", "clarified", "error")
_CITATION = re.compile(r"\[(\d{1,3})\]")

# name -> +1 when higher is better, -1 when lower is better (the gate reads this).
DIRECTION = {
    "answerable.answered": 1,
    "answerable.right": 1,
    "answerable.false_gap": -1,
    "answerable.gold_any": 1,
    "answerable.gold_cited": 1,
    "answerable.fact_any": 1,
    "answerable.fact_all": 1,
    "answerable.fact_first": 1,
    "answerable.recall@1": 1,
    "answerable.recall@5": 1,
    "trick.refused_or_partial": 1,
    "out_of_domain.refused": 1,
    "refusal.refused": 1,
    "clarification.clarified": 1,
    "version.exact": 1,
    "version.other": -1,
    "citations.valid": 1,
    "ok": 1,
    "judge.correct": 1,
    "judge.faithful": 1,
}


def outcome_of(payload: Mapping) -> str:
    """The outcome of an answer as ``message_json`` gives it, in the run's words."""
    if payload.get("clarification"):
        return "clarified"
    return {
        "refusal": "refused",
        "partial": "partial",
        "clarification": "clarified",
        "error": "error",
    }.get(payload.get("outcome") or "", "answered")


def gold_rank(source_documents: Sequence[Iterable[str]], gold: Iterable[str]) -> int | None:
    """1-based rank of the first source whose document is a gold one, each document counted
    once (a document cited twice takes one rank); None when no source is gold.

    ``source_documents`` holds, per source in order, the keys its document answers to.
    """
    wanted = set(gold)
    if not wanted:
        return None
    seen: list[frozenset[str]] = []
    for keys in source_documents:
        keys = frozenset(keys)
        if keys not in seen:
            seen.append(keys)
        if keys & wanted:
            return seen.index(keys) + 1
    return None


# "Verified: snippets 'A'; 'B' found verbatim ..." in a question's notes (kb_dev, kb_dev2).
_SNIPPETS = re.compile(r"snippets? (.*?) found verbatim", re.DOTALL)
_QUOTED = re.compile(r"'(.+?)'(?=\s*(?:[;,]|$))")
_MARKUP = re.compile(r"[*_`#>]+")
_EMPTY_CELLS = re.compile(r"\|(?:\s*\|)+")
_DASHES = str.maketrans({"\u2013": "-", "\u2014": "-", "\u2212": "-", "\u00a0": " ", "ё": "е"})


def key_facts(notes: str) -> list[str]:
    """The snippets a question's notes say were verified in its gold document: the key facts
    an answer must show (empty when the notes list none)."""
    found = _SNIPPETS.search(notes or "")
    return _QUOTED.findall(found.group(1)) if found else []


def normalised(text: str) -> str:
    """Text compared for a key fact: case, dashes, "ё", Markdown emphasis and heading marks,
    whitespace and empty table cells (a merged cell of a Word table leaves some) do not
    count."""
    text = _MARKUP.sub(" ", (text or "").casefold().translate(_DASHES))
    return " ".join(_EMPTY_CELLS.sub("|", text).split())


def facts_shown(answer: str, facts: Sequence[str]) -> int:
    """How many of ``facts`` the answer's text holds (``normalised`` both)."""
    shown = normalised(answer)
    return sum(normalised(fact) in shown for fact in facts)


# What a reader takes in at a glance: the first characters of an answer below its notice and
# label lines (issue 48: "fact first").
OPENING_CHARS = 400
# A notice or label line: wholly in emphasis ("*Ответ составлен из документов*", "**Поиск только
# по словам.**"); a source's line ("**Title** — section [1]") is not.
_NOTICE_LINE = re.compile(r"\*{1,2}[^*\n]+\*{1,2}")


def opening(answer: str, chars: int = OPENING_CHARS) -> str:
    """The first ``chars`` characters of an answer after its leading notice and label lines."""
    lines = (answer or "").splitlines()
    first = 0
    while first < len(lines) and (
        not lines[first].strip() or _NOTICE_LINE.fullmatch(lines[first].strip())
    ):
        first += 1
    return "\n".join(lines[first:])[:chars]


def fact_first(answer: str, facts: Sequence[str]) -> bool:
    """Whether a key fact stands in the answer's opening (``opening``): what the reader sees
    before scrolling or reading on."""
    head = normalised(opening(answer))
    return any(normalised(fact) in head for fact in facts)


def citations_valid(answer: str, numbers: Iterable[int]) -> bool:
    """Every ``[n]`` of the answer points at a source that was in its context."""
    known = set(numbers)
    return all(int(n) in known for n in _CITATION.findall(answer or ""))


def version_pair(
    mode: str, version_keys: Sequence[Iterable[str]], gold: Sequence[str], *, said_missing=False
) -> str:
    """A version question: "exact" when the answer is the diff of the two versions asked
    (sources 2 and 3 of a diff answer are the older and the newer version), "other" for the
    diff of another pair, "none" when it was not a diff. A question naming a version that does
    not exist (no gold versions) is "missing said" when it was answered so (``said_missing``:
    no diff, the versions that exist offered)."""
    if not gold and mode != "diff":
        return "missing said" if said_missing else "none"
    if mode != "diff" or len(version_keys) < 3:
        return "none"
    old, new = (set(keys) for keys in version_keys[1:3])
    return "exact" if len(gold) == 2 and gold[0] in old and gold[1] in new else "other"


def is_ok(group: str, outcome: str, *, gold_rank: int | None, has_gold: bool, pair: str) -> bool:
    """Did the portal do what the set expects of this group? An answerable question only when
    answered fully with a gold document among the sources (pass the rank among the sources
    the answer cites: what the user reads): a partial answer to it ("not
    stated") is a false gap, not a success; a trick question refused, partial or asked back."""
    if group == "answerable":
        return outcome == "answered" and (gold_rank is not None or not has_gold)
    if group == "trick":
        return outcome in ("refused", "partial", "clarified")
    if group in ("out_of_domain", "refusal"):
        return outcome == "refused"
    if group == "clarification":
        return outcome == "clarified"
    if group == "version":
        return pair in ("exact", "missing said")
    return False


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def summarize(rows: Sequence[Mapping]) -> dict:
    """The run's figures: per group the share of each outcome, and the flat headline names."""
    groups: dict[str, dict] = {}
    for row in rows:
        counts = groups.setdefault(row["group"], {"n": 0, "ok": 0, **dict.fromkeys(OUTCOMES, 0)})
        counts["n"] += 1
        counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
        counts["ok"] += bool(row.get("ok"))
    headline: dict[str, float] = {}
    answerable = [r for r in rows if r["group"] == "answerable"]
    if answerable:
        n = len(answerable)
        with_gold = [r for r in answerable if r.get("gold")]
        headline["answerable.answered"] = _share(
            sum(r["outcome"] == "answered" for r in answerable), n
        )
        headline["answerable.false_gap"] = _share(
            sum(r["outcome"] == "partial" for r in answerable), n
        )
        headline["answerable.right"] = _share(sum(bool(r.get("ok")) for r in answerable), n)
        if with_gold:
            ranks = [r.get("gold_rank") for r in with_gold]
            m = len(with_gold)
            headline["answerable.gold_any"] = _share(sum(r is not None for r in ranks), m)
            headline["answerable.recall@1"] = _share(sum(r == 1 for r in ranks), m)
            headline["answerable.recall@5"] = _share(
                sum(r is not None and r <= 5 for r in ranks), m
            )
            headline["answerable.gold_cited"] = _share(
                sum(bool(r.get("gold_cited")) for r in with_gold), m
            )
        with_facts = [r for r in answerable if r.get("facts")]
        if with_facts:
            # Shown in an answer: a partial answer or a refusal that quotes the fact does not
            # count (issue 48), the reader was told the documents do not hold it.
            m = len(with_facts)
            shown = [
                (r.get("facts_shown") or 0 if r["outcome"] == "answered" else 0, len(r["facts"]))
                for r in with_facts
            ]
            headline["answerable.fact_any"] = _share(sum(s > 0 for s, _ in shown), m)
            headline["answerable.fact_all"] = _share(sum(s == n for s, n in shown), m)
            headline["answerable.fact_first"] = _share(
                sum(bool(r.get("fact_first")) and r["outcome"] == "answered" for r in with_facts),
                m,
            )
    shares = {
        "trick": ("refused_or_partial", ("refused", "partial", "clarified")),
        "out_of_domain": ("refused", ("refused",)),
        "refusal": ("refused", ("refused",)),
        "clarification": ("clarified", ("clarified",)),
    }
    for group, (name, outcomes) in shares.items():
        counts = groups.get(group)
        if counts:
            headline[f"{group}.{name}"] = _share(sum(counts[o] for o in outcomes), counts["n"])
    versions = [r for r in rows if r["group"] == "version"]
    if versions:
        headline["version.exact"] = _share(
            sum(r.get("pair") in ("exact", "missing said") for r in versions), len(versions)
        )
        headline["version.other"] = _share(
            sum(r.get("pair") == "other" for r in versions), len(versions)
        )
    answers = [r for r in rows if r["outcome"] in ("answered", "partial")]
    if answers:
        headline["citations.valid"] = _share(
            sum(bool(r.get("citations_valid", True)) for r in answers), len(answers)
        )
    judged = [r["judge"] for r in rows if (r.get("judge") or {}).get("grade") in GRADES]
    if judged:
        headline["judge.correct"] = _share(
            sum(j["grade"] == "correct" for j in judged), len(judged)
        )
        headline["judge.faithful"] = _share(
            sum(bool(j.get("faithful")) for j in judged), len(judged)
        )
    if rows:
        headline["ok"] = _share(sum(bool(r.get("ok")) for r in rows), len(rows))
    return {
        "questions": len(rows),
        "groups": {g: {**c, "shares": _shares(c)} for g, c in groups.items()},
        "headline": headline,
        "judged": len(judged),
    }


GRADES = ("correct", "partial", "wrong")


def _shares(counts: Mapping) -> dict[str, float]:
    return {o: _share(counts.get(o, 0), counts["n"]) for o in (*OUTCOMES, "ok")}


@dataclass(frozen=True)
class Change:
    name: str
    baseline: float
    current: float

    @property
    def delta(self) -> float:
        return round(self.current - self.baseline, 4)

    def __str__(self) -> str:
        return f"{self.name}: {self.baseline:.3f} -> {self.current:.3f} ({self.delta:+.3f})"


def compare(
    current: Mapping[str, float], baseline: Mapping[str, float], *, tolerance: float = 0.0
) -> tuple[list[Change], list[Change]]:
    """(worse, better): headline figures present in both that moved the wrong way (or the
    right way) by more than ``tolerance`` (an absolute share, 0.02 = two points)."""
    worse: list[Change] = []
    better: list[Change] = []
    for name, direction in DIRECTION.items():
        if name not in current or name not in baseline:
            continue
        change = Change(name, float(baseline[name]), float(current[name]))
        signed = change.delta * direction
        if signed < -tolerance - 1e-9:
            worse.append(change)
        elif signed > tolerance + 1e-9:
            better.append(change)
    return worse, better
