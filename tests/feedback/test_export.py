"""Rated answers -> JSON Lines regression set, from the page and from ``manage.py export_eval``."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from feedback.export import expected_behaviour, export_lines, ratings_for_export
from feedback.models import Rating
from tests.feedback.conftest import make_answer, make_document, rate

REFUSAL = "В документах базы знаний нет ответа на этот вопрос."


@pytest.fixture
def rated(bob, wiki):
    """Four rated answers covering the rules of the expected behaviour."""
    handbook = make_document(wiki, "Регламент", label="2024-01-10")
    checklist = make_document(wiki, "Чек-лист")
    good = make_answer(bob, "Что такое дефект?", documents=[handbook, checklist])
    outdated = make_answer(bob, "Какой срок хранения логов?", documents=[handbook])
    refused = make_answer(bob, "Как оформить отпуск?", outcome="refusal", answer=REFUSAL)
    invented = make_answer(bob, "Кто директор?", answer="Иванов [1].", documents=[checklist])
    return {
        "good": rate(good, bob, "up"),
        "outdated": rate(outdated, bob, "down", ["outdated"], "Теперь 90 дней"),
        "refused": rate(refused, bob, "down", ["other"], "Это есть в HR-вики"),
        "invented": rate(invented, bob, "down", ["wrong"]),
    }


def read_lines(text: str) -> list[dict]:
    lines = text.splitlines()
    assert lines and all(line.strip() for line in lines)
    return [json.loads(line) for line in lines]  # every line is one JSON document


def test_exported_lines_are_valid_json_lines_with_the_expected_behaviour(rated):
    cases = {c["question"]: c for c in read_lines("".join(export_lines(ratings_for_export())))}
    assert len(cases) == 4
    good = cases["Что такое дефект?"]
    assert good["expected_behaviour"] == "answer" and good["expected_answer"] is None
    assert [s["title"] for s in good["gold_sources"]] == ["Регламент"]  # the cited one
    assert good["gold_sources"][0] == {
        "source": "QA wiki",
        "document": "Регламент.md",
        "title": "Регламент",
        "version": "2024-01-10",
        "section": "1.1",
        "heading": "Регламент › Раздел 1",
    }
    assert [s["title"] for s in good["observed"]["sources"]] == ["Регламент", "Чек-лист"]
    assert cases["Какой срок хранения логов?"]["expected_behaviour"] == "answer"
    assert cases["Какой срок хранения логов?"]["comment"] == "Теперь 90 дней"
    refused = cases["Как оформить отпуск?"]
    assert (refused["expected_behaviour"], refused["gold_sources"]) == ("answer", [])
    invented = cases["Кто директор?"]
    assert (invented["expected_behaviour"], invented["gold_sources"]) == ("refusal", [])


def test_outdated_points_the_gold_source_at_the_newest_version(rated):
    document = rated["outdated"].message.sources.get().document
    newer = document.versions.create(
        number=2, label="2025-02-01", sha256="b" * 64, file="x", filename="x", status="ready"
    )
    document.current_version = newer
    document.save()
    case = json.loads(next(export_lines(ratings_for_export(ids=[rated["outdated"].pk]))))
    assert case["gold_sources"][0]["version"] == "2025-02-01"
    assert case["observed"]["sources"][0]["version"] == "2024-01-10"


def test_staff_expectations_override_the_derived_behaviour(rated):
    invented = rated["invented"]
    invented.expected_answer = "Директора зовут Петров (приказ 12)."
    invented.save()
    assert expected_behaviour(invented) == "answer"
    invented.expected_behaviour = Rating.Behaviour.CLARIFICATION
    invented.save()
    case = json.loads(next(export_lines(ratings_for_export(ids=[invented.pk]))))
    assert case["expected_behaviour"] == "clarification"
    assert case["expected_answer"] == "Директора зовут Петров (приказ 12)."


def test_the_command_writes_the_chosen_ratings_to_a_file(rated, tmp_path):
    output = tmp_path / "regression.jsonl"
    errors = io.StringIO()
    call_command("export_eval", "--rating", "down", "--output", str(output), stderr=errors)
    cases = read_lines(output.read_text(encoding="utf-8"))
    assert sorted(c["question"] for c in cases) == [
        "Как оформить отпуск?",
        "Какой срок хранения логов?",
        "Кто директор?",
    ]
    assert "3 regression cases written" in errors.getvalue()
    Rating.objects.filter(pk=rated["good"].pk).update(updated_at="2020-01-01T00:00:00Z")
    out = io.StringIO()
    call_command(
        "export_eval", "--rating", "up", "--since", "2021-01-01", stdout=out, stderr=io.StringIO()
    )
    assert out.getvalue() == ""
    with pytest.raises(CommandError):
        call_command("export_eval", "--since", "yesterday")


def test_the_page_exports_the_ticked_answers_as_a_download(client, alice, rated):
    client.force_login(alice)
    chosen = [rated["good"].pk, rated["invented"].pk]
    response = client.post(reverse("feedback_export"), {"rating": [str(pk) for pk in chosen]})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-ndjson")
    assert response["Content-Disposition"].startswith('attachment; filename="regression-set-')
    cases = read_lines(response.content.decode())
    assert sorted(c["id"] for c in cases) == sorted(f"rating-{pk}" for pk in chosen)


def test_the_page_exports_every_rating_of_the_period(client, alice, rated):
    client.force_login(alice)
    response = client.post(reverse("feedback_export"), {"scope": "period"})
    assert len(read_lines(response.content.decode())) == 4
    nothing = client.post(reverse("feedback_export"), {"scope": "selected"})
    assert nothing.status_code == 302  # back to the page with a message


def test_staff_write_the_expected_answer_in_the_admin(client, alice, rated):
    invented = rated["invented"]
    url = reverse("admin:feedback_rating_change", args=[invented.pk])
    client.force_login(alice)
    assert client.get(url).status_code == 200
    response = client.post(
        url, {"expected_behaviour": "answer", "expected_answer": "Петров, приказ 12."}
    )
    assert response.status_code == 302
    invented.refresh_from_db()
    assert invented.expected_answer == "Петров, приказ 12."
    assert invented.value == "down" and invented.reasons == ["wrong"]  # the user's verdict stays
    case = json.loads(next(export_lines(ratings_for_export(ids=[invented.pk]))))
    assert (case["expected_behaviour"], case["expected_answer"]) == ("answer", "Петров, приказ 12.")
