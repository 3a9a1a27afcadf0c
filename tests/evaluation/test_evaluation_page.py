"""The Evaluation pages in a real browser: two runs, one with a worse setting, compared."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from evaluation.models import EvalRun
from tests.chat.conftest import ingest_small_kb
from tests.conftest import PortalServer, login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QUESTIONS = [
    ("q-verification", "answerable", "Чем верификация отличается от валидации?",
     "obshee/verifikaciya-i-validaciya-verification-and-validation.md"),
    ("q-principles", "answerable", "Какие семь принципов тестирования?",
     "obshee/principy-testirovaniya.md"),
    ("q-severity", "answerable", "Чем серьёзность дефекта отличается от приоритета?",
     "obshee/sereznost-i-prioritet-defekta-severity-and-priority.md"),
    ("q-weather", "out_of_domain", "Какая погода будет завтра в Казани?", ""),
]  # fmt: skip


def write_set(tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {"id": i, "group": g, "question": q, "gold_docs": [d] if d else []},
                ensure_ascii=False,
            )
            + "\n"
            for i, g, q, d in QUESTIONS
        ),
        encoding="utf-8",
    )
    return path


def test_two_runs_compared_show_which_questions_got_worse(tmp_path, alice, page, ranking_weights):
    ingest_small_kb(tmp_path)
    questions = write_set(tmp_path)
    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    call_command("eval", str(questions), "--label", "defaults", **quiet)
    configured = ranking_weights().gate
    # Stricter than any chunk of this small knowledge base scores, whatever else the database
    # holds (other tests' documents change the BM25 statistics).
    ranking_weights(gate={"min_score": 0.99, "min_score_known": 0.99})
    call_command("eval", str(questions), "--label", "strict threshold", **quiet)
    ranking_weights(
        gate={"min_score": configured.min_score, "min_score_known": configured.min_score_known}
    )
    first, second = EvalRun.objects.order_by("pk")
    assert first.metrics["headline"]["answerable.answered"] == 1.0
    assert second.metrics["headline"]["answerable.answered"] == 0.0

    server = PortalServer()
    try:
        login(page, server.url, "alice")
        page.goto(server.url + "/evaluation/")
        rows = page.locator("table.grid tbody tr")
        assert rows.count() == 2
        assert "strict threshold" in rows.first.inner_text()
        screenshot(page, "evaluation-runs")
        page.click("text=Compare A with B")
        page.wait_for_url(lambda url: "/evaluation/compare/" in url)
        worse = page.locator("section#worse")
        assert "3 questions" in worse.locator("h2").inner_text()
        text = worse.inner_text()
        assert "Чем верификация отличается от валидации?" in text
        assert "refused" in text and "answered" in text  # both answers side by side
        assert "SEARCH_MIN_SCORE" in page.locator("main").inner_text().upper()
        assert page.locator("svg.chart").count() == 1
        screenshot(page, "evaluation-compare")

        page.goto(f"{server.url}/evaluation/runs/{second.pk}/?ok=no")
        body = page.locator("main").inner_text()
        assert "q-verification" in body and "q-weather" not in body
        assert "Prompt versions" in body
        screenshot(page, "evaluation-run")
    finally:
        server.stop()
