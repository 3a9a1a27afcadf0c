"""``manage.py eval``: runs stored with their figures, the judge, the regression set, the gate.

The gate test is the one ``./kb test`` (and so CI) runs on the public dev set against the
committed baseline: a change that loses answers fails the suite.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from chat.models import Conversation
from chat.pipeline import answer_now
from evaluation import judge as judging
from evaluation.cases import read_files
from evaluation.models import EvalRun, RegressionCase
from evaluation.runner import run_cases
from feedback.services import rate_answer
from portal.llm import get_llm

pytestmark = pytest.mark.django_db  # the demo knowledge base lives in the test database

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT.parent / "shared" / "eval" / "kb_dev_ru" / "questions.jsonl"
BASELINE = ROOT / "evaluation" / "baselines" / "kb_dev_ru.json"


def run_eval(*args: str) -> dict:
    out = io.StringIO()
    call_command("eval", *args, "--json", stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue())


def subset(tmp_path: Path, ids: list[str]) -> Path:
    lines = [line for line in DEV.read_text().splitlines() if json.loads(line)["id"] in ids]
    path = tmp_path / "subset.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_gate_passes_on_the_defaults_against_the_committed_baseline(demo_kb):
    data = run_eval(str(DEV), "--baseline", str(BASELINE), "--fail-on-worse", "--label", "gate")
    assert data["baseline"]["worse"] == [], data["baseline"]
    run = EvalRun.objects.get(pk=data["run"])
    assert run.status == "done" and run.results.count() == 122 == run.question_count
    groups = data["metrics"]["groups"]
    assert {g: groups[g]["n"] for g in groups} == {
        "answerable": 70,
        "trick": 25,
        "out_of_domain": 15,
        "version": 12,
    }
    assert data["config"]["embedder"] and data["config"]["prompts"]["answer"].startswith("answer-")
    assert data["config"]["search"]["search_min_score"] == pytest.approx(0.19)
    # Each result is linked to its journal entry, and its sources are kept.
    result = run.results.filter(group="answerable", ok=True).first()
    assert result.message_id and result.sources and result.gold_rank >= 1


def test_the_gate_fails_on_a_deliberately_worse_setting(demo_kb, ranking_weights):
    ranking_weights(gate={"min_score": 0.45, "min_score_known": 0.45})
    with pytest.raises(CommandError, match=r"worse than .*answerable\.answered"):
        run_eval(str(DEV), "--baseline", str(BASELINE), "--fail-on-worse")
    run = EvalRun.objects.latest("pk")
    assert run.config["search"]["search_min_score"] == 0.45  # the run is kept all the same
    assert run.metrics["headline"]["answerable.answered"] < 0.9


def test_a_run_without_a_gate_only_reports_and_a_bad_baseline_is_named(demo_kb, tmp_path):
    path = subset(tmp_path, ["dev-ans-049", "dev-ood-001"])
    data = run_eval(str(path))
    assert data["baseline"] is None and data["metrics"]["questions"] == 2
    with pytest.raises(CommandError, match="no such file"):
        run_eval(str(path), "--baseline", str(tmp_path / "none.json"))
    with pytest.raises(CommandError, match="needs --baseline"):
        run_eval(str(path), "--fail-on-worse")
    with pytest.raises(CommandError, match="KB_JUDGE_BASE_URL"):
        run_eval(str(path), "--judge")


@pytest.fixture
def served_llm(llm_server, settings):
    """The test LLM server as the answering model and as the judge."""
    settings.LLM_BASE_URL = settings.JUDGE_BASE_URL = llm_server.base_url
    settings.LLM_MODEL, settings.JUDGE_MODEL = "kb-test", "kb-judge"
    get_llm.cache_clear()
    yield llm_server
    get_llm.cache_clear()


def test_with_an_llm_and_a_judge_the_grades_and_prompt_version_are_stored(
    demo_kb, served_llm, tmp_path, client, alice
):
    path = subset(tmp_path, ["dev-ans-049", "dev-ans-056", "dev-ans-057", "dev-ood-001"])
    data = run_eval(str(path), "--judge", "--label", "judged")
    run = EvalRun.objects.get(pk=data["run"])
    assert run.judge_model == "kb-judge" and run.judge_prompt_version == judging.PROMPT_VERSION
    assert data["judge"] == {"model": "kb-judge", "prompt_version": judging.PROMPT_VERSION}
    assert run.config["llm"] == "kb-test"
    graded = [r for r in run.results.all() if r.judge]
    assert graded, [(r.case_id, r.outcome) for r in run.results.all()]
    assert all(r.judge["grade"] in judging.GRADES and r.judge["reason"] for r in graded)
    # What the user read is graded: the LLM's answer, or the quotes that replaced one its
    # sources do not hold (chat.assess.grounding), with the check's verdict beside the grade.
    assert any(r.mode == "llm" for r in graded)
    assert all(r.mode in ("llm", "extractive") and "grounded" in r.judge for r in graded)
    # Refused questions are not graded; the judge saw the reference and the fenced sources.
    assert not run.results.get(case_id="dev-ood-001").judge
    judged = [r for r in served_llm.requests if "grader" in json.dumps(r.body)]
    assert len(judged) == len(graded)
    assert "REFERENCE:" in judged[0].messages[1]["content"]
    assert run.metrics["judged"] == len(graded) and "judge.correct" in run.metrics["headline"]
    assert all("search_ms" in r.timings for r in run.results.all())
    client.force_login(alice)
    page = client.get(f"/evaluation/runs/{run.pk}/").content.decode()
    assert judging.PROMPT_VERSION in page and "kb-judge" in page
    assert run.config["prompts"]["answer"] in page


def test_a_judge_reply_that_is_not_the_asked_json_is_kept_as_unreadable(
    demo_kb, served_llm, tmp_path
):
    served_llm.script("Looks fine to me!", kind="judge")
    path = subset(tmp_path, ["dev-ans-044"])
    data = run_eval(str(path), "--judge")
    result = EvalRun.objects.get(pk=data["run"]).results.get()
    assert result.judge["grade"] == "unreadable" and "Looks fine" in result.judge["reason"]
    assert "judge.correct" not in data["metrics"]["headline"]


def test_a_thumbs_down_with_an_expected_answer_becomes_a_regression_case(demo_kb, bob):
    conversation = Conversation.objects.create(user=bob)
    message = answer_now(conversation, "Что такое тест-кейс?", user=bob, llm=None)
    rating = rate_answer(message, bob, "down", reasons=["incomplete"])
    assert not RegressionCase.objects.exists()  # no expected answer yet
    rating.expected_answer = "Тест-кейс — набор шагов, условий и ожидаемого результата."
    rating.save()  # as the rating's admin form saves it
    case = RegressionCase.objects.get(rating=rating)
    assert case.active and case.group == "answerable" and case.origin == "rating"
    assert case.gold_docs and all(g.startswith("QA Bible/") for g in case.gold_docs)

    data = run_eval("--set", "regression")
    run = EvalRun.objects.get(pk=data["run"])
    result = run.results.get(case_id=f"regression-{case.pk}")
    assert result.question == "Что такое тест-кейс?" and result.reference == case.expected_answer
    assert result.gold_rank is not None  # the gold "source/path" keys match the documents

    rate_answer(message, bob, "up")  # a change of mind takes the case out of the set
    case.refresh_from_db()
    assert not case.active
    with pytest.raises(CommandError, match="empty"):
        run_eval("--set", "regression")


def test_staff_add_a_journal_entry_to_the_regression_set(demo_kb, client, alice, bob):
    conversation = Conversation.objects.create(user=bob)
    message = answer_now(conversation, "Сколько стоит лицензия TestRail?", user=bob, llm=None)
    url = f"/evaluation/from-message/{message.pk}/"
    client.force_login(bob)
    assert client.post(url, {"behaviour": "refusal"}).status_code == 403
    client.force_login(alice)
    response = client.post(url, {"behaviour": "refusal"})
    assert response.status_code == 302
    case = RegressionCase.objects.get(message=message)
    assert case.group == "refusal" and case.origin == "journal" and case.created_by == alice
    client.post(url, {"behaviour": "refusal"})  # twice: the same case
    assert RegressionCase.objects.filter(message=message).count() == 1
    assert "Add to regression set" in client.get(f"/journal/{message.pk}/").content.decode()
    page = client.get("/evaluation/cases/").content.decode()
    assert "Сколько стоит лицензия TestRail?" in page and "Refusal expected" in page


def test_an_interrupted_run_keeps_what_finished(demo_kb, bob, tmp_path):
    cases = read_files([subset(tmp_path, ["dev-ans-049", "dev-ans-056", "dev-ood-001"])])
    seen = []

    def stop_after_two(result) -> None:
        seen.append(result)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_cases(cases, user=bob, question_set="subset", llm=None, progress=stop_after_two)
    run = EvalRun.objects.latest("pk")
    assert run.status == "interrupted" and run.question_count == 3
    assert run.results.count() == 2 and run.metrics["questions"] == 2
