"""Question sets for ``manage.py eval``: the kb_dev format, the lines ``export_eval`` writes, and
the stored regression set, all read into one shape.

kb_dev (``../shared/eval/kb_dev_ru/questions.jsonl``)::

    {"id", "group": "answerable|trick|out_of_domain|version", "question", "gold_docs": [...],
     "gold_section", "answer", "style"}

export_eval: ``{"id", "question", "expected_behaviour": "answer|refusal|clarification",
"expected_answer", "gold_sources": [{"source", "document", ...}]}``; its behaviours become the
groups ``answerable``, ``refusal`` and ``clarification``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from evaluation.metrics import key_facts
from evaluation.models import RegressionCase

GROUPS = ("answerable", "trick", "out_of_domain", "version", "refusal", "clarification")
BEHAVIOUR_GROUPS = {"answer": "answerable", "refusal": "refusal", "clarification": "clarification"}


class CaseError(ValueError):
    """A question set that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class Case:
    id: str
    question: str
    group: str
    gold: tuple[str, ...] = ()  # documents ("folder/path" or "source/path"); versions' files
    reference: str = ""
    style: str = ""
    section: str = ""
    facts: tuple[str, ...] = ()  # snippets verified in the gold document (the set's notes)
    extra: dict = field(default_factory=dict, compare=False)


def case_from_line(data: dict, *, default_id: str) -> Case:
    """One JSON object of either format as a Case; raises CaseError when it is neither."""
    question = str(data.get("question") or "").strip()
    if not question:
        raise CaseError("no question")
    if "group" in data:
        group = str(data["group"])
        gold = tuple(str(g) for g in data.get("gold_docs") or ())
        reference = str(data.get("answer") or "")
    elif "expected_behaviour" in data:
        group = BEHAVIOUR_GROUPS.get(str(data["expected_behaviour"]), "")
        gold = tuple(
            f"{s.get('source', '')}/{s.get('document', '')}".strip("/")
            for s in data.get("gold_sources") or ()
            if s.get("document")
        )
        reference = str(data.get("expected_answer") or "")
    else:
        raise CaseError('neither "group" (kb_dev) nor "expected_behaviour" (export_eval)')
    if group not in GROUPS:
        raise CaseError(f"unknown group {group!r} (one of {', '.join(GROUPS)})")
    return Case(
        id=str(data.get("id") or default_id),
        question=question,
        group=group,
        gold=gold,
        reference=reference,
        style=str(data.get("style") or ""),
        section=str(data.get("gold_section") or ""),
        facts=tuple(key_facts(str(data.get("notes") or ""))),
    )


def read_files(paths: Iterable[Path]) -> list[Case]:
    """Every case of the files in order; ids made unique across files."""
    cases: list[Case] = []
    seen: set[str] = set()
    for path in paths:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            raise CaseError(f"{path}: no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CaseError(f"{path}: cannot be read ({exc})") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                if not isinstance(data, dict):
                    raise CaseError("not a JSON object")
                case = case_from_line(data, default_id=f"{Path(path).stem}-{number}")
            except (json.JSONDecodeError, CaseError) as exc:
                raise CaseError(f"{path}, line {number}: {exc}") from None
            if case.id in seen:
                case = Case(**{**case.__dict__, "id": f"{case.id}@{Path(path).stem}-{number}"})
            seen.add(case.id)
            cases.append(case)
    return cases


def regression_cases() -> list[Case]:
    """The active cases of the stored regression set, oldest first."""
    return [
        Case(
            id=row.case_id,
            question=row.question,
            group=row.group,
            gold=tuple(row.gold_docs or ()),
            reference=row.expected_answer,
            style=row.origin,
        )
        for row in RegressionCase.objects.filter(active=True).order_by("created_at", "pk")
    ]
