"""The run's figures and the gate's comparison: pure functions, no database."""

from __future__ import annotations

import json

import pytest

from evaluation import metrics
from evaluation.cases import CaseError, read_files


def test_gold_rank_counts_each_document_once():
    sources = [{"a.md"}, {"a.md"}, {"b.md"}, {"gold.md", "wiki/gold.md"}]
    assert metrics.gold_rank(sources, ["wiki/gold.md"]) == 3
    assert metrics.gold_rank(sources, ["missing.md"]) is None
    assert metrics.gold_rank(sources, []) is None


def test_a_citation_must_point_at_a_source_in_the_context():
    assert metrics.citations_valid("Да [1], и ещё [2].", [1, 2, 3])
    assert not metrics.citations_valid("Да [4].", [1, 2, 3])
    assert metrics.citations_valid("Без ссылок.", [])


def test_version_pair_reads_the_older_and_newer_version_of_a_diff_answer():
    keys = [{"x"}, {"v/a.docx", "a.docx"}, {"v/b.docx", "b.docx"}]
    assert metrics.version_pair("diff", keys, ["v/a.docx", "v/b.docx"]) == "exact"
    assert metrics.version_pair("diff", keys, ["v/b.docx", "v/a.docx"]) == "other"
    assert metrics.version_pair("extractive", keys, ["v/a.docx", "v/b.docx"]) == "none"


def row(group, outcome, **extra):
    return {"group": group, "outcome": outcome, "gold": ["g"], **extra}


def test_summary_gives_shares_per_group_and_flat_headline_figures():
    rows = [
        row("answerable", "answered", gold_rank=1, ok=True),
        row("answerable", "partial", gold_rank=4, ok=False),
        row("answerable", "refused", gold_rank=None, ok=False),
        row("answerable", "answered", gold_rank=None, ok=False, citations_valid=False),
        row("trick", "partial", ok=True),
        row("trick", "answered", ok=False),
        row("out_of_domain", "refused", ok=True),
        row("version", "answered", pair="exact", ok=True),
        row("version", "answered", pair="other", ok=False),
    ]
    summary = metrics.summarize(rows)
    h = summary["headline"]
    assert h["answerable.answered"] == 0.5  # answered fully; the partial one is a false gap
    assert h["answerable.false_gap"] == 0.25
    assert h["answerable.right"] == 0.25
    assert h["answerable.gold_any"] == 0.5
    assert h["answerable.recall@1"] == 0.25
    assert h["answerable.recall@5"] == 0.5
    assert h["trick.refused_or_partial"] == 0.5
    assert h["out_of_domain.refused"] == 1.0
    assert h["version.exact"] == 0.5 and h["version.other"] == 0.5
    assert h["citations.valid"] == pytest.approx(6 / 7, abs=1e-4)  # 7 answers, 1 invalid
    assert summary["groups"]["answerable"]["refused"] == 1
    assert summary["groups"]["answerable"]["shares"]["ok"] == 0.25


def test_a_partial_answer_to_an_answerable_question_is_not_right():
    assert metrics.is_ok("answerable", "answered", gold_rank=2, has_gold=True, pair="")
    assert not metrics.is_ok("answerable", "partial", gold_rank=1, has_gold=True, pair="")
    assert not metrics.is_ok("answerable", "answered", gold_rank=None, has_gold=True, pair="")
    assert metrics.is_ok("trick", "clarified", gold_rank=None, has_gold=True, pair="")


def test_a_version_that_does_not_exist_is_right_only_when_said_so():
    assert metrics.version_pair("none", [], [], said_missing=True) == "missing said"
    assert metrics.version_pair("none", [], [], said_missing=False) == "none"
    assert metrics.version_pair("diff", [{"a"}, {"b"}, {"c"}], []) == "other"
    assert metrics.is_ok(
        "version", "clarified", gold_rank=None, has_gold=False, pair="missing said"
    )


def test_compare_reads_each_figures_direction_and_the_tolerance():
    base = {"answerable.answered": 0.90, "version.other": 0.0, "ok": 0.8}
    worse, better = metrics.compare(
        {"answerable.answered": 0.85, "version.other": 0.1, "ok": 0.82}, base, tolerance=0.03
    )
    assert [c.name for c in worse] == ["answerable.answered", "version.other"]
    assert better == []  # +0.02 is within the tolerance
    worse, better = metrics.compare({"answerable.answered": 0.88}, base, tolerance=0.03)
    assert worse == [] and better == []


def test_both_question_formats_are_read_and_a_bad_line_is_named(tmp_path):
    kb_dev = tmp_path / "dev.jsonl"
    kb_dev.write_text(
        json.dumps({"id": "q1", "group": "trick", "question": "Сколько стоит?", "gold_docs": ["a"]})
        + "\n\n"
        + json.dumps(
            {
                "id": "rating-3",
                "question": "Что такое smoke?",
                "expected_behaviour": "answer",
                "expected_answer": "Дымовое.",
                "gold_sources": [{"source": "QA Bible", "document": "x.md"}],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    cases = read_files([kb_dev])
    assert [(c.id, c.group) for c in cases] == [("q1", "trick"), ("rating-3", "answerable")]
    assert cases[1].gold == ("QA Bible/x.md",) and cases[1].reference == "Дымовое."
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "x", "group": "answerable"}\n{"question": "y"}\n')
    with pytest.raises(CaseError, match="bad.jsonl, line 2"):
        read_files([bad])
    with pytest.raises(CaseError, match="no such file"):
        read_files([tmp_path / "none.jsonl"])


@pytest.mark.django_db
def test_a_missing_version_said_is_stored_with_its_run():
    """kb_dev2 asks about versions that do not exist: the run stored "missing said" (12
    characters) in a field of 10 and stopped at its 197th question."""
    from evaluation.models import EvalResult, EvalRun

    run = EvalRun.objects.create(question_set="versions.jsonl")
    EvalResult.objects.create(
        run=run,
        position=1,
        case_id="v-1",
        group="version",
        question="?",
        outcome="answered",
        pair=metrics.version_pair("none", [], [], said_missing=True),
    )
    assert run.results.get().pair == "missing said"
