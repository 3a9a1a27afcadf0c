"""What a document is for testing, read from its source, title page, title and structure
(``knowledge.roles``; pure functions, the demo's real documents parsed in the test)."""

from __future__ import annotations

import pytest

from knowledge.parsing.registry import parse_document
from knowledge.roles import Role, named_type, opening, read_role
from tests.conftest import CORPUS

SPECS = CORPUS / "specs_hse_app_ru"


def _role_of(name: str, source_kind: str = "specs") -> str:
    parsed = parse_document((SPECS / name).read_bytes(), name)
    return read_role(
        title=parsed.title or name,
        source_kind=source_kind,
        blocks=parsed.to_dict()["blocks"],
        fmt=parsed.metadata.get("format", ""),
    )


@pytest.mark.parametrize(
    ("name", "role"),
    [
        ("ТЗ-Шакруа-Максим-БПИ182.docx", Role.REQUIREMENTS),  # "ТЗ" in the title, the title page
        ("Программа и методика испытаний.docx", Role.TESTS),
        ("Текст программы.docx", Role.CODE),  # ГОСТ 19.401: the program's listing
        ("Пояснительная записка.docx", Role.OTHER),  # an explanatory note specifies nothing
    ],
)
def test_a_gost_document_is_known_by_the_type_its_title_page_names(name, role):
    assert _role_of(name) == role


def test_the_type_named_first_on_a_title_page_wins():
    page = [
        {"kind": "text", "text": "ПРИЛОЖЕНИЕ УЧЁТА ПАРКОВОК"},
        {"kind": "text", "text": "Программа и методика испытаний"},
        {"kind": "text", "text": "Согласно техническому заданию RU.123"},
        {"kind": "heading", "text": "АННОТАЦИЯ"},
        {"kind": "text", "text": "Техническое задание описывает ..."},
    ]
    assert read_role(title="parking-tests", source_kind="uploads", blocks=page) == Role.TESTS
    # The title page ends at the annotation or the contents: what follows is not read.
    assert "Техническое задание описывает" not in opening(page)
    assert named_type("RU.17701729 ТЗ 01-1") == Role.REQUIREMENTS  # the abbreviation spelled out


def test_a_wiki_page_about_test_cases_is_still_knowledge():
    # The source's kind says what its documents are: a page teaching how to write a ТЗ or test
    # cases is not the product's ТЗ.
    blocks = [{"kind": "heading", "text": "Тест-кейсы и техническое задание", "level": 1}]
    assert (
        read_role(title="Тест-кейсы и техническое задание", source_kind="wiki", blocks=blocks)
        == Role.KNOWLEDGE
    )
    assert read_role(title="Release checklist", source_kind="checklists") == Role.CHECKLIST


def test_the_files_structure_says_checklist_test_cases_api_or_code():
    checklist = [
        {"kind": "test_case", "text": "| Проверка | Статус |", "meta": {"checklist": True}}
    ]
    assert read_role(title="Регресс 2.4", source_kind="uploads", blocks=checklist) == Role.CHECKLIST
    cases = [{"kind": "test_case", "text": f"| Шаг {n} | Результат |"} for n in range(3)]
    assert read_role(title="Сценарии оплаты", source_kind="uploads", blocks=cases) == Role.TESTS
    api = [{"kind": "heading", "text": "POST /orders — Создать заказ", "level": 2}]
    assert read_role(title="Orders API 1.2", source_kind="uploads", blocks=api, fmt="openapi") == (
        Role.REQUIREMENTS
    )
    code = [{"kind": "text", "text": "\n".join(["int x = 1;"] * 25)}]
    assert read_role(title="listing", source_kind="uploads", blocks=code) == Role.CODE


def test_title_words_say_requirements_and_nothing_says_other():
    assert read_role(title="Требования к экрану оплаты", source_kind="uploads") == (
        Role.REQUIREMENTS
    )
    assert read_role(title="Payment service specification", source_kind="folder") == (
        Role.REQUIREMENTS
    )
    assert read_role(title="Протокол встречи 12 мая", source_kind="uploads") == Role.OTHER
    assert read_role(title="GitHub Terms of Service", source_kind="specs") == Role.OTHER
