"""``manage.py analyse`` on the demo knowledge base: the guided analysis's map as JSON, from the
documents' roles (the ТЗ's statements, the ПМИ's tests, the wiki's checks, the program text).

Database tests on the session's demo knowledge base (``demo_kb``). The descriptions are written
for these tests (the evaluation set's cases are the benchmark's, ``benchmarks/scenarios.py``).
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from scenarios.exports import walk
from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.django_db

TZ = "ТЗ-Шакруа-Максим-БПИ182"
PMI = "Программа и методика испытаний"
REFRESH = (
    "Сервер: загружать мероприятия с сайта НИУ ВШЭ каждые десять минут, а не раз в час; "
    "если сайт не отвечает, сервер отдаёт клиенту последний загруженный список."
)
LOGIN = (
    "Вход в аккаунт: на экране настроек появляется кнопка «Войти через ЕЛК», после входа "
    "приложение показывает персональные рекомендации."
)
THEME = "Цветовая тема: добавить высококонтрастную тему и запоминать выбор в памяти устройства."
# Sections that state no requirement and check nothing: never a node of the map.
MATTER = ("Наименование", "Обозначение", "ЛИСТ РЕГИСТРАЦИИ", "СОДЕРЖАНИЕ", "Состав программной")


def _analyse(description: str) -> dict:
    out = io.StringIO()
    call_command("analyse", description, json=True, stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def maps(django_db_blocker, demo_kb) -> dict[str, dict]:
    with django_db_blocker.unblock():
        found = {name: _analyse(text) for name, text in
                 (("refresh", REFRESH), ("login", LOGIN), ("theme", THEME))}  # fmt: skip
    (ARTIFACTS / "analyse-demo.json").parent.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "analyse-demo.json").write_text(json.dumps(found, ensure_ascii=False, indent=1))
    return found


def _branch(tree: dict, name: str) -> dict:
    return next(c for c in tree["children"] if c.get("branch") == name)


def _of_kind(node: dict, kind: str) -> list[dict]:
    return [n for _, n in walk(node) if n["kind"] == kind]


def test_the_map_has_its_four_branches_and_no_title_or_boilerplate_node(maps):
    for tree in maps.values():
        branches = [c.get("branch") for c in tree["children"]]
        for name in ("requirements", "gaps", "knowledge", "code"):
            assert name in branches, branches
        titles = [n["source"]["title"] for _, n in walk(tree) if n.get("source")]
        assert not [t for t in titles if t.startswith(MATTER)], titles


def test_requirements_come_from_the_requirements_document_at_the_level_of_its_statements(maps):
    tree = maps["refresh"]
    requirements = _of_kind(_branch(tree, "requirements"), "requirement")
    assert {n["source"]["document"] for n in requirements} == {TZ}
    first = requirements[0]
    assert first["source"]["section"] == "4.1.1"
    quotes = [s["label"] for s in _of_kind(first, "statement")]
    assert any("раз в час" in q for q in quotes), quotes
    assert "час" in first["note"]  # why: the words it shares with the change
    assert f"/documents/{first['source']['document_id']}/?version=" in first["url"]


def test_each_requirement_lists_the_tests_covering_it_and_a_requirement_nobody_tests_is_a_gap(
    maps,
):
    tree = maps["refresh"]
    first = _of_kind(_branch(tree, "requirements"), "requirement")[0]
    tests = _of_kind(first, "test")
    # ПМИ 3.1.1 restates 4.1.1 for checking; no method of ПМИ 6 exercises the hourly update.
    declared = [t for t in tests if t["source"]["section"] == "3.1.1"]
    assert declared and declared[0]["test_kind"] == "declared"
    assert declared[0]["source"]["document"] == PMI
    assert _of_kind(first, "none")
    assert "4.1.1" in tree["gap"]["untested"]
    gaps = [n["source"]["section"] for n in _of_kind(_branch(tree, "gaps"), "gap")]
    assert "4.1.1" in gaps


def test_a_change_nothing_specifies_is_said_to_be_a_gap(maps):
    tree = maps["login"]
    assert tree["gap"]["unspecified"] is True
    branch = _branch(tree, "requirements")
    assert not _of_kind(branch, "requirement")
    assert branch["children"][0]["kind"] == "gap"
    assert all(n["kind"] in ("gap", "context") for n in branch["children"])


def test_a_feature_the_test_programme_knows_leads_to_the_interface_requirement(maps):
    # The ТЗ never names the colour theme; the ПМИ restates the interface requirement with it
    # (3.3) and tests the interface (6.2): the interface requirement is the one touched.
    tree = maps["theme"]
    assert tree["gap"]["unspecified"] is False
    sections = [n["source"]["section"] for n in _of_kind(tree, "requirement")]
    assert sections[0] == "4.2"
    tests = {n["source"]["section"] for n in _of_kind(tree, "test")}
    assert {"6.2", "3.3"} <= tests


def test_the_knowledge_base_and_the_program_text_have_branches_of_their_own(maps):
    tree = maps["theme"]
    pages = _of_kind(_branch(tree, "knowledge"), "wiki")
    assert pages and all(p["source"]["path"].endswith(".md") for p in pages)
    assert any(_of_kind(p, "check") for p in pages)  # their list items quoted as checks
    for name in ("requirements", "gaps"):
        assert not _of_kind(_branch(tree, name), "wiki")
    code = _of_kind(_branch(maps["refresh"], "code"), "code")
    assert code and all(n["source"]["document"] == "Текст программы" for n in code)


def test_plain_output_is_an_outline_and_an_empty_description_is_refused(demo_kb):
    out = io.StringIO()
    call_command("analyse", THEME, stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("Цветовая тема")
    assert any(line.startswith("  - ") for line in lines)
    with pytest.raises(CommandError):
        call_command("analyse", "   ", stdout=io.StringIO())
