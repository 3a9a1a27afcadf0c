"""Scenario pages and services through Django's test client: sign-in, ownership, the map without
an LLM, a tracker task key, the coverage page."""

from __future__ import annotations

import pytest
from django.urls import reverse

from scenarios.analysis import AnalysisInputError, answer_question, start_analysis
from scenarios.mindmap import links
from scenarios.models import Analysis
from tests.conftest import ingest_folder
from tests.scenarios.test_analysis_browser import SETTINGS_CHANGE, ingest_specs

pytestmark = pytest.mark.django_db


def _kinds(node: dict) -> list[str]:
    return [node["kind"]] + [k for child in node["children"] for k in _kinds(child)]


def test_every_scenario_page_needs_a_sign_in(client):
    for url in (reverse("scenarios"), reverse("coverage"), reverse("analysis", args=[1])):
        response = client.get(url)
        assert response.status_code == 302 and "/login/" in response["Location"]


def test_an_analysis_is_its_authors_only(client, bob, eve):
    analysis = Analysis.objects.create(user=bob, title="t", description="d")
    client.force_login(eve)
    assert client.get(reverse("analysis", args=[analysis.pk])).status_code == 404
    assert client.post(reverse("analysis_answer", args=[analysis.pk])).status_code == 404
    assert client.get(reverse("analysis_export", args=[analysis.pk, "opml"])).status_code == 404
    client.force_login(bob)
    assert client.get(reverse("analysis", args=[analysis.pk])).status_code == 200


def test_a_low_confidence_branch_is_shown_folded_and_marked(client, bob):
    requirement = {"label": "ТЗ · 4.3 Требования к надежности", "kind": "requirement",
                   "confidence": "low", "prefix": "Low confidence:", "url": "",
                   "note": "rank 3, confidence low", "children": [
                       {"label": "«Запрос повторяется»", "kind": "statement", "url": "",
                        "children": []}]}  # fmt: skip
    folded = {"label": "Less likely", "kind": "group", "branch": "folded", "url": "",
              "confidence": "low", "children": [requirement]}  # fmt: skip
    sure = {"label": "ТЗ · 4.2 Требования к интерфейсу", "kind": "requirement", "url": "",
            "confidence": "high", "children": [
                {"label": "«Кнопка оплаты»", "kind": "statement", "url": "", "children": []}]}  # fmt: skip
    tree = {"label": "Экран оплаты", "kind": "root", "url": "", "children": [
        {"label": "Requirements", "kind": "group", "branch": "requirements", "url": "",
         "children": [sure, folded]}]}  # fmt: skip
    analysis = Analysis.objects.create(
        user=bob, title="t", description="d", tree=tree, status=Analysis.Status.READY
    )
    client.force_login(bob)
    page = client.get(reverse("analysis", args=[analysis.pk])).content.decode()
    branch = page[page.index('data-branch="folded"') :]
    assert branch.index("low confidence") < branch.index("Less likely")  # its badge
    assert '<details class="mm-children">' in branch.split("</details>")[0]  # folded
    assert "«Запрос повторяется»" in branch  # not dropped
    shown = page[page.index("Требования к интерфейсу") :]
    assert '<details class="mm-children" open>' in shown[: shown.index("«Кнопка оплаты»")]


def test_without_an_llm_the_map_is_built_from_the_documents_alone(tmp_path, client, bob):
    documents = ingest_specs(tmp_path)
    client.force_login(bob)
    response = client.post(reverse("scenarios"), {"task": SETTINGS_CHANGE})
    analysis = Analysis.objects.get(user=bob)
    assert response.status_code == 302 and response["Location"] == reverse(
        "analysis", args=[analysis.pk]
    )
    assert 1 <= len(analysis.questions) <= 3
    page = client.get(response["Location"]).content.decode()
    assert page.count('class="tile"') == len(analysis.questions[0]["tiles"])
    # The component tiles are the product's functional areas: sections of the requirements
    # document (the ТЗ), never a test programme's, an explanatory note's or a title section.
    component = next(q for q in analysis.questions if q["key"] == "component")
    assert all(t["value"].startswith(f"{documents['ТЗ'].pk}:") for t in component["tiles"])
    assert not [t for t in component["tiles"] if "Наименование" in t["label"]]
    while analysis.current_question:
        answer_question(analysis, analysis.current_question["tiles"][0]["value"], llm=None)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.READY and analysis.llm_model == ""
    kinds = _kinds(analysis.tree)
    assert "requirement" in kinds and "suggestion" not in kinds
    requirements = [
        n for n in analysis.tree["children"][0]["children"] if n["kind"] == "requirement"
    ]
    assert {n["source"]["document"] for n in requirements} == {documents["ТЗ"].title}
    # The tile chosen is a requirement of the map, said to be chosen.
    chosen = component["tiles"][0]["value"].split(":")[1]
    assert chosen in {n["source"]["section"] for n in requirements}
    found = links(analysis.tree)
    assert any(f"/documents/{documents['ПМИ'].pk}/?version=" in u for u in found)
    assert not any(f"/documents/{documents['ПЗ'].pk}/" in u for u in found)
    page = client.get(reverse("analysis", args=[analysis.pk])).content.decode()
    assert 'class="mm-tree"' in page and "mm-suggestion" not in page
    for branch in ("requirements", "gaps", "knowledge", "code"):
        assert f'data-branch="{branch}"' in page


