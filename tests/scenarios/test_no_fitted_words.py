"""No case in the guided analysis's code: no word of a public change description that the demo's
documents never use stands in ``scenarios/`` (its code, comments, docstrings and the words its
regular expressions match), as a lemma or as written. A word the documents use too ("избранное",
"мероприятие") may be an example of what the documents say; a word only a change description
says ("пересобрать", "targetSdk") would be a rule written for that change. The runs of three words of the descriptions are checked over
the whole product by ``tests/knowledge/question/test_one_reading.py``."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import docx
import pytest

from knowledge.text import nlp
from tests.knowledge.question.phrases import WORD, Runs, fitted_runs, normal

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
def _lemma(word: str) -> str:
    return nlp.lemma(word)


@cache
def _corpus_lemmas() -> frozenset[str]:
    """Every word of the demo's documents (the DOCX specifications and their versions, the
    wiki's pages), as lemmas."""
    words: set[str] = set()
    for path in (SHARED / "corpus").rglob("*.docx"):
        document = docx.Document(str(path))
        cells = (c.text for t in document.tables for r in t.rows for c in r.cells)
        words |= _words("\n".join([*(p.text for p in document.paragraphs), *cells]))
    for path in (SHARED / "corpus").rglob("*.md"):
        words |= _words(path.read_text(encoding="utf-8", errors="ignore"))
    return frozenset(_lemma(w) for w in words)


def _case_only_words() -> dict[str, str]:
    """The words of the public change descriptions whose lemma no document uses: form -> lemma."""
    corpus = _corpus_lemmas()
    found = {}
    for path in CASES:
        for line in path.read_text(encoding="utf-8").splitlines():
            for word in _words(json.loads(line)["description"]) if line.strip() else ():
                if _lemma(word) not in corpus:
                    found[word] = _lemma(word)
    return found


def test_the_check_finds_a_case_word_in_text_and_in_a_regular_expression():
    runs = Runs(["свайпом"])
    source = 'SWIPE = re.compile(r"свайп(?:ом|а)")\n# удаление свайпом\n'
    assert fitted_runs(source, runs) == ["свайпом"]


@pytest.mark.skipif(not (SHARED / "corpus").is_dir(), reason="../shared is not beside the checkout")
def test_no_word_only_the_public_changes_use_stands_in_the_analysis():
    case_only = _case_only_words()
    assert case_only  # the descriptions do have words of their own ("пересобрать")
    lemmas, runs = set(case_only.values()), Runs(case_only)
    found = []
    for path in sorted((REPO / "scenarios").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        said = {w for w in _words(source) if _lemma(w) in lemmas}
        found += [f"{path.relative_to(REPO)}: {w}" for w in sorted(said)]
        found += [f"{path.relative_to(REPO)}: {w}" for w in fitted_runs(source, runs)]
    assert not found
