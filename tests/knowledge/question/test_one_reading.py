"""One reading of a question: the word tools under it (``knowledge.text``) are the only place of
the product that lemmatises or stems, detects language or lists stop words (the reading,
``knowledge.question``, lists its grammar's classes beside them), and no rule of the product is
written from the evaluation sets' questions."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from knowledge.demo import DEMO_SOURCES
from knowledge.question import read
from knowledge.question.refs import month_number
from knowledge.question.version_words import ORDINALS
from knowledge.text.matching import ABBREVIATIONS
from tests.knowledge.question.phrases import (
    REGEX_LIKE,
    WORD,
    Runs,
    _string_literals,
    _variants,
    corpus_forms,
    figures,
    fitted_runs,
    normal,
    runs_of,
    same_day,
    unheld,
)

REPO = Path(__file__).resolve().parents[3]
# The guided analysis's second public set, written from the demo's ТЗ/ПМИ history.
HISTORY_CASES = REPO / "benchmarks" / "scenarios_history" / "cases.jsonl"
PRODUCT = ["portal", "knowledge", "chat", "feedback", "evaluation", "scenarios", "operations"]
READING = REPO / "knowledge" / "question"
TEXT = REPO / "knowledge" / "text"
LANGUAGE_TOOLS = {
    "natasha", "pymorphy2", "pymorphy3", "razdel", "navec", "slovnet", "gender_guesser",
    "langid", "py3langid", "nltk", "snowballstemmer", "simplemma", "spacy", "stanza",
}  # fmt: skip
TOOL_FUNCTIONS = re.compile(r"stem|lemma|detect_language|language_of|stop_?words", re.I)
WORD_LISTS = re.compile(r"STOP|GENERIC|FILLER|QUESTION_WORDS|FUNCTION_WORDS")
EVAL = REPO.parent / "shared" / "eval"


def _modules(*but: Path) -> list[Path]:
    """The product's modules outside the word tools (and outside ``but``), migrations aside."""
    return [
        path
        for app in PRODUCT
        for path in (REPO / app).rglob("*.py")
        if not {TEXT, *but} & set(path.parents) and "migrations" not in path.parts
    ]


def _reading_imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            ("knowledge.text", "knowledge.question")
        ):
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def _delegates(function: ast.FunctionDef, allowed: set[str]) -> bool:
    """A one-line function that returns what something imported from the word tools or the
    reading gives."""
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


def test_only_the_word_tools_import_the_language_tools():
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


def test_no_module_outside_the_word_tools_stems_or_detects_language_itself():
    found = []
    for path in _modules():
        tree = ast.parse(path.read_text())
        allowed = _reading_imports(tree)
        for node in ast.walk(tree):
            named = isinstance(node, ast.FunctionDef) and TOOL_FUNCTIONS.search(node.name)
            if named and not _delegates(node, allowed):
                found.append(f"{path.relative_to(REPO)}: {node.name}")
    assert not found


