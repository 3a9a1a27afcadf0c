"""Ratings change no ranking, silently or otherwise: nothing in retrieval or answering reads them."""

from __future__ import annotations

import re
from pathlib import Path

from django.urls import reverse

from chat.models import Conversation
from chat.pipeline import answer_now
from knowledge.retrieval.search import search
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


def test_retrieval_and_answering_never_read_ratings():
    """A guard for later changes: the search and the answer pipeline import nothing of ours but
    the questions' clustering and its vector store (``feedback.tagging`` names a refused question by
    its nearest content gap), and those two read no rating either."""
    pattern = re.compile(r"\bfeedback\b(?!\.(?:clustering|gaps)\b)|\bRating\b|\bratings\b")
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("knowledge", "chat")
        for path in (ROOT / folder).rglob("*.py")
        if "migrations" not in path.parts and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
    shared = [ROOT / "feedback" / "clustering.py", ROOT / "feedback" / "gaps.py"]
    assert not [p.name for p in shared if re.search(r"\bRating\b|\bratings\b", p.read_text())]
