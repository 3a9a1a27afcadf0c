"""Ratings change no ranking, silently or otherwise: nothing in retrieval or answering reads them."""

from __future__ import annotations

import ast
from pathlib import Path

from django.urls import reverse

from chat.models import Conversation
from chat.pipeline import answer_now
from knowledge.retrieval.hybrid import search
from tests.feedback.conftest import ingest_wiki_pages

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "Чем дефект отличается от ошибки?"


def ranking(question: str) -> list[tuple[int, float]]:
    result = search(question)
    return [(hit.chunk_id, round(hit.score, 6)) for hit in result.hits]


def test_a_thumbs_down_does_not_change_the_search_results(client, bob, wiki):
    ingest_wiki_pages(
        wiki, ["obshee/defekty-i-oshibki.md", "obshee/biznes-logika-business-logic.md"]
    )
    before = ranking(QUESTION)
    assert before
    message = answer_now(Conversation.objects.create(user=bob), QUESTION, user=bob, llm=None)
    used = list(message.sources.values_list("chunk_id", flat=True))
    assert used and set(used) <= {chunk for chunk, _ in before}
    client.force_login(bob)
    for _ in range(3):
        response = client.post(
            reverse("rate", args=[message.pk]),
            {"value": "down", "details": "1", "reasons": ["wrong", "wrong_source"]},
            HTTP_HX_REQUEST="true",
        )
        assert response.status_code == 200
    assert ranking(QUESTION) == before
    again = answer_now(message.conversation, QUESTION, user=bob, llm=None)
    assert list(again.sources.values_list("chunk_id", flat=True)) == used


def _imports_and_names(path: Path) -> tuple[set[str], set[str]]:
    """The modules ``path`` imports and the names its code uses (comments and strings aside)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: set[str] = set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
        elif isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return modules, names


def test_retrieval_and_answering_never_read_ratings():
    """A guard for later changes: the search and the answer pipeline import nothing of the
    feedback app (a layer above them, also enforced by import-linter) and name no rating; a
    finished turn's topics are named by a task queued by name."""
    offenders = []
    for folder in ("knowledge", "chat"):
        for path in (ROOT / folder).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            modules, names = _imports_and_names(path)
            if any(m == "feedback" or m.startswith("feedback.") for m in modules) or (
                names & {"Rating", "ratings"}
            ):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