def test_a_skipped_question_is_recorded_as_skipped(tmp_path, bob):
    ingest_specs(tmp_path)
    analysis = start_analysis(bob, SETTINGS_CHANGE)
    first = analysis.current_question["key"]
    answer_question(analysis, "", llm=None)
    assert analysis.answers[first] == ""
    answer_question(analysis, "not one of the tiles", llm=None)
    assert "not one of the tiles" not in analysis.answers.values()


def test_a_tracker_task_key_starts_from_the_ticket(tmp_path, bob):
    ingest_specs(tmp_path)
    with pytest.raises(AnalysisInputError):
        start_analysis(bob, "HSE-7")  # no tracker source yet
    tickets = tmp_path / "tickets"
    tickets.mkdir()
    (tickets / "HSE-7.md").write_text(
        "# HSE-7: Цветовая тема не сохраняется после перезапуска\n\nResolved 2019-05-10.\n\n"
        "Настройка цветовой темы теперь сохраняется в памяти устройства #RESOLVED\n",
        encoding="utf-8",
    )
    ingest_folder(tickets, "Tickets", kind="tracker")
    with pytest.raises(AnalysisInputError):
        start_analysis(bob, "HSE-8")
    analysis = start_analysis(bob, "hse-7")
    assert analysis.task_key == "HSE-7"
    assert "сохраняется в памяти устройства" in analysis.description
    while analysis.current_question:
        answer_question(analysis, analysis.current_question["tiles"][0]["value"], llm=None)
    tickets_group = next(
        c for c in analysis.tree["children"] if any(n["kind"] == "ticket" for n in c["children"])
    )
    assert tickets_group["children"][0]["label"].startswith("HSE-7:")


def test_the_coverage_page_shows_the_table_uncovered_first(tmp_path, client, bob):
    documents = ingest_specs(tmp_path)
    client.force_login(bob)
    response = client.get(
        reverse("coverage"),
        {"requirements": documents["ТЗ"].pk, "tests": documents["ПМИ"].pk},
    )
    page = response.content.decode()
    assert response.status_code == 200
    rows = [line for line in page.splitlines() if '<tr class="cov-' in line]
    statuses = [r.split('class="cov-')[1].split('"')[0] for r in rows]
    assert "covered" in statuses and "uncovered" in statuses
    assert statuses == sorted(statuses, key=["uncovered", "covered", "not_required"].index)
    assert f'href="/documents/{documents["ПМИ"].pk}/?version=' in page
    # Documents are offered by their role: the explanatory note is neither list's.
    requirements_select = page.split('name="requirements"')[1].split("</select>")[0]
    tests_select = page.split('name="tests"')[1].split("</select>")[0]
    assert documents["ТЗ"].title in requirements_select
    assert documents["ПЗ"].title not in requirements_select + tests_select
    assert documents["ПМИ"].title in tests_select


def test_with_the_llm_down_the_map_is_kept_and_says_no_checks_were_suggested(tmp_path, bob):
    from portal.llm import OpenAICompatibleLLM
    from tests.llm_server import LlmTestServer

    ingest_specs(tmp_path)
    stopped = LlmTestServer().start()
    url = stopped.base_url
    stopped.stop()
    llm = OpenAICompatibleLLM(url, "kb-test", "", timeout=2, connect_timeout=1, max_tokens=200)
    analysis = start_analysis(bob, SETTINGS_CHANGE)
    while analysis.current_question:
        answer_question(analysis, analysis.current_question["tiles"][0]["value"], llm=llm)
    assert analysis.status == Analysis.Status.READY and analysis.llm_model == ""
    kinds = _kinds(analysis.tree)
    assert "requirement" in kinds and "suggestion" not in kinds
    assert analysis.tree.get("notice")  # "no checks were suggested", with the reason
