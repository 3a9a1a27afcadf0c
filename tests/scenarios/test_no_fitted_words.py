"""No case in the guided analysis's code: no word of a public change description that the demo's
documents never use stands in ``scenarios/`` (its code, comments, docstrings and the words its
regular expressions match), in any of its forms or as written. A word the documents use too ("избранное",
"мероприятие") may be an example of what the documents say; a word only a change description
says ("пересобрать", "targetSdk") would be a rule written for that change. The runs of three words of the descriptions are checked over
the whole product by ``tests/knowledge/question/test_one_reading.py``."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from tests.knowledge.question.phrases import (
    WORD,
    Runs,
    corpus_forms,
    fitted_runs,
    normal,
    unheld,
)

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
CASES = [
    SHARED / "eval" / "scenarios_ru" / "cases.jsonl",
    REPO / "benchmarks" / "scenarios_history" / "cases.jsonl",
]
MIN_LETTERS = 4  # shorter words are prepositions, conjunctions, "API"-like names of anything


def _words(text: str) -> set[str]:
    return {normal(w) for w in WORD.findall(text) if len(w) >= MIN_LETTERS}


@cache
def _case_only_words() -> dict[str, frozenset[str]]:
    """The words of the public change descriptions no document of the demo corpus holds, in
    any of their forms (``phrases.unheld``, as the evaluation questions' are): form -> forms."""
    said: set[str] = set()
    for path in CASES:
        for line in path.read_text(encoding="utf-8").splitlines():
            said |= _words(json.loads(line)["description"]) if line.strip() else set()
    return unheld(sorted(said), corpus_forms(SHARED / "corpus"))


def test_the_check_finds_a_case_word_in_text_and_in_a_regular_expression():
    runs = Runs(["свайпом"])
    source = 'SWIPE = re.compile(r"свайп(?:ом|а)")\n# удаление свайпом\n'
    assert fitted_runs(source, runs) == ["свайпом"]


@pytest.mark.skipif(not (SHARED / "corpus").is_dir(), reason="../shared is not beside the checkout")
def test_no_word_only_the_public_changes_use_stands_in_the_analysis():
    case_only = _case_only_words()
    assert case_only  # the descriptions do have words of their own ("пересобрать")
    forms, runs = set().union(*case_only.values()), Runs(case_only)
    found = []
    for path in sorted((REPO / "scenarios").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        said = _words(source) & forms
        found += [f"{path.relative_to(REPO)}: {w}" for w in sorted(said)]
        found += [f"{path.relative_to(REPO)}: {w}" for w in fitted_runs(source, runs)]
    assert not found
