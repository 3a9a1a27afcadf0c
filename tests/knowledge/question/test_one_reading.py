"""One reading of a question: ``knowledge.question`` is the only place of the product that
lemmatises or stems, detects language or lists stop words, and no rule of the product is
written from the evaluation sets' questions."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PRODUCT = ["portal", "knowledge", "chat", "feedback", "evaluation", "scenarios", "operations"]
READING = REPO / "knowledge" / "question"
LANGUAGE_TOOLS = {
    "natasha", "pymorphy2", "pymorphy3", "razdel", "navec", "slovnet", "gender_guesser",
    "langid", "py3langid", "nltk", "snowballstemmer", "simplemma", "spacy", "stanza",
}  # fmt: skip
TOOL_FUNCTIONS = re.compile(r"stem|lemma|detect_language|language_of|stop_?words", re.I)
WORD_LISTS = re.compile(r"STOP|GENERIC|FILLER|QUESTION_WORDS|FUNCTION_WORDS")
EVAL = REPO.parent / "shared" / "eval"


def _modules() -> list[Path]:
    return [
        path
        for app in PRODUCT
        for path in (REPO / app).rglob("*.py")
        if READING not in path.parents and "migrations" not in path.parts
    ]


def _reading_imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "knowledge.question"
        ):
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def _delegates(function: ast.FunctionDef, allowed: set[str]) -> bool:
    """A one-line function that returns what something imported from the reading gives."""
    body = [n for n in function.body if not isinstance(n, ast.Expr)]  # docstrings aside
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return False
    calls = [n.func for n in ast.walk(body[0]) if isinstance(n, ast.Call)]
    names = [
        f.id if isinstance(f, ast.Name) else getattr(f.value, "id", "")
        for f in calls
        if isinstance(f, ast.Name | ast.Attribute)
    ]
    return any(name in allowed for name in names)


def test_only_the_reading_imports_the_language_tools():
    found = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            modules = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                modules = [node.module or ""]
            found += [
                f"{path.relative_to(REPO)}: {m}"
                for m in modules
                if m.split(".")[0] in LANGUAGE_TOOLS
            ]
    assert not found


def test_no_module_outside_the_reading_stems_or_detects_language_itself():
    found = []
    for path in _modules():
        tree = ast.parse(path.read_text())
        allowed = _reading_imports(tree)
        for node in ast.walk(tree):
            named = isinstance(node, ast.FunctionDef) and TOOL_FUNCTIONS.search(node.name)
            if named and not _delegates(node, allowed):
                found.append(f"{path.relative_to(REPO)}: {node.name}")
    assert not found


def test_no_module_outside_the_reading_lists_stop_words():
    found = []
    for path in _modules():
        for node in ast.parse(path.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                if isinstance(target, ast.Name) and WORD_LISTS.search(target.id):
                    found.append(f"{path.relative_to(REPO)}: {target.id}")
    assert not found


# The GOST 19/34 document types spelled out: a question names a document by them, as the
# product does ("программа и методика испытаний").
GOST_WORDS = {"программа", "программе", "программы", "методика", "методике", "методики",
              "испытаний", "техническое", "техническом", "задание", "задании", "пояснительная",
              "пояснительной", "записка", "записке", "текст", "и"}  # fmt: skip


def _question_trigrams() -> set[str]:
    trigrams = set()
    for name in ("kb_dev_ru", "kb_dev2_ru"):
        for line in (EVAL / name / "questions.jsonl").read_text().splitlines():
            words = re.findall(r"[а-яёa-z]+", json.loads(line)["question"].casefold())
            trigrams.update(" ".join(words[i : i + 3]) for i in range(len(words) - 2))
    return trigrams


@pytest.mark.skipif(not EVAL.is_dir(), reason="../shared/eval is not beside the checkout")
def test_no_three_words_of_an_evaluation_question_stand_in_the_product():
    """The rules read the grammar, not the questions one could see: no run of three words of a
    kb_dev or kb_dev2 question appears in the code or docstrings of the product."""
    trigrams = _question_trigrams()
    found = []
    for path in _modules() + list(READING.rglob("*.py")):
        words = re.findall(r"[а-яёa-z]+", path.read_text().casefold())
        for i in range(len(words) - 2):
            run = " ".join(words[i : i + 3])
            # Runs of Russian words only: English code says "the version of" for other reasons.
            long = [w for w in run.split() if len(w) >= 4 and w not in GOST_WORDS]
            if run in trigrams and re.search(r"[а-яё]", run) and len(long) >= 2:
                found.append(f"{path.relative_to(REPO)}: {run}")
    assert not found