def test_no_module_outside_the_word_tools_and_the_reading_lists_stop_words():
    found = []
    for path in _modules(READING):
        for node in ast.parse(path.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                if isinstance(target, ast.Name) and WORD_LISTS.search(target.id):
                    found.append(f"{path.relative_to(REPO)}: {target.id}")
    assert not found


# The GOST 19/34 document types, spelled out and abbreviated: a question names a document by
# them, as the product does ("программа и методика испытаний", "по ТЗ").
GOST_WORDS = {"программа", "программе", "программы", "методика", "методике", "методики",
              "испытаний", "техническое", "техническом", "задание", "задании", "пояснительная",
              "пояснительной", "записка", "записке", "текст", "и"} | set(ABBREVIATIONS)  # fmt: skip


def _lines(name: str, file: str) -> list[dict]:
    return [json.loads(line) for line in (EVAL / name / file).read_text().splitlines()]


def _marked(text: str) -> list[tuple[str, bool]]:
    """The words of a question, each with whether the reading takes it for a content word (a
    term of the question; a GOST document name is not one)."""
    reading = read(text)
    terms = {term.lemma for term in reading.terms}
    marked = []
    for match in WORD.finditer(text):
        word = normal(match[0])
        token = next((t for t in reading.tokens if t.start <= match.start() < t.stop), None)
        marked.append((word, (token.lemma if token else word) in terms and word not in GOST_WORDS))
    return marked


def _evaluation_runs() -> Runs:
    """Runs of three words of every kb_dev and kb_dev2 question and of every change description
    of the guided analysis's two public sets (scenarios_ru, scenarios_history) that hold two
    Russian words of four letters or more (GOST names aside), and runs of two words of the trick and out-of-domain questions that hold a content word (both
    words content in a run of Latin letters: a comment says "the best" for other reasons);
    runs inside the demo's source names ("GitHub Terms of Service") are the corpus's names."""
    kb = [q for name in ("kb_dev_ru", "kb_dev2_ru") for q in _lines(name, "questions.jsonl")]
    texts = [q["question"] for q in kb]
    texts += [case["description"] for case in _lines("scenarios_ru", "cases.jsonl")]
    texts += [json.loads(line)["description"] for line in HISTORY_CASES.read_text().splitlines()]
    three = set()
    for text in texts:
        for run in runs_of([normal(w) for w in WORD.findall(text)], 3):
            long = [w for w in run.split() if len(w) >= 4 and w not in GOST_WORDS]
            if re.search(r"[а-я]", run) and len(long) >= 2:
                three.add(run)
    names = [" ".join(normal(w) for w in WORD.findall(s.name)) for s in DEMO_SOURCES]
    two = set()
    for question in (q["question"] for q in kb if q["group"] in ("trick", "out_of_domain")):
        marked = _marked(question)
        for (first, a), (second, b) in zip(marked, marked[1:], strict=False):
            run = f"{first} {second}"
            content = (a or b) if re.search(r"[а-я]", run) else (a and b)
            if content and not any(run in name for name in names):
                two.add(run)
    return Runs(two | three)


def test_the_run_finder_reads_text_and_regular_expressions():
    runs = Runs(["сколько стоит", "первую версию", "когда вышел релиз"])
    source = """
PRICE = re.compile(r"\\bсколько\\s+(?:сто[ия]т|будет)")
# когда вышел релиз
FIRST = re.compile(r"(?:перв\\w*|втор\\w*)\\s+верси[яию]")
PLAIN = re.compile(r"сколько\\s+\\w+")
"""
    assert fitted_runs(source, runs) == ["когда вышел релиз", "первую версию", "сколько стоит"]


@pytest.mark.skipif(not EVAL.is_dir(), reason="../shared/eval is not beside the checkout")
def test_no_run_of_an_evaluation_question_stands_in_the_product():
    """The rules read the grammar, not the questions one could see: no run of words of an
    evaluation question (``_evaluation_runs``) stands in the code, comments, docstrings or
    regular expressions of the product."""
    runs = _evaluation_runs()
    found = [
        f"{path.relative_to(REPO)}: {run}"
        for path in _modules() + list(TEXT.rglob("*.py"))
        for run in fitted_runs(path.read_text(), runs)
    ]
    assert not found


@pytest.mark.skipif(not EVAL.is_dir(), reason="../shared/eval is not beside the checkout")
def test_no_commit_id_or_date_of_an_evaluation_question_stands_in_the_product():
    """Examples of version references are made up: none names a commit or a day an
    evaluation question names."""
    questions = [
        q["question"] for n in ("kb_dev_ru", "kb_dev2_ru") for q in _lines(n, "questions.jsonl")
    ]
    shas, dates = figures("\n".join(questions))
    found = []
    for path in _modules() + list(TEXT.rglob("*.py")):
        own_shas, own_dates = figures(path.read_text())
        found += [f"{path.relative_to(REPO)}: {sha}" for sha in sorted(own_shas & shas)]
        found += [
            f"{path.relative_to(REPO)}: {day}"
            for day in sorted(own_dates, key=str)
            if any(same_day(day, asked) for asked in dates)
        ]
    assert not found


CORPUS = REPO.parent / "shared" / "corpus"
# Words of the grammar of asking that a question may use and no document does: month names
# (dates: knowledge.question.refs), a person asked by name ("как зовут"), the GOST document
# types' colloquial names (matching.ABBREVIATIONS), the ordinals of the version grammar
# (version_words.ORDINALS: "восьмая версия"). Each is a class with a source, not a question's
# word.
GRAMMAR_LEMMAS = {"звать", *ABBREVIATIONS, *ORDINALS}


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not beside the checkout")
@pytest.mark.skipif(not EVAL.is_dir(), reason="../shared/eval is not beside the checkout")
def test_no_word_of_an_evaluation_question_that_no_document_uses_stands_in_the_product():
    """A Russian word of four letters or more that an evaluation question uses and no document
    of the corpus does, in any of its forms (``phrases.unheld``), came from the question: none
    stands in the product's code, comments or regular expressions (the grammar's classes
    aside)."""
    kb = [q["question"] for n in ("kb_dev_ru", "kb_dev2_ru") for q in _lines(n, "questions.jsonl")]
    kb += [case["description"] for case in _lines("scenarios_ru", "cases.jsonl")]
    asked = {normal(w) for text in kb for w in WORD.findall(text)}
    russian = [w for w in asked if len(w) >= 4 and re.search("[а-я]", w) and not month_number(w)]
    foreign: set[str] = set()
    for lexeme in unheld(russian, corpus_forms(CORPUS)).values():
        if not lexeme & GRAMMAR_LEMMAS:
            foreign |= lexeme
    found = []
    for path in _modules() + list(TEXT.rglob("*.py")):
        source = path.read_text()
        words = {normal(w) for w in WORD.findall(source)}
        for literal in _string_literals(source):
            if REGEX_LIKE.search(literal):
                words.update(w for text in _variants(literal) for w in text.split())
        found += [f"{path.relative_to(REPO)}: {w}" for w in sorted(words & foreign)]
    assert not found
