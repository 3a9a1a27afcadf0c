"""``manage.py coverage`` on the demo knowledge base: the ТЗ's requirements against the ПМИ.

Database tests on the session's demo knowledge base (``demo_kb``), which only non-transactional
tests can see. The expectations were checked by hand against the two documents (see the README's
"Scenarios" section for the figures).
"""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import CommandError, call_command

from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.django_db

TZ = "ТЗ-Шакруа-Максим-БПИ182"
PMI = "Программа и методика испытаний"
# Every section of the ТЗ's requirements part (4 "Требования к программе", 5 "Требования к
# программной документации") that has a body (4.1, 4.3, 4.6 and 4.8 hold only subsections), and
# the sections outside it stating requirements by their form: the functional and operational
# purpose (3.1, 3.2) and the acceptance conditions (8.2). The introduction, the basis, the
# economics, the stages and the kinds of tests (1, 2, 6, 7, 8.1) state none.
REQUIREMENT_SECTIONS = {
    "3.1", "3.2", "4.1.1", "4.1.2", "4.1.3", "4.2", "4.3.1", "4.3.2", "4.4", "4.6.1", "4.6.2",
    "4.6.3", "4.7", "4.8.1", "4.9", "5.1", "5.2", "8.2",
}  # fmt: skip


def _coverage(*args: str, **options) -> str:
    out, err = io.StringIO(), io.StringIO()
    call_command("coverage", *args, stdout=out, stderr=err, **options)
    return out.getvalue()


@pytest.fixture(scope="module")
def coverage_json(django_db_blocker, demo_kb) -> dict:
    with django_db_blocker.unblock():
        text = _coverage(TZ, against=PMI, json=True)
    # Kept beside the screenshots: the figures in the README come from this file.
    (ARTIFACTS / "coverage-tz-pmi.json").parent.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "coverage-tz-pmi.json").write_text(text, encoding="utf-8")
    return json.loads(text)


def test_every_requirement_section_is_listed_with_its_covering_sections_or_none(coverage_json):
    rows = coverage_json["requirements"]
    assert {r["section"] for r in rows} == REQUIREMENT_SECTIONS
    for row in rows:
        assert row["status"] in ("covered", "uncovered", "not_required")
        assert bool(row["covered_by"]) == (row["status"] == "covered"), row
        assert f"/documents/{coverage_json['requirements_document']['document_id']}/" in row["url"]
        assert f"version={coverage_json['requirements_document']['version_id']}" in row["url"]
    statuses = [r["status"] for r in rows]
    assert statuses == sorted(statuses, key=["uncovered", "covered", "not_required"].index)
    summary = coverage_json["summary"]
    assert summary["requirements"] == len(rows)
    assert summary["covered"] == statuses.count("covered") > 0
    assert summary["uncovered"] == statuses.count("uncovered") > 0
    assert coverage_json["tests_document"]["title"] == PMI


def test_the_rows_checked_by_hand(coverage_json):
    rows = {r["id"]: r for r in coverage_json["requirements"]}

    def covering(requirement: str) -> set[str]:
        return {c["section"] for c in rows[requirement]["covered_by"]}

    # ТЗ 4.2 "Требования к интерфейсу": ПМИ 6.2 "Испытание выполнения требований к интерфейсу".
    assert "6.2" in covering("4.2-1")
    assert "heading" in rows["4.2-1"]["covered_by"][0]["reasons"]
    # ТЗ 5.1, the documents to deliver: ПМИ 6.1 checks the programme documentation.
    assert covering("5.1-2") == {"6.1"}
    # ТЗ 4.3.1 (reliability), 4.4 (hardware) and 4.1.1's hourly update: no method of the ПМИ.
    assert rows["4.3.1-1"]["status"] == "uncovered"
    assert rows["4.4-1"]["status"] == "uncovered"
    assert rows["4.1.1-4"]["status"] == "uncovered"
    assert "раз в час" in rows["4.1.1-4"]["text"]
    # ТЗ 4.7 "Требования к маркировке и упаковке": "Не предъявляются".
    assert rows["4.7"]["status"] == "not_required"


def test_plain_output_lists_the_rows_and_ends_with_the_figures(coverage_json, demo_kb):
    text = _coverage(TZ, against=PMI)
    lines = text.splitlines()
    assert lines[0].startswith(f"{TZ} (")
    assert any(line.split()[:2] == ["-", "4.1.1-4"] for line in lines)
    assert any(line.split()[:2] == ["+", "4.2-1"] for line in lines)
    summary = coverage_json["summary"]
    figures = [int(n) for n in re.findall(r"\d+", lines[-1])]
    assert figures == [
        summary["requirements"],
        summary["covered"],
        summary["uncovered"],
        summary["not_required"],
    ]


def test_an_unknown_document_is_said_in_plain_words(demo_kb):
    # (in the interface's language: the words are not asserted, the title quoted back is)
    with pytest.raises(CommandError, match="«?“?Нет такого документа”?»?") as raised:
        _coverage("Нет такого документа", against=PMI)
    assert "Traceback" not in str(raised.value)
